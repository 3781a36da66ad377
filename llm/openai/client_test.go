package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/providertest"
)

// serve starts a server that answers POST /v1/chat/completions with h, and
// returns a client for it (with short pauses between retries) and the count
// of requests the server received.
func serve(t *testing.T, h http.HandlerFunc, opts ...Option) (*Client, *atomic.Int32) {
	t.Helper()
	url, n := providertest.Serve(t, "POST /v1/chat/completions", h)
	opts = append([]Option{WithBackoff(time.Millisecond, 5*time.Millisecond)}, opts...)
	return New(url+"/v1/", opts...), n
}

// The helpers every provider's tests share.
var (
	reply      = providertest.Reply
	testdata   = providertest.Testdata
	sseHandler = providertest.SSE
	counting   = providertest.Counting
	checkError = providertest.CheckError
)

var ask = llm.Request{Model: "gpt-4o-mini", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "What is the capital of France?"}}}

func TestRequestBody(t *testing.T) {
	zero, weather := 0.0, ptk.ToolInfo{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}
	const weatherJSON = `{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`
	withChoice := func(choice string) llm.Request {
		return llm.Request{Model: "m", Messages: ask.Messages, Tools: []ptk.ToolInfo{weather}, ToolChoice: choice}
	}
	tests := []struct {
		name   string
		req    llm.Request
		stream bool
		want   string
	}{{
		name: "conversation with calls and results",
		req: llm.Request{
			Model: "qwen3:8b",
			Messages: []ptk.Message{
				{Role: ptk.RoleSystem, Content: "You are terse."},
				{Role: ptk.RoleUser, Content: "Weather in Paris and Oslo?"},
				{Role: ptk.RoleAssistant, Raw: "<tool_call>…</tool_call>", Calls: []ptk.Call{
					{ID: "call_1", Tool: "get_weather", Args: json.RawMessage(`{"city": "Paris"}`)},
					{ID: "call_2", Tool: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`), Reasoning: "asked"},
				}},
				{Role: ptk.RoleTool, CallID: "call_1", Tool: "get_weather", Content: "18°C, sunny"},
				{Role: ptk.RoleTool, CallID: "call_2", Tool: "get_weather", Content: "error: service unavailable", IsError: true},
				{Role: ptk.RoleAssistant, Content: "Let me retry Oslo.", Calls: []ptk.Call{{ID: "call_3", Tool: "get_weather"}}},
				{Role: ptk.RoleTool, CallID: "call_3", Content: ""},
			},
		},
		want: `{"model":"qwen3:8b","messages":[
			{"role":"system","content":"You are terse."},
			{"role":"user","content":"Weather in Paris and Oslo?"},
			{"role":"assistant","content":null,"tool_calls":[
				{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},
				{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},
			{"role":"tool","tool_call_id":"call_1","content":"18°C, sunny"},
			{"role":"tool","tool_call_id":"call_2","content":"error: service unavailable"},
			{"role":"assistant","content":"Let me retry Oslo.","tool_calls":[
				{"id":"call_3","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_3","content":""}]}`,
	}, {
		name: "temperature 0, max tokens, stop",
		req:  llm.Request{Model: "m", Messages: ask.Messages, Temperature: &zero, MaxTokens: 256, Stop: []string{"</answer>"}},
		want: `{"model":"m","messages":[{"role":"user","content":"What is the capital of France?"}],"temperature":0,"max_tokens":256,"stop":["</answer>"]}`,
	}, {
		name: "no model, no temperature, negative max tokens",
		req:  llm.Request{Messages: ask.Messages, MaxTokens: -1},
		want: `{"messages":[{"role":"user","content":"What is the capital of France?"}]}`,
	}, {
		name: "tools, no tool choice",
		req:  llm.Request{Model: "m", Messages: ask.Messages, Tools: []ptk.ToolInfo{weather, {Name: "list_files"}}},
		want: `{"model":"m","messages":[{"role":"user","content":"What is the capital of France?"}],"tools":[` + weatherJSON +
			`,{"type":"function","function":{"name":"list_files","parameters":{"type":"object","properties":{}}}}]}`,
	}, {
		name: "tool choice auto",
		req:  withChoice("auto"),
		want: `{"model":"m","messages":[{"role":"user","content":"What is the capital of France?"}],"tools":[` + weatherJSON + `],"tool_choice":"auto"}`,
	}, {
		name: "tool choice none",
		req:  withChoice("none"),
		want: `{"model":"m","messages":[{"role":"user","content":"What is the capital of France?"}],"tools":[` + weatherJSON + `],"tool_choice":"none"}`,
	}, {
		name: "tool choice required",
		req:  withChoice("required"),
		want: `{"model":"m","messages":[{"role":"user","content":"What is the capital of France?"}],"tools":[` + weatherJSON + `],"tool_choice":"required"}`,
	}, {
		name: "tool choice by name",
		req:  withChoice("get_weather"),
		want: `{"model":"m","messages":[{"role":"user","content":"What is the capital of France?"}],"tools":[` + weatherJSON +
			`],"tool_choice":{"type":"function","function":{"name":"get_weather"}}}`,
	}, {
		name: "tool choice without tools",
		req:  llm.Request{Model: "m", Messages: ask.Messages, ToolChoice: "required"},
		want: `{"model":"m","messages":[{"role":"user","content":"What is the capital of France?"}]}`,
	}, {
		name:   "stream",
		req:    ask,
		stream: true,
		want:   `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"What is the capital of France?"}],"stream":true,"stream_options":{"include_usage":true}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			answer := reply(http.StatusOK, string(testdata(t, "generate/openai_text.json")))
			c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				body, _ = io.ReadAll(r.Body)
				answer(w, r)
			})
			var err error
			if tt.stream {
				_, err = llm.Collect(c.Stream(t.Context(), tt.req))
			} else {
				_, err = c.Generate(t.Context(), tt.req)
			}
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("request body %s: %v", body, err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("request body (-want +got):\n%s\nbody: %s", diff, body)
			}
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   []Option
		stream bool
		want   http.Header
	}{
		{"no key", nil, false, http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}},
		{"key", []Option{WithAPIKey("sk-test")}, true, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"text/event-stream"}, "Authorization": {"Bearer sk-test"},
		}},
		{"extra headers", []Option{WithAPIKey("sk-test"), WithHeader("HTTP-Referer", "https://example.com"), WithHeader("Authorization", "Token t")}, false, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json"}, "Authorization": {"Token t"}, "Http-Referer": {"https://example.com"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var sent http.Header
			answer := reply(http.StatusOK, string(testdata(t, "generate/openai_text.json")))
			c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				sent = r.Header.Clone()
				answer(w, r)
			}, tt.opts...)
			var err error
			if tt.stream {
				_, err = llm.Collect(c.Stream(t.Context(), ask))
			} else {
				_, err = c.Generate(t.Context(), ask)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := http.Header{}
			for _, k := range []string{"Content-Type", "Accept", "Authorization", "Http-Referer"} {
				if v, ok := sent[k]; ok {
					got[k] = v
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:11434/v1":   "http://localhost:11434/v1",
		"http://localhost:11434/v1/":  "http://localhost:11434/v1",
		"https://api.openai.com/v1//": "https://api.openai.com/v1",
	} {
		if got := New(in).BaseURL(); got != want {
			t.Errorf("New(%q).BaseURL() = %q, want %q", in, got, want)
		}
	}
}
