package eval

import (
	"encoding/json"
	"strings"

	"github.com/ptkit/ptk"
)

// openAPITypes is BFCL's mapping of its type names to JSON Schema's
// (GORILLA_TO_OPENAPI); a name it does not have becomes "string".
var openAPITypes = map[string]string{
	"integer": "integer", "number": "number", "float": "number", "string": "string",
	"boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
	"dict": "object", "object": "object", "tuple": "array", "any": "string",
	"byte": "integer", "short": "integer", "long": "integer", "double": "number",
	"char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
	"Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string",
	"String": "string", "Bigint": "integer",
}

var languageNote = map[string]string{
	"python":     " Note that the provided function is in Python 3 syntax.",
	"java":       " Note that the provided function is in Java 8 SDK syntax.",
	"javascript": " Note that the provided function is in JavaScript syntax.",
}

// Tools returns q's functions as the tools a model is given, as BFCL gives
// them: each description ends with the language note, parameters are in
// JSON Schema (dict is object, float number with "This is a float type
// value." added to its description, tuple array, any string), and in Java
// and JavaScript every parameter is a string holding a literal of its
// declared type, which its description names. With native, dots in names
// are written as underscores (native function calling rejects them), and
// names maps each tool name back to the function's; it is nil otherwise.
func Tools(q *Question, native bool) (tools []ptk.ToolInfo, names map[string]string) {
	return toolsOf(q, native)
}

// toolsOf is Tools, with the names' dots written as underscores when
// underscore is set, whatever the mode.
func toolsOf(q *Question, underscore bool) (tools []ptk.ToolInfo, names map[string]string) {
	lang := Language(q.Category)
	for _, f := range q.Functions {
		name := f.Name
		if underscore && strings.Contains(name, ".") {
			name = strings.ReplaceAll(name, ".", "_")
			if names == nil {
				names = map[string]string{}
			}
			names[name] = f.Name
		}
		tools = append(tools, ptk.ToolInfo{
			Name:        name,
			Description: f.Description + languageNote[lang],
			Parameters:  convertParameters(f.Parameters, lang),
		})
	}
	return tools, names
}

// convertParameters writes BFCL's parameters as JSON Schema.
func convertParameters(raw json.RawMessage, lang string) json.RawMessage {
	v, err := Decode(raw)
	d, ok := v.(*Dict)
	if err != nil || !ok {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if lang != "python" {
		if props, ok := d.Get("properties"); ok {
			if pd, ok := props.(*Dict); ok {
				np := &Dict{}
				for i, k := range pd.Keys {
					np.Set(k, literalParam(pd.Vals[i], lang))
				}
				d = &Dict{Keys: append([]string(nil), d.Keys...), Vals: append([]any(nil), d.Vals...)}
				d.Set("properties", np)
			}
		}
	}
	out, err := toSchema(d).MarshalJSON()
	if err != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return out
}

// toSchema maps the types of a schema and of every schema in it, in a copy.
func toSchema(d *Dict) *Dict {
	out := &Dict{}
	float := false
	for i, k := range d.Keys {
		v := d.Vals[i]
		switch k {
		case "type":
			if t, ok := v.(string); ok {
				float = t == "float"
				if m, ok := openAPITypes[t]; ok {
					v = m
				} else {
					v = "string"
				}
			}
		case "properties":
			if pd, ok := v.(*Dict); ok {
				np := &Dict{}
				for j, pk := range pd.Keys {
					if s, ok := pd.Vals[j].(*Dict); ok {
						np.Set(pk, toSchema(s))
					} else {
						np.Set(pk, pd.Vals[j])
					}
				}
				v = np
			}
		case "items":
			if s, ok := v.(*Dict); ok {
				v = toSchema(s)
			}
		}
		out.Set(k, v)
	}
	if float {
		desc, _ := out.Get("description")
		s, _ := desc.(string)
		out.Set("description", strings.TrimSpace(s+" This is a float type value."))
	}
	return out
}

// literalParam makes a Java or JavaScript parameter a string that holds a
// literal of its declared type, which its description names, as BFCL does.
func literalParam(v any, lang string) any {
	s, ok := v.(*Dict)
	if !ok {
		return v
	}
	typ, items := propType(s)
	out := &Dict{}
	for i, k := range s.Keys {
		switch k {
		case "type", "items", "properties":
			continue
		}
		out.Set(k, s.Vals[i])
	}
	desc, _ := out.Get("description")
	text, _ := desc.(string)
	name := map[string]string{"java": "Java", "javascript": "JavaScript"}[lang]
	text = strings.TrimSpace(text + " This is " + name + " " + typ + " type parameter in string representation.")
	if items != "" {
		text += " The list elements are of type " + items + "; they are not in string representation."
	}
	out.Set("description", text)
	out.Set("type", "string")
	return out
}
