package eval

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"strconv"
	"strings"
	"text/template"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/protocol"
)

// Pythonic is a [protocol.Formatter] that asks for calls as a Python list
// of function calls with keyword arguments, [get_weather(city="Paris"),
// math.factorial(number=5)], and nothing else: the format BFCL asks of
// models it evaluates without native function calling (its "prompting"
// mode), and the one Llama 3.2 and later write. The functions are listed as
// JSON. ptk's parser reads these calls as it reads its own. Results and a
// flattened conversation are written as PTK writes them.
type Pythonic struct{ protocol.PTK }

var _ protocol.Formatter = Pythonic{}

//go:embed pythonic.tmpl
var pythonicPrompt string

var pythonicTmpl = template.Must(template.New("pythonic.tmpl").Parse(pythonicPrompt))

// SystemPrompt returns instructions, then how to call the functions, then
// the functions (pythonic.tmpl).
func (p Pythonic) SystemPrompt(instructions string, tools []ptk.ToolInfo) string {
	return render(pythonicTmpl, instructions, p.Tools(tools))
}

// Tools writes the functions as one JSON document per line.
func (Pythonic) Tools(tools []ptk.ToolInfo) string {
	var lines []string
	for _, t := range tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 || !json.Valid(params) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		lines = append(lines, marshalText(struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters"`
		}{t.Name, t.Description, params}))
	}
	return protocol.Neutralize(strings.Join(lines, "\n"))
}

// Calls writes calls as a Python list of calls.
func (Pythonic) Calls(calls []ptk.Call) string {
	if len(calls) == 0 {
		return ""
	}
	parts := make([]string, len(calls))
	for i, c := range calls {
		var args []string
		if v, err := Decode(c.Args); err == nil {
			if d, ok := v.(*Dict); ok {
				for j, k := range d.Keys {
					args = append(args, k+"="+pythonLiteral(d.Vals[j]))
				}
			}
		}
		parts[i] = c.Tool + "(" + strings.Join(args, ", ") + ")"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pythonLiteral writes a decoded JSON value as a Python literal.
func pythonLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pythonLiteral(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *Dict:
		parts := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			parts[i] = strconv.Quote(k) + ": " + pythonLiteral(x.Vals[i])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := EncodeJSON(v)
	return string(b)
}
