package eval

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"strings"
	"text/template"

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

//go:embed hermes.tmpl
var hermesPrompt string

var hermesTmpl = template.Must(template.New("hermes.tmpl").Parse(hermesPrompt))

// SystemPrompt returns instructions, then the tools and how to call them
// (hermes.tmpl).
func (h Hermes) SystemPrompt(instructions string, tools []ptk.ToolInfo) string {
	return render(hermesTmpl, instructions, h.Tools(tools))
}

// render executes a prompt template with the caller's instructions and the
// tools' definitions.
func render(t *template.Template, instructions, tools string) string {
	var b strings.Builder
	// The templates are fixed and their data are strings: they cannot fail.
	_ = t.Execute(&b, struct{ Instructions, Tools string }{strings.TrimSpace(instructions), tools})
	return strings.TrimRight(b.String(), "\n")
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
		lines = append(lines, marshalText(struct {
			Type     string `json:"type"`
			Function any    `json:"function"`
		}{"function", fn}))
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
		b.WriteString("<tool_call>\n")
		b.WriteString(marshalText(struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}{c.Tool, args}))
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

// marshalText is v as one line of JSON, with <, > and & written as they are.
func marshalText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the values are strings and valid JSON: it cannot fail
	return strings.TrimRight(b.String(), "\n")
}
