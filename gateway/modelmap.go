package gateway

import (
	"errors"
	"path"
	"strings"
)

// ModelMap renames the models requests ask for, before the gateway
// resolves them: the first rule whose Pattern matches the name gives the
// model served. It is how a client that asks for a name of its own
// (Claude Code's claude-sonnet-4-5, Codex's gpt-5-codex) gets a model the
// gateway serves, said once in the configuration instead of in each
// client.
type ModelMap []ModelRule

// ModelRule is one rule of a ModelMap: Pattern is a model name, or a
// pattern in which '*' stands for any run of characters (and '?' for one),
// as in path.Match.
type ModelRule struct {
	Pattern, Model string
}

// Map returns the model name is renamed to, and whether a rule matched.
func (m ModelMap) Map(name string) (string, bool) {
	for _, r := range m {
		if ok, _ := path.Match(r.Pattern, name); ok || r.Pattern == name {
			return r.Model, true
		}
	}
	return "", false
}

// Targets returns the models the rules rename to.
func (m ModelMap) Targets() []string {
	out := make([]string, 0, len(m))
	for _, r := range m {
		out = append(out, r.Model)
	}
	return out
}

// ParseModelMap reads rules written PATTERN=MODEL, separated by commas:
//
//	claude-*=qwen3:8b,gpt-5*=qwen3-coder:30b
//
// A '/' in a pattern is an ordinary character (model names hold them).
func ParseModelMap(s string) (ModelMap, error) {
	var m ModelMap
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		pat, model, ok := strings.Cut(part, "=")
		pat, model = strings.TrimSpace(pat), strings.TrimSpace(model)
		if !ok || pat == "" || model == "" {
			return nil, errors.New("model map rule " + quote(part) + " is not PATTERN=MODEL (for example claude-*=qwen3:8b)")
		}
		if _, err := path.Match(pat, ""); err != nil {
			return nil, errors.New("model map pattern " + quote(pat) + ": " + err.Error())
		}
		m = append(m, ModelRule{Pattern: pat, Model: model})
	}
	return m, nil
}

func quote(s string) string { return "\"" + s + "\"" }
