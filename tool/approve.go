package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/ptkit/ptk"
)

// Verdict is an approver's answer about one call.
type Verdict struct {
	Allow bool
	// Reason says why a call was denied, and how the user can allow it; the
	// model reads it.
	Reason string
}

// Approver decides whether a call to a tool that is not read-only may run.
// The agent asks it for each such call, one at a time, in call order, before
// the call runs; read-only tools run without asking.
type Approver interface {
	Approve(ctx context.Context, call ptk.Call, info ptk.ToolInfo) (Verdict, error)
}

// ApproverFunc makes a function an Approver.
type ApproverFunc func(ctx context.Context, call ptk.Call, info ptk.ToolInfo) (Verdict, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, call ptk.Call, info ptk.ToolInfo) (Verdict, error) {
	return f(ctx, call, info)
}

// The actions of a policy rule.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
)

// Rule is one line of a Policy. A rule matches a call when every condition
// it sets holds.
type Rule struct {
	// Tool is the tool's name, or a pattern of names ("*", "edit_*").
	Tool string `json:"tool"`
	// Action is "allow", "deny" or "ask".
	Action string `json:"action"`
	// Command is a command prefix, matched on whole words against the
	// command the tool declares its call will run ([Subject].Command, as
	// bash does):
	// "go test" matches "go test ./..." but not "go testify". An allow rule
	// matches only a single simple command: "go test; rm -rf ~" is not
	// allowed by it (no ; & | ` $( < > or line breaks). A deny rule
	// matches when any command of a list or pipeline starts with the prefix.
	Command string `json:"command,omitempty"`
	// Path is a glob ("src/**", "*.md") on the path the tool declares its
	// call acts on ([Subject].Path), as a clean path relative to the
	// workspace.
	Path string `json:"path,omitempty"`
}

// Policy allows or denies calls by tool and by what the call acts on: the
// command or path its tool declares ([Subjecter]). The last rule that
// matches a call decides.
type Policy struct {
	Rules []Rule `json:"rules"`
}

// LoadPolicy reads a policy file: {"rules": [{"tool": "bash", "command":
// "go test", "action": "allow"}, ...]}.
func LoadPolicy(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("policy %s: %w", file, err)
	}
	for i, r := range p.Rules {
		if r.Action != Allow && r.Action != Deny && r.Action != Ask {
			return nil, fmt.Errorf("policy %s: rule %d: action must be allow, deny or ask, not %q", file, i+1, r.Action)
		}
		if r.Tool == "" {
			return nil, fmt.Errorf("policy %s: rule %d: no tool (use \"*\" for every tool)", file, i+1)
		}
		if _, err := path.Match(r.Tool, ""); err != nil {
			return nil, fmt.Errorf("policy %s: rule %d: bad tool pattern %q", file, i+1, r.Tool)
		}
		if r.Path != "" && !doublestar.ValidatePattern(r.Path) {
			return nil, fmt.Errorf("policy %s: rule %d: bad path pattern %q", file, i+1, r.Path)
		}
	}
	return &p, nil
}

// Decide returns the action of the last rule that matches a call to t, and
// that rule's number from 1; "" and 0 when none does. Command and path
// conditions match what t declares the call acts on ([SubjectOf], through
// wrappers); a tool that declares nothing matches only rules without them.
func (p *Policy) Decide(t ptk.Tool, call ptk.Call) (action string, rule int) {
	if p == nil {
		return "", 0
	}
	var subject Subject
	if t != nil {
		subject = SubjectOf(t, call.Args)
	}
	for i, r := range p.Rules {
		if ok, _ := path.Match(r.Tool, call.Tool); !ok {
			continue
		}
		if r.Command != "" && (subject.Command == "" || !commandMatches(r.Command, subject.Command, r.Action != Allow)) {
			continue
		}
		if r.Path != "" {
			p := path.Clean(strings.TrimPrefix(strings.ReplaceAll(subject.Path, "\\", "/"), "./"))
			if subject.Path == "" || strings.HasPrefix(p, "../") || p == ".." || path.IsAbs(p) {
				continue
			}
			if ok, _ := doublestar.Match(r.Path, p); !ok {
				continue
			}
		}
		action, rule = r.Action, i+1
	}
	return action, rule
}

// commandMatches reports whether a shell command starts with prefix, on a
// word boundary. With anyPart (deny and ask rules) any command of a list or
// pipeline counts; without it (allow rules) the command must be one simple
// command, so that an allowed prefix cannot carry another command along.
func commandMatches(prefix, command string, anyPart bool) bool {
	prefix = strings.Join(strings.Fields(prefix), " ")
	starts := func(c string) bool {
		c = strings.Join(strings.Fields(c), " ")
		return c == prefix || strings.HasPrefix(c, prefix+" ")
	}
	if !anyPart {
		return !strings.ContainsAny(command, ";&|`<>\n\r") && !strings.Contains(command, "$(") && starts(command)
	}
	for _, part := range strings.FieldsFunc(command, func(r rune) bool {
		return strings.ContainsRune(";&|\n\r()`", r)
	}) {
		if starts(part) {
			return true
		}
	}
	return false
}
