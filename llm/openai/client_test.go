package openai

import (
	"context"
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

// served is serve for the tests every provider's stream must pass.
func served(t *testing.T) func(http.HandlerFunc) llm.Streamer {
	return func(h http.HandlerFunc) llm.Streamer {
		c, _ := serve(t, h)
		return c
	}
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

func TestGenerate(t *testing.T) {
	tests := []struct {
		file string
		want *llm.Response
	}{{
		file: "openai_text.json",
		want: &llm.Response{
			Content:      "The capital of France is Paris.",
			Usage:        ptk.Usage{PromptTokens: 24, CompletionTokens: 8},
			FinishReason: "stop",
			Model:        "gpt-4o-mini-2024-07-18",
		},
	}, {
		file: "openai_tools.json",
		want: &llm.Response{
			Calls: []ptk.Call{
				{ID: "call_3PqV8tYk2mHn0aZ1xQwErT5u", Tool: "get_weather", Args: json.RawMessage(`{"city": "Paris", "unit": "celsius"}`)},
				{ID: "call_Xk9bN2cV7dLq4sWe1rTy6uIo", Tool: "get_time", Args: json.RawMessage(`{"tz": "Europe/Paris"}`)},
			},
			Usage:        ptk.Usage{PromptTokens: 312, CompletionTokens: 48, CacheReadTokens: 256},
			FinishReason: "tool_calls",
			Model:        "gpt-4o-2024-08-06",
		},
	}, {
		file: "ollama_reasoning.json",
		want: &llm.Response{
			Content:      "Paris.",
			Reasoning:    "The user asks for the capital of France.",
			Usage:        ptk.Usage{PromptTokens: 18, CompletionTokens: 40},
			FinishReason: "stop",
			Model:        "qwen3:8b",
		},
	}, {
		file: "deepseek_reasoning.json",
		want: &llm.Response{
			Content:      "9.9 is greater.",
			Reasoning:    "9.11 < 9.9",
			Usage:        ptk.Usage{PromptTokens: 80, CompletionTokens: 21, CacheReadTokens: 64},
			FinishReason: "stop",
			Model:        "deepseek-reasoner",
		},
	}, {
		file: "content_parts.json",
		want: &llm.Response{
			Content:      "Paris.",
			Usage:        ptk.Usage{PromptTokens: 20, CompletionTokens: 11},
			FinishReason: "stop",
			Model:        "magistral-small-2506",
		},
	}, {
		file: "arguments_object.json",
		want: &llm.Response{
			Calls: []ptk.Call{
				{ID: "call_1", Tool: "get_weather", Args: json.RawMessage(`{"city":"Paris","days":3}`)},
				{ID: "c2", Tool: "get_time", Args: json.RawMessage(`{}`)},
			},
			FinishReason: "tool_calls",
			Model:        "local-model",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, n := serve(t, reply(http.StatusOK, string(testdata(t, "generate/"+tt.file))))
			got, err := c.Generate(t.Context(), ask)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if n.Load() != 1 {
				t.Errorf("%d requests, want 1", n.Load())
			}
		})
	}
}

// TestConcurrentUse shares one Client between goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	c, n := serve(t, reply(http.StatusOK, string(testdata(t, "generate/openai_text.json"))), WithAPIKey("k"), WithHeader("X-Test", "1"))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	errs := make(chan error)
	for range 8 {
		go func() {
			_, err := c.Generate(ctx, ask)
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n.Load() != 8 {
		t.Errorf("%d requests, want 8", n.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestWithHTTPClient(t *testing.T) {
	c, _ := serve(t, reply(http.StatusOK, string(testdata(t, "generate/openai_text.json"))))
	var seen atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	c = New(c.BaseURL(), WithHTTPClient(hc), WithHTTPClient(nil))
	if _, err := c.Generate(t.Context(), ask); err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 1 {
		t.Errorf("the given client made %d requests, want 1", seen.Load())
	}
}

func TestInvalidParameters(t *testing.T) {
	c, n := serve(t, reply(http.StatusOK, "{}"))
	req := ask
	req.Tools = []ptk.ToolInfo{{Name: "broken", Parameters: json.RawMessage(`{"type":`)}}
	_, err := c.Generate(t.Context(), req)
	checkError(t, err, llm.ErrBadRequest, "json")
	if n.Load() != 0 {
		t.Errorf("%d requests, want 0", n.Load())
	}
}
