package wire_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm/openai/wire"
)

// TestRequestRoundTrip: what a client writes, a server reads back the same,
// and it is the JSON OpenAI documents.
func TestRequestRoundTrip(t *testing.T) {
	maxTokens, temp := 256, 0.0
	in := wire.Request{
		Model: "gpt-4o",
		Messages: []wire.Message{
			{Role: "user", Content: wire.TextContent("Weather in <Paris>?")},
			{Role: "assistant", ToolCalls: []wire.ToolCall{{ID: "c1", Type: "function", Function: wire.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
			{Role: "tool", ToolCallID: "c1", Content: wire.TextContent("18°C")},
		},
		Temperature: &temp,
		MaxTokens:   &maxTokens,
		Stop:        json.RawMessage(`["\nUSER:"]`),
		Tools:       []wire.Tool{{Type: "function", Function: wire.Function{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`)}}},
		ToolChoice:  wire.ToolChoiceOf("get_weather"),
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"gpt-4o","messages":[{"role":"user","content":"Weather in \u003cParis\u003e?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","content":"18°C","tool_call_id":"c1"}],"temperature":0,"max_tokens":256,"stop":["\nUSER:"],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"get_weather"}}}`
	if string(b) != want {
		t.Fatalf("written (-want +got):\n%s", cmp.Diff(want, string(b)))
	}
	var out wire.Request
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out, cmp.AllowUnexported(wire.Content{})); diff != "" {
		t.Errorf("read back (-written +read):\n%s", diff)
	}
}

// TestRequestFromClients: what clients send besides the documented shapes.
func TestRequestFromClients(t *testing.T) {
	var r wire.Request
	err := json.Unmarshal([]byte(`{"messages":[
		{"role":"user","content":[{"type":"text","text":"a"},{"type":"input_text","text":"b"}]},
		{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]},
		{"role":"user","content":42},
		{"role":"user","content":null},
		{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"x":1}}}]}
	],"stop":"END"}`), &r)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		text string
		err  bool
	}{{"ab", false}, {"", true}, {"", true}, {"", false}, {"", false}} {
		got, err := r.Messages[i].Content.AsText()
		if got != want.text || (err != nil) != want.err {
			t.Errorf("messages[%d]: %q, %v; want %q, error %v", i, got, err, want.text, want.err)
		}
	}
	if a := r.Messages[4].ToolCalls[0].Function.Arguments; a != `{"x":1}` {
		t.Errorf("arguments as an object read as %q", a)
	}
	for raw, want := range map[string][]string{`"END"`: {"END"}, `["a","b"]`: {"a", "b"}, `null`: nil, ``: nil} {
		if got, ok := wire.StopOf(json.RawMessage(raw)); !ok || !cmp.Equal(got, want) {
			t.Errorf("StopOf(%s) = %q, %v", raw, got, ok)
		}
	}
	if _, ok := wire.StopOf(json.RawMessage(`7`)); ok {
		t.Error("StopOf(7) is ok")
	}
}

// TestAnswerFromServers: what servers write, read leniently.
func TestAnswerFromServers(t *testing.T) {
	var c wire.Completion
	err := json.Unmarshal([]byte(`{"model":"m","choices":[{"index":0,"message":{"role":"assistant",
		"content":[{"type":"text","text":"Hi"},{"type":"image","url":"x"}],"reasoning":"because",
		"tool_calls":[{"id":"c","function":{"name":"f","arguments":null}}]},"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_cache_hit_tokens":4}}`), &c)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Choices[0].Message
	if m.Text() != "Hi" || m.ReasoningText() != "because" || m.ToolCalls[0].Function.Arguments != "" || c.Choices[0].Finish() != "tool_calls" {
		t.Errorf("read %+v", m)
	}
	if u := c.Usage.Usage(); u != (ptk.Usage{PromptTokens: 10, CompletionTokens: 2, CacheReadTokens: 4}) {
		t.Errorf("usage %+v", u)
	}
	var e wire.Completion
	if json.Unmarshal([]byte(`{"error":{"message":"overloaded","code":503}}`), &e); !e.Failed() {
		t.Error("an in-band error is not Failed")
	}
}

// A server writes a chunk of a stream the way OpenAI does.
func ExampleToolCall_Streamed() {
	call := wire.ToolCall{ID: "call_1", Type: "function", Function: wire.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	for _, piece := range call.Streamed(0) {
		chunk := wire.Completion{ID: "chatcmpl-1", Object: "chat.completion.chunk", Model: "m",
			Choices: []wire.Choice{{Delta: &wire.Delta{ToolCalls: []wire.ToolCall{piece}}}},
			Usage:   nil}
		b, _ := json.Marshal(chunk)
		fmt.Printf("data: %s\n\n", b)
	}
	b, _ := json.Marshal(wire.UsageOf(ptk.Usage{PromptTokens: 100, CompletionTokens: 20, CacheReadTokens: 64}))
	fmt.Println(string(b))
	// Output:
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null,"logprobs":null}]}
	//
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null,"logprobs":null}]}
	//
	// {"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64}}
}
