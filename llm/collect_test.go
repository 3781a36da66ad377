package llm

import (
	"encoding/json"
	"testing"

	"github.com/ptkit/ptk"
)

func TestCollector(t *testing.T) {
	u := ptk.Usage{PromptTokens: 10, CompletionTokens: 5}
	chunks := []Chunk{
		{Model: "m", Text: "Let me "},
		{Text: "check.", Reasoning: "think"},
		{Call: &CallDelta{Index: 0, ID: "a", Tool: "get_weather"}},
		{Call: &CallDelta{Index: 1, ID: "b", Tool: "now"}},
		{Call: &CallDelta{Index: 0, ArgsDelta: `{"city":`}},
		{Call: &CallDelta{Index: 0, Tool: "get_weather", ArgsDelta: ` "Paris"}`}}, // a repeated name
		{Call: &CallDelta{Index: 3, ArgsDelta: `{}`}},                             // no name, no id
		{FinishReason: "tool_calls"},
		{Usage: &ptk.Usage{PromptTokens: 10}, Cost: 0.5}, // replaced by the final totals
		{Usage: &u, Cost: 1.5},
	}
	var c Collector
	for _, ch := range chunks {
		c.Add(ch)
	}
	r := c.Response()
	if r.Content != "Let me check." || r.Reasoning != "think" || r.Model != "m" || r.FinishReason != "tool_calls" || r.Usage != u || r.Cost != 1.5 {
		t.Fatalf("response = %+v", r)
	}
	want := []ptk.Call{
		{ID: "a", Tool: "get_weather", Args: json.RawMessage(`{"city": "Paris"}`)},
		{ID: "b", Tool: "now", Args: json.RawMessage(`{}`)},
		{ID: "call_4", Tool: "", Args: json.RawMessage(`{}`)},
	}
	if len(r.Calls) != len(want) {
		t.Fatalf("calls = %+v", r.Calls)
	}
	for i := range want {
		if r.Calls[i].ID != want[i].ID || r.Calls[i].Tool != want[i].Tool || string(r.Calls[i].Args) != string(want[i].Args) {
			t.Errorf("call %d = %+v, want %+v", i, r.Calls[i], want[i])
		}
	}
}
