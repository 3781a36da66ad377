package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/lenient"
)

func render(t *testing.T, params string) string {
	t.Helper()
	var b strings.Builder
	WriteToolDef(&b, ptk.ToolInfo{Name: "t", Parameters: json.RawMessage(params)})
	return b.String()
}

func check(t *testing.T, params, args string) []Note {
	t.Helper()
	s, err := Compile(json.RawMessage(params))
	if err != nil {
		t.Fatalf("%s: %v", params, err)
	}
	n, _, err := lenient.Parse([]byte(args))
	if err != nil {
		t.Fatal(err)
	}
	return s.Check(n)
}

// TestAliasesShownAsChecked: every type alias the checker accepts is shown
// to the model as the type it checks ("set", "long" and "str" were checked
// as array, integer and string but shown as written).
func TestAliasesShownAsChecked(t *testing.T) {
	wrong := map[string]string{"object": `1`, "number": `"x"`, "integer": `1.5`, "string": `1`, "boolean": `"x"`, "array": `1`, "null": `1`}
	for alias, typ := range typeNames {
		for _, written := range []string{alias, strings.ToUpper(alias[:1]) + alias[1:]} {
			params := `{"type":"object","properties":{"x":{"type":"` + written + `"}},"required":["x"]}`
			if got, want := render(t, params), "- x ("+typ+", required)"; !strings.Contains(got, want) {
				t.Errorf("type %q shown as:\n%s\nwant %q", written, got, want)
			}
			notes := check(t, params, `{"x": `+wrong[typ]+`}`)
			if len(notes) == 0 || !strings.Contains(notes[0].Message, typ) {
				t.Errorf("type %q: checking %s gave %+v, want a problem naming %s", written, wrong[typ], notes, typ)
			}
		}
	}
}

// TestRequiredFlagsShownAsChecked: a property's own "required": true and
// "optional": true mean the same to the checker as to the prompt.
func TestRequiredFlagsShownAsChecked(t *testing.T) {
	params := `{"type":"object","properties":{"a":{"type":"boolean","optional":true},"b":{"type":"string","optional":"True"},"c":{"type":"string","required":true}},"required":["a","b"]}`
	if got, want := render(t, params), "- a (boolean, optional)\n- b (string, optional)\n- c (string, required)\n"; !strings.HasSuffix(got, want) {
		t.Errorf("shown as:\n%s\nwant:\n%s", got, want)
	}
	notes := check(t, params, `{}`)
	if len(notes) != 1 || notes[0].Issue != MissingArgument || !strings.Contains(notes[0].Message, `"c"`) {
		t.Errorf("checking {} gave %+v, want only c missing", notes)
	}
}

// TestOneRefResolver: the checker and the prompt follow the same references:
// into arrays, and along chains longer than the prompt used to follow (8).
func TestOneRefResolver(t *testing.T) {
	var defs []string
	for i := range 12 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, i+1))
	}
	defs = append(defs, `"d12":{"type":"integer"}`)
	params := `{"type":"object","$defs":{` + strings.Join(defs, ",") + `},"x-list":[{"type":"string"}],` +
		`"properties":{"chain":{"$ref":"#/$defs/d0"},"indexed":{"$ref":"#/x-list/0"}},"required":["chain","indexed"]}`
	if got, want := render(t, params), "- chain (integer, required)\n- indexed (string, required)\n"; !strings.HasSuffix(got, want) {
		t.Errorf("shown as:\n%s\nwant:\n%s", got, want)
	}
	if notes := check(t, params, `{"chain": 1, "indexed": "x"}`); len(notes) != 0 {
		t.Errorf("valid arguments: %+v", notes)
	}
	if notes := check(t, params, `{"chain": "x", "indexed": 1}`); len(notes) != 2 {
		t.Errorf("two wrong types: %+v", notes)
	}
	// Coercion goes by the same reading: "1" becomes 1 through the chain.
	s, _ := Compile(json.RawMessage(params))
	n, _, _ := lenient.Parse([]byte(`{"chain": "1", "indexed": "x"}`))
	out, notes := s.Coerce(n, false)
	if got := string(lenient.AppendJSON(nil, out, nil)); got != `{"chain":1,"indexed":"x"}` || len(notes) != 1 || notes[0].Issue != Coerced {
		t.Errorf("coerced to %s, %+v", got, notes)
	}
}

