package gateway

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"strconv"
	"strings"
	"text/template"

	"github.com/ptkit/ptk"
)

// toolChoice is a request's tool_choice.
type toolChoice struct {
	kind string // "auto", "none", "required" or "named"
	name string // the tool, when named
	// allowed, when not nil, are the only tools that may be called
	// (tool_choice {"type": "allowed_tools", ...}).
	allowed map[string]bool
}

func parseToolChoice(raw json.RawMessage, declared map[string]bool) (toolChoice, *httpError) {
	raw = bytes.TrimSpace(raw)
	c := toolChoice{kind: "auto"}
	if len(raw) == 0 || string(raw) == "null" {
		return c, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none":
			c.kind = s
		case "required", "any":
			if len(declared) == 0 {
				return c, badRequest("tool_choice %s needs tools", strconv.Quote(s))
			}
			c.kind = "required"
		default:
			return c, badRequest("tool_choice must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": …}}, not %s", strconv.Quote(s))
		}
		return c, nil
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools struct {
			Mode  string `json:"mode"`
			Tools []struct {
				Type     string `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		} `json:"allowed_tools"`
	}
	err := json.Unmarshal(raw, &named)
	if err == nil && named.Type == "allowed_tools" {
		var names []string
		for _, t := range named.AllowedTools.Tools {
			names = append(names, t.Function.Name)
		}
		return allowedTools(named.AllowedTools.Mode, names, declared)
	}
	if err != nil || named.Type != "function" || named.Function.Name == "" {
		return c, badRequest("tool_choice must be \"auto\", \"none\", \"required\", {\"type\": \"function\", \"function\": {\"name\": …}} or {\"type\": \"allowed_tools\", …}")
	}
	if !declared[named.Function.Name] {
		return c, badRequest("tool_choice names the function %s, which is not in tools", strconv.Quote(named.Function.Name))
	}
	return toolChoice{kind: "named", name: named.Function.Name}, nil
}

// allowedTools reads tool_choice {"type": "allowed_tools", "allowed_tools":
// {"mode": "auto"|"required", "tools": [...]}}.
func allowedTools(mode string, names []string, declared map[string]bool) (toolChoice, *httpError) {
	c := toolChoice{kind: "auto", allowed: map[string]bool{}}
	switch mode {
	case "auto", "":
	case "required":
		c.kind = "required"
	default:
		return c, badRequest("tool_choice.allowed_tools.mode must be \"auto\" or \"required\", not %s", strconv.Quote(mode))
	}
	for _, name := range names {
		if !declared[name] {
			return c, badRequest("tool_choice.allowed_tools names the function %s, which is not in tools", strconv.Quote(name))
		}
		c.allowed[name] = true
	}
	if len(c.allowed) == 0 {
		return c, badRequest("tool_choice.allowed_tools.tools must name at least one function")
	}
	return c, nil
}

// allows reports whether a call of the tool may be returned.
func (c toolChoice) allows(tool string) bool {
	switch {
	case c.kind == "none":
		return false
	case c.kind == "named":
		return tool == c.name
	case c.allowed != nil:
		return c.allowed[tool]
	}
	return true
}

// offered filters tools to those the model may call now: all of them
// unless the choice names some.
func (c toolChoice) offered(tools []ptk.ToolInfo) []ptk.ToolInfo {
	if c.allowed == nil {
		return tools
	}
	var out []ptk.ToolInfo
	for _, t := range tools {
		if c.allowed[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// offersAll reports whether offered returns every tool.
func (c toolChoice) offersAll() bool { return c.allowed == nil }

// forced reports whether the reply must call a tool.
func (c toolChoice) forced() bool { return c.kind == "required" || c.kind == "named" }

//go:embed prompts.tmpl
var promptsText string

var prompts = template.Must(template.New("prompts.tmpl").Parse(promptsText))

// prompt is one of the instructions of prompts.tmpl.
func prompt(name string, data any) string {
	var b strings.Builder
	if err := prompts.ExecuteTemplate(&b, name, data); err != nil {
		panic(err) // the templates are fixed and tested
	}
	return b.String()
}
