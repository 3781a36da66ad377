package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/splitread"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/providertest"
)

var streamTests = []struct {
	file string
	want *llm.Response
}{{
	file: "openai_text.sse",
	want: &llm.Response{
		Content:      "The capital of France is Paris — “la Ville Lumière”.",
		Usage:        ptk.Usage{PromptTokens: 24, CompletionTokens: 16},
		FinishReason: "stop",
		Model:        "gpt-4o-mini-2024-07-18",
	},
}, {
	file: "openai_tools.sse",
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
	file: "interleaved_tools.sse",
	want: &llm.Response{
		Calls: []ptk.Call{
			{ID: "call_a1", Tool: "read_file", Args: json.RawMessage(`{"path": "go.mod"}`)},
			{ID: "call_b2", Tool: "list_dir", Args: json.RawMessage(`{"path": "llm"}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 402, CompletionTokens: 37},
		FinishReason: "tool_calls",
		Model:        "meta-llama/Llama-3.3-70B-Instruct-Turbo",
	},
}, {
	// Ollama numbers every call 0 (ollama/ollama#15457).
	file: "ollama_tools.sse",
	want: &llm.Response{
		Reasoning: "The user wants two files read.",
		Calls: []ptk.Call{
			{ID: "call_n4bhd0o6", Tool: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)},
			{ID: "call_q8x2kd7m", Tool: "read_file", Args: json.RawMessage(`{"path":"README.md"}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 187, CompletionTokens: 61},
		FinishReason: "tool_calls",
		Model:        "qwen3:8b",
	},
}, {
	file: "vllm_reasoning_tools.sse",
	want: &llm.Response{
		Content:      "Let me look.",
		Reasoning:    "I should check the weather.",
		Calls:        []ptk.Call{{ID: "chatcmpl-tool-4e0c2d9f1b8a4f3e", Tool: "get_weather", Args: json.RawMessage(`{"city": "Paris"}`)}},
		Usage:        ptk.Usage{PromptTokens: 221, CompletionTokens: 69},
		FinishReason: "tool_calls",
		Model:        "Qwen/Qwen3-8B",
	},
}, {
	file: "llamacpp_text.sse",
	want: &llm.Response{
		Content:      "Bonjour !",
		Usage:        ptk.Usage{PromptTokens: 17, CompletionTokens: 3},
		FinishReason: "stop",
		Model:        "gpt-3.5-turbo",
	},
}, {
	// DeepSeek's stream with its keep-alive comments, stored with CRLF line ends.
	file: "deepseek_reasoning_crlf.sse",
	want: &llm.Response{
		Content:      "9.9 is greater.",
		Reasoning:    "9.11 < 9.9",
		Usage:        ptk.Usage{PromptTokens: 80, CompletionTokens: 21, CacheReadTokens: 64},
		FinishReason: "stop",
		Model:        "deepseek-reasoner",
	},
}}

func TestStream(t *testing.T) {
	for _, tt := range streamTests {
		t.Run(tt.file, func(t *testing.T) {
			c, n := serve(t, sseHandler(testdata(t, "stream/"+tt.file)))
			got, err := llm.Collect(c.Stream(t.Context(), ask))
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

// collectStream reads an event stream as Stream does, without HTTP.
func collectStream(r io.Reader) (*llm.Response, error) {
	var c llm.Collector
	err := readStream(r, func(ch llm.Chunk) bool {
		c.Add(ch)
		return true
	})
	return c.Response(), err
}

// TestStreamArrival reads each stream whole, a byte at a time and 1 to 3
// bytes at a time: the answer is the same. (TestSSEReader and
// TestStreamSplitOverHTTP split at every offset.)
func TestStreamArrival(t *testing.T) {
	for _, tt := range streamTests {
		t.Run(tt.file, func(t *testing.T) {
			for how, r := range splitread.Readers(testdata(t, "stream/"+tt.file), false) {
				got, err := collectStream(r())
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Fatalf("%s: response (-want +got):\n%s", how, diff)
				}
			}
		})
	}
}

// TestStreamSplitOverHTTP has the server send the stream in two flushed
// writes, split at every offset.
func TestStreamSplitOverHTTP(t *testing.T) {
	t.Parallel()
	tt := streamTests[1]
	in := testdata(t, "stream/"+tt.file)
	var split atomic.Int64
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		i := split.Load()
		sseHandler(in[:i], in[i:])(w, r)
	})
	for i := range len(in) + 1 {
		split.Store(int64(i))
		got, err := llm.Collect(c.Stream(t.Context(), ask))
		if err != nil {
			t.Fatalf("split at %d: %v", i, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Fatalf("split at %d: response (-want +got):\n%s", i, diff)
		}
	}
}

// TestStreamChunks checks the chunks themselves: one per tool-call
// fragment, even two in one event, the model given once.
func TestStreamChunks(t *testing.T) {
	c, _ := serve(t, sseHandler(testdata(t, "stream/interleaved_tools.sse")))
	var got []llm.Chunk
	for ch, err := range c.Stream(t.Context(), ask) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
	}
	call := func(i int, id, tool, args string) llm.Chunk {
		return llm.Chunk{Call: &llm.CallDelta{Index: i, ID: id, Tool: tool, ArgsDelta: args}}
	}
	first := call(0, "call_a1", "read_file", "")
	first.Model = "meta-llama/Llama-3.3-70B-Instruct-Turbo"
	want := []llm.Chunk{
		first,
		call(1, "call_b2", "list_dir", ""),
		call(1, "", "", `{"path":`),
		call(0, "", "", `{"path":`),
		call(0, "", "", ` "go.mod"}`),
		call(1, "", "", ` "llm"}`),
		{FinishReason: "tool_calls"},
		{Usage: &ptk.Usage{PromptTokens: 402, CompletionTokens: 37}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestStreamCallIndex(t *testing.T) {
	// Tool calls without an index are numbered by position; a fragment
	// without an ID continues the call at its index.
	in := `data: {"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\":"}},{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`
	got, err := collectStream(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []ptk.Call{{ID: "a", Tool: "f", Args: json.RawMessage(`{"x":1}`)}, {ID: "b", Tool: "g", Args: json.RawMessage(`{}`)}}
	if diff := cmp.Diff(want, got.Calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// cut returns the first n events of a stream file.
func cut(t *testing.T, file string, n int) []byte {
	events := bytes.SplitAfter(testdata(t, "stream/"+file), []byte("\n\n"))
	return bytes.Join(events[:n], nil)
}

func TestStreamErrors(t *testing.T) {
	const vllmError = `data: {"error": {"object": "error", "message": "This model's maximum context length is 32768 tokens. However, you requested 40100 tokens (100 in the messages, 40000 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": null, "code": 400}}` + "\n\n"
	tests := []struct {
		name     string
		h        http.HandlerFunc
		wantKind error
		wantMsg  string
		want     *llm.Response // what arrived before the error
		requests int32
	}{{
		name:     "OpenRouter error after the first chunk",
		h:        sseHandler(testdata(t, "stream/openrouter_error.sse")),
		wantKind: llm.ErrServer,
		wantMsg:  "Provider disconnected unexpectedly",
		want:     &llm.Response{Content: "Once upon", Model: "meta-llama/llama-3.3-70b-instruct"},
		requests: 1,
	}, {
		name:     "vLLM error event, not retried",
		h:        sseHandler([]byte(vllmError)),
		wantKind: llm.ErrBadRequest,
		wantMsg:  "maximum context length is 32768 tokens",
		want:     &llm.Response{},
		requests: 1,
	}, {
		name:     "typed error event",
		h:        sseHandler([]byte("event: error\ndata: {\"message\":\"quota exceeded\",\"code\":429}\n\n")),
		wantKind: llm.ErrRateLimited,
		wantMsg:  "quota exceeded",
		want:     &llm.Response{},
		requests: 3,
	}, {
		name:     "stream cut before the end",
		h:        sseHandler(cut(t, "openai_text.sse", 3)),
		wantKind: llm.ErrConnection,
		wantMsg:  "ended before the answer was complete",
		want:     &llm.Response{Content: "The capital", Model: "gpt-4o-mini-2024-07-18"},
		requests: 1,
	}, {
		name: "connection broken after the first chunks",
		h: func(w http.ResponseWriter, r *http.Request) {
			sseHandler(cut(t, "openai_text.sse", 2))(w, r)
			panic(http.ErrAbortHandler)
		},
		wantKind: llm.ErrConnection,
		wantMsg:  "unexpected EOF",
		want:     &llm.Response{Content: "The", Model: "gpt-4o-mini-2024-07-18"},
		requests: 1,
	}, {
		name:     "empty stream, retried",
		h:        sseHandler(),
		wantKind: llm.ErrConnection,
		want:     &llm.Response{},
		requests: 3,
	}, {
		name:     "undecodable chunk",
		h:        sseHandler([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"choices\":[{\"delta\":\n\n")),
		wantKind: llm.ErrBadResponse,
		wantMsg:  `unexpected end of JSON input: {"choices":[{"delta":`,
		want:     &llm.Response{Content: "Hi"},
		requests: 1,
	}, {
		name:     "HTTP error",
		h:        reply(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: sk-proj-****abcd.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
		wantKind: llm.ErrAuth,
		wantMsg:  "Incorrect API key provided",
		want:     &llm.Response{},
		requests: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, n := serve(t, tt.h)
			got, err := llm.Collect(c.Stream(t.Context(), ask))
			checkError(t, err, tt.wantKind, tt.wantMsg)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("what arrived (-want +got):\n%s", diff)
			}
			if n.Load() != tt.requests {
				t.Errorf("%d requests, want %d", n.Load(), tt.requests)
			}
		})
	}
}

func TestStreamEndsWithoutDone(t *testing.T) {
	// The answer is whole (it has a finish reason) though [DONE] never came.
	c, _ := serve(t, sseHandler(cut(t, "openai_text.sse", 5)))
	got, err := llm.Collect(c.Stream(t.Context(), ask))
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != streamTests[0].want.Content || got.FinishReason != "stop" {
		t.Errorf("got %+v", got)
	}
}

func TestStreamRetriesBeforeTheFirstChunk(t *testing.T) {
	stream := sseHandler(testdata(t, "stream/openai_text.sse"))
	for _, first := range []http.HandlerFunc{
		reply(http.StatusServiceUnavailable, `{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`),
		sseHandler([]byte(`data: {"id":"gen-1","object":"chat.completion.chunk","created":1741601234,"model":"openai/gpt-4o-mini","choices":[],"error":{"code":502,"message":"Provider returned error"}}` + "\n\n")),
		func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
	} {
		var calls atomic.Int32
		c, n := serve(t, func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				first(w, r)
				return
			}
			stream(w, r)
		})
		got, err := llm.Collect(c.Stream(t.Context(), ask))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(streamTests[0].want, got); diff != "" {
			t.Errorf("response (-want +got):\n%s", diff)
		}
		if n.Load() != 2 {
			t.Errorf("%d requests, want 2", n.Load())
		}
	}
}

func TestStreamJSONAnswer(t *testing.T) {
	// A server that ignores "stream": true answers whole.
	c, _ := serve(t, reply(http.StatusOK, string(testdata(t, "generate/openai_tools.json"))))
	got, err := llm.Collect(c.Stream(t.Context(), ask))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(streamTests[1].want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

func TestStreamCancel(t *testing.T) {
	providertest.StreamCancel(t, served(t), ask, cut(t, "openai_text.sse", 2), "The")
}

func TestStreamBreak(t *testing.T) {
	providertest.StreamBreak(t, served(t), ask, cut(t, "openai_text.sse", 2))
}

func TestStreamDeadline(t *testing.T) {
	providertest.StreamDeadline(t, served(t), ask, cut(t, "openai_text.sse", 2))
}
