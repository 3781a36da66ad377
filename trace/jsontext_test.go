package trace

import (
	"encoding/json"
	"testing"

	"github.com/ptkit/ptk"
)

// TestCallsTextIsEncodingJSON: the one-pass encoding of a model call's
// calls and of repairs writes what encoding/json writes, byte for byte,
// for hostile text (HTML, control characters, invalid UTF-8, U+2028) and
// arguments (spaced, invalid, missing).
func TestCallsTextIsEncodingJSON(t *testing.T) {
	hostile := "<script>&\"\\\x00\x1f\u2028\u2029\xff\xfe é 🙂"
	cases := [][]ptk.Call{
		nil,
		{},
		{{ID: "call_1", Tool: "read_file", Args: json.RawMessage(`{"path":"src/main.go"}`)}},
		{{ID: hostile, Tool: hostile, Args: json.RawMessage(` { "a" : [1, 2, {"b": "<\u2028>"}] ,"c":"` + "\u2028" + `" } `), Reasoning: hostile, Repairs: []string{hostile, ""}}},
		{{Tool: "t"}, {ID: "2", Tool: "t", Args: json.RawMessage(`null`), Repairs: []string{}}},
		{{Tool: "t", Args: json.RawMessage(`{"unclosed": `)}},
		{{Tool: "t", Args: json.RawMessage(`{} {}`)}},
		{{Tool: "t", Args: json.RawMessage(``)}},
		{{Tool: "t", Args: json.RawMessage("\"\xff\"")}},
	}
	for _, calls := range cases {
		if got, want := callsText(calls), jsonText(calls); got != want {
			t.Errorf("callsText(%q)\n= %s\nwant %s", calls, got, want)
		}
		for _, c := range calls {
			if got, want := stringsText(c.Repairs), jsonText(c.Repairs); got != want {
				t.Errorf("stringsText(%q) = %s, want %s", c.Repairs, got, want)
			}
		}
	}
}

func FuzzCallsText(f *testing.F) {
	f.Add("call_1", "read_file", `{"path":"a"}`, "", "repaired")
	f.Add("<&>", "\u2028", ` [ 1 , "\u2029" ] `, "\xff", "")
	f.Fuzz(func(t *testing.T, id, tool, args, reasoning, repair string) {
		calls := []ptk.Call{{ID: id, Tool: tool, Args: json.RawMessage(args), Reasoning: reasoning}}
		if repair != "" {
			calls[0].Repairs = []string{repair}
		}
		if got, want := callsText(calls), jsonText(calls); got != want {
			t.Errorf("callsText(%q)\n= %s\nwant %s", calls, got, want)
		}
	})
}