func TestValidate(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{"n": 2}`:         "",
		`{"n": 0}`:         "/n: 0 is below the minimum 1",
		`{}`:               `missing required argument "n"`,
		`{"n": 1, "m": 2}`: `unexpected arguments "m"`,
		`{"n": "2"}`:       "expected integer, got string",
		`{"n": `:           "not valid JSON",
	} {
		err := s.Validate(json.RawMessage(args))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", args, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	var e *Error
	if err := s.Validate(json.RawMessage(`{"n": 0}`)); !errors.As(err, &e) || e.Problems[0].Pointer != "/n" || e.Problems[0].Issue != InvalidArgument {
		t.Errorf("%#v", err)
	}
	var none *Schema
	if none.Validate(json.RawMessage(`{"anything": 1}`)) != nil || none.Check(nil) != nil {
		t.Error("a nil Schema accepts anything")
	}
}

func TestCompileErrors(t *testing.T) {
	for params, want := range map[string]string{
		`[1]`: "parameters must be a JSON Schema object",
		`{"type":"object","properties":{"a":{"pattern":"("}}}`: "not a valid JSON Schema",
	} {
		if _, err := Compile(json.RawMessage(params)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", params, err, want)
		}
	}
	if s, err := Compile(nil); s != nil || err != nil {
		t.Errorf("no parameters: %v, %v", s, err)
	}
}

// TestPassedArgsValidatedOnce: the parser records the bytes of a call it
// found valid, and the tool's Validate of the same bytes is a look-up. A
// tool declared with the same parameters holds the same Schema.
func TestPassedArgsValidatedOnce(t *testing.T) {
	// compiled schemas are shared by their bytes: a run of its own (-count)
	params := json.RawMessage(fmt.Sprintf(`{"description":"run %d","type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, time.Now().UnixNano()))
	parser, _ := Compile(params)
	tool, _ := Compile(append(json.RawMessage(nil), params...))
	if parser != tool {
		t.Fatal("the same parameters compiled twice")
	}
	args := json.RawMessage(`{"n": 1}`)
	if tool.passed.has(args) {
		t.Fatal("remembered before any check")
	}
	n, _, _ := lenient.Parse(args)
	if notes := parser.Check(n); notes != nil {
		t.Fatal(notes)
	}
	parser.Passed(args)
	if !tool.passed.has(args) || tool.ValidateOnce(args) != nil {
		t.Error("the tool validates again what the parser checked")
	}
	if tool.ValidateOnce(json.RawMessage(`{"n": 1.5}`)) == nil {
		t.Error("other bytes are validated")
	}
	tool.Passed(json.RawMessage(`{"n": 2.5}`)) // as if the parser were wrong
	if tool.Validate(json.RawMessage(`{"n": 2.5}`)) == nil {
		t.Error("Validate trusts what it is told instead of validating")
	}
}

// TestTextLiterals: a value that came as text is the literal it spells
// where the schema allows a string or that literal's type, and a string
// where the literal is not one or only strings are allowed; a JSON string
// stays a string.
func TestTextLiterals(t *testing.T) {
	params := `{"type":"object","properties":{
		"n":{"type":["string","integer"]},"x":{"anyOf":[{"type":"string"},{"type":"null"}]},
		"b":{"type":["string","boolean"]},"s":{"type":"string"},"z":{"type":["string","integer"]}}}`
	s, err := Compile(json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		text bool
		want string
	}{
		{`{"n": "42", "x": "null", "b": "true", "s": "42", "z": "02134"}`, true, `{"n":42,"x":null,"b":true,"s":"42","z":"02134"}`},
		{`{"n": "forty", "x": "None", "b": "yes", "z": ""}`, true, `{"n":"forty","x":"None","b":"yes","z":""}`},
		{`{"n": "42", "x": "null", "b": "true"}`, false, `{"n":"42","x":"null","b":"true"}`},
	} {
		n, _, _ := lenient.Parse([]byte(c.in))
		out, _ := s.Coerce(n, c.text)
		if got := string(lenient.AppendJSON(nil, out, nil)); got != c.want {
			t.Errorf("%s (text %v): %s, want %s", c.in, c.text, got, c.want)
		}
	}
}

// TestEscapedJSONText: an array written as a JSON string's escaped content,
// as GLM-4.7 writes one in an <arg_value>, is the array.
func TestEscapedJSONText(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"todos":{"type":"array"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	n, _, _ := lenient.Parse([]byte(`{"todos": "[{\\\"id\\\": \\\"1\\\", \\\"task\\\": \\\"Print \\\\\\\\n\\\"}]"}`))
	out, notes := s.Coerce(n, true)
	if got := string(lenient.AppendJSON(nil, out, nil)); got != `{"todos":[{"id":"1","task":"Print \\n"}]}` || len(notes) != 1 {
		t.Errorf("got %s, %+v", got, notes)
	}
}

// TestNotesInOrder: the notes for several bad arguments come in the order of
// their pointers every time (the validator visits properties in map order).
func TestNotesInOrder(t *testing.T) {
	params := `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"},"d":{"type":"integer"}}}`
	for range 50 {
		notes := check(t, params, `{"d": "x", "b": "x", "c": "x", "a": "x"}`)
		var ptrs []string
		for _, n := range notes {
			ptrs = append(ptrs, n.Pointer)
		}
		if got := strings.Join(ptrs, " "); got != "/a /b /c /d" {
			t.Fatalf("notes at %s, want /a /b /c /d", got)
		}
	}
}

// TestXMLElementsText: an object or a list written as XML elements, as
// MiniMax-M3 writes one, is read as one, its leaves converted by the schema.
func TestXMLElementsText(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{
		"filters":{"type":"object","properties":{"unit":{"type":"string"},"range":{"type":"object","properties":{"min":{"type":"number"},"max":{"type":"number"}}}}},
		"cities":{"type":"array","items":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	n, _, _ := lenient.Parse([]byte(`{"filters": "<unit>celsius</unit><range><min>-5</min><max>10</max></range>", "cities": "<item>Beijing</item> <item>Shanghai</item>"}`))
	out, _ := s.Coerce(n, true)
	if got := string(lenient.AppendJSON(nil, out, nil)); got != `{"filters":{"unit":"celsius","range":{"min":-5,"max":10}},"cities":["Beijing","Shanghai"]}` {
		t.Errorf("got %s", got)
	}
	for _, bad := range []string{"<a>1</a><a>2</a>", "<a>1</b>", "text <a>1</a>", "<a x=1>1</a>"} {
		if xmlElements(bad, false) != nil {
			t.Errorf("%s read as elements", bad)
		}
	}
}

// TestStructureAsText: an array or object given where the schema asks for a
// string (a JavaScript parameter "in string representation", a file's
// content) is read as its JSON text, whole, and said so; where the schema
// allows the structure, it stays one.
func TestStructureAsText(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{
		"list":{"type":"string"},"obj":{"type":"string"},"either":{"type":["string","array"]},"nested":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	n, _, _ := lenient.Parse([]byte(`{"list": ['a', "b\"c", 3], "obj": {"k": [true, null]}, "either": [1], "nested": [{"a": {"b": []}}]}`))
	out, notes := s.Coerce(n, false)
	want := `{"list":"[\"a\",\"b\\\"c\",3]","obj":"{\"k\":[true,null]}","either":[1],"nested":"[{\"a\":{\"b\":[]}}]"}`
	if got := string(lenient.AppendJSON(nil, out, nil)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if len(notes) != 3 || notes[0].Pointer != "/list" || !strings.Contains(notes[1].Message, "object read as its JSON text") {
		t.Errorf("notes %+v", notes)
	}
}
