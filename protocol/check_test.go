package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
)

// Native tool calls as providers really return them: arguments as a JSON
// string the client decoded once, double-encoded by some servers (vLLM with
// some parsers, early Ollama), with Python-ish quotes from small models, or
// empty.
func TestCheckNativeCalls(t *testing.T) {
	tools := []ptk.ToolInfo{{
		Name:       "get_weather",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}`),
	}, {
		Name: "now", Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
	}}
	p, err := NewParser(tools)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, tool, args string
		wantArgs         string
		wantCode         ptk.Code
		wantMsg          string
	}{
		{"plain", "get_weather", `{"city": "Paris", "days": 3}`, `{"city":"Paris","days":3}`, "", ""},
		{"double-encoded", "get_weather", `"{\"city\": \"Paris\"}"`, `{"city":"Paris"}`, "", ""},
		{"coerced", "get_weather", `{"city":"Paris","days":"3"}`, `{"city":"Paris","days":3}`, "", ""},
		{"single quotes", "get_weather", `{'city': 'Paris'}`, `{"city":"Paris"}`, "", ""},
		{"empty args", "now", ``, `{}`, "", ""},
		{"unknown tool", "get_wether", `{"city":"Paris"}`, "", ptk.ToolNotFound, "get_weather"},
		{"missing argument", "get_weather", `{"days":2}`, "", ptk.InvalidToolCall, "city"},
		{"cut off", "get_weather", `{"city": "Par`, "", ptk.ParseError, "cannot be read"},
		{"no name", "", `{}`, "", ptk.ParseError, "no tool name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, _ := p.Check(ptk.Call{ID: "abc", Tool: c.tool, Args: json.RawMessage(c.args)})
			if a.Call.ID != "abc" {
				t.Errorf("ID = %q, want abc", a.Call.ID)
			}
			if c.wantCode != "" {
				if a.Err == nil || a.Err.Code != c.wantCode || !strings.Contains(a.Err.Message, c.wantMsg) {
					t.Fatalf("Err = %v, want %s mentioning %q", a.Err, c.wantCode, c.wantMsg)
				}
				return
			}
			if a.Err != nil {
				t.Fatalf("Err = %v", a.Err)
			}
			if got := compact(t, a.Call.Args); got != c.wantArgs {
				t.Errorf("args = %s, want %s", got, c.wantArgs)
			}
		})
	}
}
