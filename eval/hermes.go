package eval

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/protocol"
)

// Hermes is a [protocol.Formatter] that teaches the Hermes/Qwen tool-call
// format many open models are trained on: the tools as JSON inside
// <tools></tools>, each call as {"name": …, "arguments": …} inside
// <tool_call></tool_call>, results inside <tool_response></tool_response>.
// ptk's parser reads these calls as it reads its own. A flattened
// conversation (Transcript, Conversation) is written as PTK writes it.
type Hermes struct{ protocol.PTK }

var _ protocol.Formatter = Hermes{}

// SystemPrompt returns instructions, then the tools and how to call them.
func (h Hermes) SystemPrompt(instructions string, tools []ptk.ToolInfo) string {
	var b strings.Builder
	if s := strings.TrimSpace(instructions); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n")
	b.WriteString("You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n")
	b.WriteString(h.Tools(tools))
	b.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n")
	b.WriteString("<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>\n\n")
	b.WriteString("If none of the functions can be used, answer in plain text without a tool call.")
	return b.String()
}

// Tools writes one line of JSON per tool, in OpenAI's function shape.
func (Hermes) Tools(tools []ptk.ToolInfo) string {
	var lines []string
	for _, t := range tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 || !json.Valid(params) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		fn := struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters"`
		}{t.Name, t.Description, params}
		line, _ := json.Marshal(map[string]any{"type": "function", "function": fn})
		lines = append(lines, string(line))
	}
	return protocol.Neutralize(strings.Join(lines, "\n"))
}

// Calls writes calls as <tool_call> blocks.
func (Hermes) Calls(calls []ptk.Call) string {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteByte('\n')
		}
		args := c.Args
		if len(bytes.TrimSpace(args)) == 0 || !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		line, _ := json.Marshal(struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}{c.Tool, args})
		b.WriteString("<tool_call>\n")
		b.Write(line)
		b.WriteString("\n</tool_call>")
	}
	return b.String()
}

// Results writes each result inside <tool_response></tool_response>.
func (Hermes) Results(results []ptk.Result) string {
	var b strings.Builder
	for i, r := range results {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("<tool_response>\n")
		if r.IsError {
			b.WriteString("Error: ")
		}
		b.WriteString(protocol.Neutralize(strings.ReplaceAll(r.Content, "</tool_response>", "&lt;/tool_response>")))
		b.WriteString("\n</tool_response>")
	}
	return b.String()
}
