package gemini

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

// serve starts a server that answers POST /v1beta/models/{call} with h,
// and returns a client for it (with short pauses between retries) and the
// count of requests the server received.
func serve(t *testing.T, h http.HandlerFunc, opts ...Option) (*Client, *atomic.Int32) {
	t.Helper()
	url, n := providertest.Serve(t, "POST /v1beta/models/{call}", h)
	opts = append([]Option{WithBackoff(time.Millisecond, 5*time.Millisecond)}, opts...)
	return New(url+"/", opts...), n
}

// The helpers every provider's tests share.
var (
	testdata   = providertest.Testdata
	sseHandler = providertest.SSE
	counting   = providertest.Counting
	checkError = providertest.CheckError
)

// reply answers with status and body, as JSON with the charset the API
// names ("application/json; charset=UTF-8").
func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

var ask = llm.Request{Model: "gemini-2.5-flash", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "What is the capital of France?"}}}

func TestRequestBody(t *testing.T) {
	zero, weather := 0.0, ptk.ToolInfo{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Parameters:  json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"city":{"type":"string"},"unit":{"type":["string","null"],"enum":["celsius","fahrenheit"]}},"required":["city"],"additionalProperties":false}`),
	}
	const (
		question    = `{"role":"user","parts":[{"text":"What is the capital of France?"}]}`
		weatherDecl = `{"name":"get_weather","description":"Current weather for a city.","parametersJsonSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"city":{"type":"string"},"unit":{"type":["string","null"],"enum":["celsius","fahrenheit"]}},"required":["city"],"additionalProperties":false}}`
	)
	withChoice := func(choice string) llm.Request {
		return llm.Request{Model: "m", Messages: ask.Messages, Tools: []ptk.ToolInfo{weather}, ToolChoice: choice}
	}
	tests := []struct {
		name   string
		req    llm.Request
		opts   []Option
		stream bool
		want   string
	}{{
		name: "conversation with calls and results",
		req: llm.Request{
			Model: "models/gemini-2.5-flash",
			Messages: []ptk.Message{
				{Role: ptk.RoleSystem, Content: "You are terse."},
				{Role: ptk.RoleSystem, Content: "Answer in English."},
				{Role: ptk.RoleUser, Content: "Weather in Paris and Oslo?"},
				{Role: ptk.RoleAssistant, Content: "Checking.", Calls: []ptk.Call{
					{ID: "call_1", Tool: "get_weather", Args: json.RawMessage(`{"city": "Paris"}`)},
					{ID: "call_2", Tool: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)},
				}},
				{Role: ptk.RoleTool, CallID: "call_1", Tool: "get_weather", Content: "18°C, sunny"},
				{Role: ptk.RoleTool, CallID: "call_2", Content: "service unavailable", IsError: true},
				{Role: ptk.RoleUser, Content: "And now?"},
				{Role: ptk.RoleAssistant, Calls: []ptk.Call{{ID: "0k3xq7ga", Tool: "get_weather", Args: json.RawMessage(`not json`)}}},
				{Role: ptk.RoleTool, CallID: "0k3xq7ga", Tool: "get_weather", Content: ""},
				{Role: ptk.RoleAssistant, Content: ""},
				{Role: ptk.RoleUser, Content: "Thanks."},
			},
		},
		want: `{
			"systemInstruction":{"parts":[{"text":"You are terse."},{"text":"Answer in English."}]},
			"contents":[
				{"role":"user","parts":[{"text":"Weather in Paris and Oslo?"}]},
				{"role":"model","parts":[
					{"text":"Checking."},
					{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"skip_thought_signature_validator"},
					{"functionCall":{"name":"get_weather","args":{"city":"Oslo"}}}]},
				{"role":"user","parts":[
					{"functionResponse":{"name":"get_weather","response":{"content":"18°C, sunny"}}},
					{"functionResponse":{"name":"get_weather","response":{"error":"service unavailable"}}},
					{"text":"And now?"}]},
				{"role":"model","parts":[
					{"functionCall":{"id":"0k3xq7ga","name":"get_weather","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]},
				{"role":"user","parts":[
					{"functionResponse":{"id":"0k3xq7ga","name":"get_weather","response":{"content":""}}},
					{"text":"Thanks."}]}]}`,
	}, {
		name: "temperature 0, max tokens, stop",
		req:  llm.Request{Model: "m", Messages: ask.Messages, Temperature: &zero, MaxTokens: 256, Stop: []string{"</answer>"}},
		want: `{"contents":[` + question + `],"generationConfig":{"temperature":0,"maxOutputTokens":256,"stopSequences":["</answer>"]}}`,
	}, {
		name: "response schema",
		req:  llm.Request{Model: "m", Messages: ask.Messages, ResponseSchema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":["string","null"]}},"additionalProperties":false}`)},
		want: `{"contents":[` + question + `],"generationConfig":{"responseMimeType":"application/json",
			"responseJsonSchema":{"type":"object","properties":{"answer":{"type":["string","null"]}},"additionalProperties":false}}}`,
	}, {
		name: "response schema converted to the OpenAPI subset",
		req:  llm.Request{Model: "m", Messages: ask.Messages, ResponseSchema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":["string","null"]}},"additionalProperties":false}`)},
		opts: []Option{WithOpenAPISchema()},
		want: `{"contents":[` + question + `],"generationConfig":{"responseMimeType":"application/json",
			"responseSchema":{"type":"object","properties":{"answer":{"type":"string","nullable":true}}}}}`,
	}, {
		name: "no temperature, negative max tokens",
		req:  llm.Request{Model: "m", Messages: ask.Messages, MaxTokens: -1},
		want: `{"contents":[` + question + `]}`,
	}, {
		name: "tools as JSON Schema, no tool choice",
		req:  llm.Request{Model: "m", Messages: ask.Messages, Tools: []ptk.ToolInfo{weather, {Name: "list_files"}}},
		want: `{"contents":[` + question + `],"tools":[{"functionDeclarations":[` + weatherDecl + `,{"name":"list_files"}]}]}`,
	}, {
		name: "tools converted to the OpenAPI subset",
		req: llm.Request{Model: "m", Messages: ask.Messages, Tools: []ptk.ToolInfo{
			weather,
			{Name: "list_files", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		}},
		opts: []Option{WithOpenAPISchema()},
		want: `{"contents":[` + question + `],"tools":[{"functionDeclarations":[
			{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{
				"city":{"type":"string"},"unit":{"type":"string","nullable":true,"enum":["celsius","fahrenheit"]}},"required":["city"]}},
			{"name":"list_files"}]}]}`,
	}, {
		name: "tool choice auto",
		req:  withChoice("auto"),
		want: `{"contents":[` + question + `],"tools":[{"functionDeclarations":[` + weatherDecl + `]}]}`,
	}, {
		name: "tool choice none",
		req:  withChoice("none"),
		want: `{"contents":[` + question + `],"tools":[{"functionDeclarations":[` + weatherDecl + `]}],"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`,
	}, {
		name: "tool choice required",
		req:  withChoice("required"),
		want: `{"contents":[` + question + `],"tools":[{"functionDeclarations":[` + weatherDecl + `]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`,
	}, {
		name: "tool choice by name",
		req:  withChoice("get_weather"),
		want: `{"contents":[` + question + `],"tools":[{"functionDeclarations":[` + weatherDecl +
			`]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_weather"]}}}`,
	}, {
		name: "tool choice without tools",
		req:  llm.Request{Model: "m", Messages: ask.Messages, ToolChoice: "required"},
		want: `{"contents":[` + question + `]}`,
	}, {
		name:   "stream",
		req:    ask,
		stream: true,
		want:   `{"contents":[` + question + `]}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			var call string
			c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				body, _ = io.ReadAll(r.Body)
				call = r.PathValue("call") + "?" + r.URL.RawQuery
				if tt.stream {
					sseHandler(testdata(t, "stream/text.sse"))(w, r)
					return
				}
				reply(http.StatusOK, string(testdata(t, "generate/text.json")))(w, r)
			}, tt.opts...)
			var err error
			if tt.stream {
				_, err = llm.Collect(c.Stream(t.Context(), tt.req))
			} else {
				_, err = c.Generate(t.Context(), tt.req)
			}
			if err != nil {
				t.Fatal(err)
			}
			model := tt.req.Model
			if model == "models/gemini-2.5-flash" {
				model = "gemini-2.5-flash"
			}
			wantCall := model + ":generateContent?"
			if tt.stream {
				wantCall = model + ":streamGenerateContent?alt=sse"
			}
			if call != wantCall {
				t.Errorf("called %q, want %q", call, wantCall)
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
		{"key", []Option{WithAPIKey("AIza-test")}, true, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"text/event-stream"}, "X-Goog-Api-Key": {"AIza-test"},
		}},
		{"extra headers", []Option{WithAPIKey("AIza-test"), WithHeader("X-Goog-Api-Key", "other"), WithHeader("X-Goog-User-Project", "p")}, false, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"application/json"}, "X-Goog-Api-Key": {"other"}, "X-Goog-User-Project": {"p"},
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
			for _, k := range []string{"Content-Type", "Accept", "X-Goog-Api-Key", "X-Goog-User-Project", "Authorization"} {
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
		"":                             DefaultBaseURL,
		"http://localhost:8080/":       "http://localhost:8080",
		"https://proxy.example/gemini": "https://proxy.example/gemini",
	} {
		if got := New(in).BaseURL(); got != want {
			t.Errorf("New(%q).BaseURL() = %q, want %q", in, got, want)
		}
	}
}

func TestEndpoint(t *testing.T) {
	for _, tt := range []struct{ base, model, want string }{
		{"", "gemini-2.5-flash", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"},
		{"", "models/gemini-2.5-flash", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"},
		{"https://generativelanguage.googleapis.com/v1beta/", "gemini-2.5-pro", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent"},
		{"https://proxy.example/google/v1", "gemini-2.5-pro", "https://proxy.example/google/v1/models/gemini-2.5-pro:generateContent"},
	} {
		got, err := New(tt.base).endpoint(tt.model, "generateContent")
		if err != nil || got != tt.want {
			t.Errorf("New(%q).endpoint(%q) = %q, %v; want %q", tt.base, tt.model, got, err, tt.want)
		}
	}
}

var generateTests = []providertest.Case{{
	File: "text.json",
	Want: &llm.Response{
		Content:      "The capital of France is Paris.",
		Usage:        ptk.Usage{PromptTokens: 8, CompletionTokens: 33},
		FinishReason: "STOP",
		Model:        "gemini-2.5-flash",
	},
}, {
	File: "function_calls.json",
	Want: &llm.Response{
		Calls: []ptk.Call{
			{ID: "call_1", Tool: "get_weather", Args: json.RawMessage(`{"city":"Paris","unit":"celsius"}`)},
			{ID: "call_2", Tool: "get_time", Args: json.RawMessage(`{"tz":"Europe/Paris"}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 2150, CompletionTokens: 140, CacheReadTokens: 2048},
		FinishReason: "STOP",
		Model:        "gemini-2.5-flash",
	},
}, {
	File: "thoughts.json",
	Want: &llm.Response{
		Content:      "Paris is the capital of France.",
		Reasoning:    "**Pinpointing the Answer**\n\nThe user wants the capital of France. That is Paris; no tool is needed.\n",
		Usage:        ptk.Usage{PromptTokens: 10, CompletionTokens: 198},
		FinishReason: "STOP",
		Model:        "gemini-2.5-pro",
	},
}, {
	File: "call_ids.json",
	Want: &llm.Response{
		Content: "I'll read both files.",
		Calls: []ptk.Call{
			{ID: "0k3xq7ga", Tool: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)},
			{ID: "w9f2bq1c", Tool: "list_dir", Args: json.RawMessage(`{}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 402, CompletionTokens: 41},
		FinishReason: "STOP",
		Model:        "gemini-3-flash-preview",
	},
}, {
	File: "max_tokens.json",
	Want: &llm.Response{
		Usage:        ptk.Usage{PromptTokens: 12, CompletionTokens: 63},
		FinishReason: "MAX_TOKENS",
		Model:        "gemini-2.5-flash",
	},
}}

func TestBlockedPrompt(t *testing.T) {
	blocked := string(testdata(t, "generate/blocked.json"))
	c, n := serve(t, reply(http.StatusOK, blocked))
	_, err := c.Generate(t.Context(), ask)
	checkError(t, err, llm.ErrBadRequest, "the prompt was blocked: SAFETY")
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}
	c, _ = serve(t, sseHandler([]byte("data: "+string(compact(t, blocked))+"\r\n\r\n")))
	_, err = llm.Collect(c.Stream(t.Context(), ask))
	checkError(t, err, llm.ErrBadRequest, "the prompt was blocked: SAFETY")
}

func compact(t *testing.T, s string) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return b
}

func TestInvalidRequest(t *testing.T) {
	c, n := serve(t, reply(http.StatusOK, "{}"))
	req := ask
	req.Tools = []ptk.ToolInfo{{Name: "broken", Parameters: json.RawMessage(`{"type":`)}}
	_, err := c.Generate(t.Context(), req)
	checkError(t, err, llm.ErrBadRequest, "json")

	c2, _ := serve(t, reply(http.StatusOK, "{}"), WithOpenAPISchema())
	_, err = c2.Generate(t.Context(), req)
	checkError(t, err, llm.ErrBadRequest, "parameters of tool broken")

	req = ask
	req.Model = ""
	_, err = c.Generate(t.Context(), req)
	checkError(t, err, llm.ErrBadRequest, "no model")
	if n.Load() != 0 {
		t.Errorf("%d requests, want 0", n.Load())
	}
}
