package shape

import (
	"testing"

	"github.com/ptkit/ptk/lenient"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		in    string
		name  string
		kind  Kind
		exact bool
		plain bool
	}{
		{`{"name": "f", "arguments": {"a": 1}}`, "f", NameArgs, true, true},
		{`{"tool": "f", "args": "{\"a\": 1}"}`, "f", NameArgs, true, true},
		{`{"type": "function", "function": {"name": "f", "arguments": {}}}`, "f", NameArgs, true, true},
		{`{"function_call": {"name": "f", "arguments": "{}"}, "role": "assistant"}`, "f", NameArgs, true, true},
		{`{"name": "f"}`, "f", NameOnly, false, true},
		{`{"get_weather": {"city": "Paris"}}`, "get_weather", NameAsKey, false, false},
		{`{"ts": 1, "name": "f", "arguments": {}}`, "f", NameArgs, false, false},
		{`{"a": 1, "b": 2}`, "", NotCall, false, false},
	} {
		n, _, err := lenient.Parse([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		got, kind, exact := Of(n)
		if got.Name != c.name || kind != c.kind || exact != c.exact || got.Plain != c.plain {
			t.Errorf("%s: %q %v exact %v plain %v, want %q %v %v %v", c.in, got.Name, kind, exact, got.Plain, c.name, c.kind, c.exact, c.plain)
		}
	}
}
