package protocol

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ptkit/ptk"
)

// ParseToolDefs reads tool definitions from JSON: an array (or a single
// object, or {"tools": [...]}) of definitions, each either
// {"name", "description", "parameters"} or OpenAI's
// {"type": "function", "function": {"name", "description", "parameters"}}.
// Anthropic's "input_schema" is read as "parameters". Parameter schemas are
// kept as written; see [NormalizeSchema] for the non-standard types a
// Parser accepts.
func ParseToolDefs(data []byte) ([]ptk.ToolInfo, error) {
	trimmed := strings.TrimSpace(string(data))
	if trimmed == "" {
		return nil, fmt.Errorf("no tool definitions")
	}
	var raw []json.RawMessage
	switch trimmed[0] {
	case '[':
		if err := json.Unmarshal([]byte(trimmed), &raw); err != nil {
			return nil, fmt.Errorf("tool definitions: %w", err)
		}
	case '{':
		var wrapper struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal([]byte(trimmed), &wrapper); err == nil && wrapper.Tools != nil {
			raw = wrapper.Tools
		} else {
			raw = []json.RawMessage{json.RawMessage(trimmed)}
		}
	default:
		return nil, fmt.Errorf("tool definitions must be a JSON array of tools")
	}
	tools := make([]ptk.ToolInfo, 0, len(raw))
	for i, r := range raw {
		var d struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			InputSchema json.RawMessage `json:"input_schema"`
			Function    *struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(r, &d); err != nil {
			return nil, fmt.Errorf("tool %d: %w", i+1, err)
		}
		t := ptk.ToolInfo{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
		if d.Function != nil {
			t = ptk.ToolInfo{Name: d.Function.Name, Description: d.Function.Description, Parameters: d.Function.Parameters}
		}
		if t.Parameters == nil && d.InputSchema != nil {
			t.Parameters = d.InputSchema
		}
		if string(t.Parameters) == "null" {
			t.Parameters = nil
		}
		if t.Name == "" {
			return nil, fmt.Errorf("tool %d has no name", i+1)
		}
		tools = append(tools, t)
	}
	return tools, nil
}
