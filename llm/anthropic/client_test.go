package anthropic

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

// serve starts a server that answers POST /v1/messages with h, and returns
// a client for it (with short pauses between retries) and the count of
// requests the server received.
func serve(t *testing.T, h http.HandlerFunc, opts ...Option) (*Client, *atomic.Int32) {
	t.Helper()
	url, n := providertest.Serve(t, "POST /v1/messages", h)
	opts = append([]Option{WithBackoff(time.Millisecond, 5*time.Millisecond)}, opts...)
	return New(url+"/", opts...), n
}

// The helpers every provider's tests share.
var (
	reply      = providertest.Reply
	testdata   = providertest.Testdata
	sseHandler = providertest.SSE
	counting   = providertest.Counting
	checkError = providertest.CheckError
)

var ask = llm.Request{Model: "claude-sonnet-4-5", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "What is the capital of France?"}}}

func TestRequestBody(t *testing.T) {
	zero, weather := 0.0, ptk.ToolInfo{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}
	const (
		askJSON     = `[{"role":"user","content":[{"type":"text","text":"What is the capital of France?"}]}]`
		weatherJSON = `{"name":"get_weather","description":"Current weather for a city.","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`
	)
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
			Model: "claude-sonnet-4-5",
			Messages: []ptk.Message{
				{Role: ptk.RoleSystem, Content: "You are terse."},
				{Role: ptk.RoleUser, Content: "Weather in Paris and Oslo?"},
				{Role: ptk.RoleAssistant, Raw: "<tool_call>…</tool_call>", Calls: []ptk.Call{
					{ID: "toolu_1", Tool: "get_weather", Args: json.RawMessage(`{"city": "Paris"}`)},
					{ID: "toolu_2", Tool: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`), Reasoning: "asked"},
				}},
				{Role: ptk.RoleTool, CallID: "toolu_1", Tool: "get_weather", Content: "18°C, sunny"},
				{Role: ptk.RoleTool, CallID: "toolu_2", Tool: "get_weather", Content: "error: service unavailable", IsError: true},
				{Role: ptk.RoleUser, Content: "Also try again for Oslo."},
				{Role: ptk.RoleAssistant, Content: "Let me retry Oslo.", Calls: []ptk.Call{
					{ID: "toolu_3", Tool: "get_weather"},
					{ID: "toolu_4", Tool: "get_weather", Args: json.RawMessage(`{"city": "Os`)},
					{ID: "toolu_5", Tool: "get_weather", Args: json.RawMessage(`["Oslo"]`)},
					{ID: "toolu_6", Tool: "get_weather", Args: json.RawMessage(`null`)},
				}},
				{Role: ptk.RoleTool, CallID: "toolu_3", Content: "5°C"},
				{Role: ptk.RoleSystem, Content: "Answer in French."},
			},
		},
		want: `{"model":"claude-sonnet-4-5","max_tokens":4096,"system":"You are terse.\n\nAnswer in French.","messages":[
			{"role":"user","content":[{"type":"text","text":"Weather in Paris and Oslo?"}]},
			{"role":"assistant","content":[
				{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}},
				{"type":"tool_use","id":"toolu_2","name":"get_weather","input":{"city":"Oslo"}}]},
			{"role":"user","content":[
				{"type":"tool_result","tool_use_id":"toolu_1","content":"18°C, sunny"},
				{"type":"tool_result","tool_use_id":"toolu_2","content":"error: service unavailable","is_error":true},
				{"type":"text","text":"Also try again for Oslo."}]},
			{"role":"assistant","content":[
				{"type":"text","text":"Let me retry Oslo."},
				{"type":"tool_use","id":"toolu_3","name":"get_weather","input":{}},
				{"type":"tool_use","id":"toolu_4","name":"get_weather","input":{}},
				{"type":"tool_use","id":"toolu_5","name":"get_weather","input":{}},
				{"type":"tool_use","id":"toolu_6","name":"get_weather","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_3","content":"5°C"}]}]}`,
	}, {
		name: "blank turns left out, same roles merged",
		req: llm.Request{Model: "m", Messages: []ptk.Message{
			{Role: ptk.RoleSystem},
			{Role: ptk.RoleUser, Content: "Hi"},
			{Role: ptk.RoleAssistant, Content: " \n"},
			{Role: ptk.RoleUser, Content: "Anyone?"},
		}},
		want: `{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"text","text":"Anyone?"}]}]}`,
	}, {
		name: "temperature 0, max tokens, stop",
		req:  llm.Request{Model: "m", Messages: ask.Messages, Temperature: &zero, MaxTokens: 256, Stop: []string{"</answer>"}},
		want: `{"model":"m","max_tokens":256,"messages":` + askJSON + `,"temperature":0,"stop_sequences":["</answer>"]}`,
	}, {
		name: "no model, negative max tokens",
		req:  llm.Request{Messages: ask.Messages, MaxTokens: -1},
		want: `{"max_tokens":4096,"messages":` + askJSON + `}`,
	}, {
		name: "tools, no tool choice",
		req:  llm.Request{Model: "m", Messages: ask.Messages, Tools: []ptk.ToolInfo{weather, {Name: "list_files"}}},
		want: `{"model":"m","max_tokens":4096,"messages":` + askJSON + `,"tools":[` + weatherJSON +
			`,{"name":"list_files","input_schema":{"type":"object","properties":{}}}]}`,
	}, {
		name: "tool choice auto",
		req:  withChoice("auto"),
		want: `{"model":"m","max_tokens":4096,"messages":` + askJSON + `,"tools":[` + weatherJSON + `],"tool_choice":{"type":"auto"}}`,
	}, {
		name: "tool choice none",
		req:  withChoice("none"),
		want: `{"model":"m","max_tokens":4096,"messages":` + askJSON + `,"tools":[` + weatherJSON + `],"tool_choice":{"type":"none"}}`,
	}, {
		name: "tool choice required",
		req:  withChoice("required"),
		want: `{"model":"m","max_tokens":4096,"messages":` + askJSON + `,"tools":[` + weatherJSON + `],"tool_choice":{"type":"any"}}`,
	}, {
		name: "tool choice by name",
		req:  withChoice("get_weather"),
		want: `{"model":"m","max_tokens":4096,"messages":` + askJSON + `,"tools":[` + weatherJSON + `],"tool_choice":{"type":"tool","name":"get_weather"}}`,
	}, {
		name: "tool choice without tools",
		req:  llm.Request{Model: "m", Messages: ask.Messages, ToolChoice: "required"},
		want: `{"model":"m","max_tokens":4096,"messages":` + askJSON + `}`,
	}, {
		name:   "stream",
		req:    ask,
		stream: true,
		want:   `{"model":"claude-sonnet-4-5","max_tokens":4096,"messages":` + askJSON + `,"stream":true}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			answer := reply(http.StatusOK, string(testdata(t, "generate/text.json")))
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
			checkJSON(t, tt.want, body)
		})
	}
}

// checkJSON checks that got is the JSON value want.
func checkJSON(t *testing.T, want string, got []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("request body %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("request body (-want +got):\n%s\nbody: %s", diff, got)
	}
}

func TestWithMaxTokens(t *testing.T) {
	var body []byte
	answer := reply(http.StatusOK, string(testdata(t, "generate/text.json")))
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		answer(w, r)
	}, WithMaxTokens(1024), WithMaxTokens(0))
	if _, err := c.Generate(t.Context(), ask); err != nil {
		t.Fatal(err)
	}
	checkJSON(t, `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"What is the capital of France?"}]}]}`, body)
}

func TestRequestHeaders(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   []Option
		stream bool
		want   http.Header
	}{
		{"no key", nil, false, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json"}, "Anthropic-Version": {"2023-06-01"},
		}},
		{"key, version", []Option{WithAPIKey("sk-ant-test"), WithVersion("2024-01-01"), WithVersion("")}, true, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"text/event-stream"}, "Anthropic-Version": {"2024-01-01"}, "X-Api-Key": {"sk-ant-test"},
		}},
		{"extra headers", []Option{WithAPIKey("sk-ant-test"), WithHeader("anthropic-beta", "token-efficient-tools-2025-02-19"), WithHeader("x-api-key", "other")}, false, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json"}, "Anthropic-Version": {"2023-06-01"},
			"X-Api-Key": {"other"}, "Anthropic-Beta": {"token-efficient-tools-2025-02-19"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var sent http.Header
			c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				sent = r.Header.Clone()
				if tt.stream {
					sseHandler(testdata(t, "stream/text.sse"))(w, r)
					return
				}
				reply(http.StatusOK, string(testdata(t, "generate/text.json")))(w, r)
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
			for _, k := range []string{"Content-Type", "Accept", "Anthropic-Version", "X-Api-Key", "Anthropic-Beta", "Authorization"} {
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
		"":                           "https://api.anthropic.com",
		"https://api.anthropic.com/": "https://api.anthropic.com",
		"http://localhost:11434//":   "http://localhost:11434",
	} {
		if got := New(in).BaseURL(); got != want {
			t.Errorf("New(%q).BaseURL() = %q, want %q", in, got, want)
		}
	}
}

var generateTests = []providertest.Case{{
	File: "text.json",
	Want: &llm.Response{
		Content:      "The capital of France is Paris.",
		Usage:        ptk.Usage{PromptTokens: 1860, CompletionTokens: 10, CacheReadTokens: 1846},
		FinishReason: "end_turn",
		Model:        "claude-sonnet-4-5-20250929",
	},
}, {
	File: "tools.json",
	Want: &llm.Response{
		Content: "I'll check the weather in both cities.",
		Calls: []ptk.Call{
			{ID: "toolu_01A09q90qw90lq917835lq9", Tool: "get_weather", Args: json.RawMessage(`{"location": "San Francisco, CA", "unit": "celsius"}`)},
			{ID: "toolu_01NRLabsLyVHZPKxbKvkfSMn", Tool: "get_weather", Args: json.RawMessage(`{"location": "New York, NY", "unit": "celsius"}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 2008, CompletionTokens: 121, CacheWriteTokens: 1536},
		FinishReason: "tool_use",
		Model:        "claude-sonnet-4-5-20250929",
	},
}, {
	File: "thinking.json",
	Want: &llm.Response{
		Content:      "Yes, there are infinitely many prime numbers.",
		Reasoning:    "To approach this, let's think about what we know about prime numbers. Euclid's proof: assume finitely many, multiply them all and add one.",
		Usage:        ptk.Usage{PromptTokens: 46, CompletionTokens: 298},
		FinishReason: "end_turn",
		Model:        "claude-sonnet-4-5-20250929",
	},
}}

func TestGenerateToolUseWithoutIDOrInput(t *testing.T) {
	// What a server that speaks the API loosely may send.
	c, _ := serve(t, reply(http.StatusOK, `{"type":"message","role":"assistant","model":"qwen3:8b","content":[{"type":"tool_use","name":"get_time"},{"type":"tool_use","id":"t2","name":"get_time","input":null}],"stop_reason":"tool_use","usage":{"input_tokens":20,"output_tokens":9}}`))
	got, err := c.Generate(t.Context(), ask)
	if err != nil {
		t.Fatal(err)
	}
	want := []ptk.Call{{ID: "call_1", Tool: "get_time", Args: json.RawMessage(`{}`)}, {ID: "t2", Tool: "get_time", Args: json.RawMessage(`{}`)}}
	if diff := cmp.Diff(want, got.Calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
