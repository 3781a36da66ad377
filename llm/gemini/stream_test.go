package gemini

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
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
	file: "text.sse",
	want: &llm.Response{
		Content:      "The capital of France is Paris — “la Ville Lumière”.",
		Usage:        ptk.Usage{PromptTokens: 8, CompletionTokens: 43},
		FinishReason: "STOP",
		Model:        "gemini-2.5-flash",
	},
}, {
	file: "thoughts.sse",
	want: &llm.Response{
		Content:      "9.9 is greater.",
		Reasoning:    "**Comparing the Numbers**\n\nI compare 9.11 and 9.9 digit by digit.\n**Concluding**\n\n0.9 is more than 0.11.\n",
		Usage:        ptk.Usage{PromptTokens: 10, CompletionTokens: 101},
		FinishReason: "STOP",
		Model:        "gemini-2.5-pro",
	},
}, {
	file: "function_calls.sse",
	want: &llm.Response{
		Content: "Let me check both.",
		Calls: []ptk.Call{
			{ID: "call_1", Tool: "get_weather", Args: json.RawMessage(`{"city":"Paris","unit":"celsius"}`)},
			{ID: "call_2", Tool: "get_time", Args: json.RawMessage(`{"tz":"Europe/Paris"}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 312, CompletionTokens: 88, CacheReadTokens: 256},
		FinishReason: "STOP",
		Model:        "gemini-2.5-flash",
	},
}, {
	file: "gemini3_calls.sse",
	want: &llm.Response{
		Calls: []ptk.Call{
			{ID: "0k3xq7ga", Tool: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)},
			{ID: "w9f2bq1c", Tool: "list_dir", Args: json.RawMessage(`{}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 402, CompletionTokens: 41},
		FinishReason: "STOP",
		Model:        "gemini-3-flash-preview",
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

// TestStreamArrival reads each stream whole, a byte at a time, 1 to 3
// bytes at a time and split in two at every offset: the answer is the same.
func TestStreamArrival(t *testing.T) {
	for _, tt := range streamTests {
		t.Run(tt.file, func(t *testing.T) {
			for how, r := range splitread.Readers(testdata(t, "stream/"+tt.file), true) {
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

// TestStreamSplitOverHTTP has the server send a stream in two flushed
// writes, split at every offset.
func TestStreamSplitOverHTTP(t *testing.T) {
	t.Parallel()
	tt := streamTests[2]
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

// TestStreamChunks checks the chunks themselves: the text as it comes,
// each call whole with its index, the usage once, last.
func TestStreamChunks(t *testing.T) {
	c, _ := serve(t, sseHandler(testdata(t, "stream/function_calls.sse")))
	var got []llm.Chunk
	for ch, err := range c.Stream(t.Context(), ask) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
	}
	want := []llm.Chunk{
		{Text: "Let me check both.", Model: "gemini-2.5-flash"},
		{Call: &llm.CallDelta{Index: 0, ID: "call_1", Tool: "get_weather", ArgsDelta: `{"city":"Paris","unit":"celsius"}`}},
		{Call: &llm.CallDelta{Index: 1, ID: "call_2", Tool: "get_time", ArgsDelta: `{"tz":"Europe/Paris"}`}, FinishReason: "STOP"},
		{Usage: &ptk.Usage{PromptTokens: 312, CompletionTokens: 88, CacheReadTokens: 256}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

// cut returns the first n events of a stream file.
func cut(t *testing.T, file string, n int) []byte {
	events := bytes.SplitAfter(testdata(t, "stream/"+file), []byte("\r\n\r\n"))
	return bytes.Join(events[:n], nil)
}

func TestStreamErrors(t *testing.T) {
	const overloaded = `{"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}`
	tests := []struct {
		name     string
		h        http.HandlerFunc
		wantKind error
		wantMsg  string
		want     *llm.Response // what arrived before the error
		requests int32
	}{{
		name:     "error event after the first chunk",
		h:        sseHandler(cut(t, "text.sse", 1), []byte("data: "+overloaded+"\r\n\r\n")),
		wantKind: llm.ErrServer,
		wantMsg:  "The model is overloaded",
		want:     &llm.Response{Content: "The capital of France", Model: "gemini-2.5-flash"},
		requests: 1,
	}, {
		name:     "stream cut before the end",
		h:        sseHandler(cut(t, "text.sse", 2)),
		wantKind: llm.ErrConnection,
		wantMsg:  "ended before the answer was complete",
		want:     &llm.Response{Content: "The capital of France is Paris — “la Ville", Model: "gemini-2.5-flash"},
		requests: 1,
	}, {
		name: "connection broken after the first chunk",
		h: func(w http.ResponseWriter, r *http.Request) {
			sseHandler(cut(t, "text.sse", 1))(w, r)
			panic(http.ErrAbortHandler)
		},
		wantKind: llm.ErrConnection,
		wantMsg:  "unexpected EOF",
		want:     &llm.Response{Content: "The capital of France", Model: "gemini-2.5-flash"},
		requests: 1,
	}, {
		name:     "empty stream, retried",
		h:        sseHandler(),
		wantKind: llm.ErrConnection,
		want:     &llm.Response{},
		requests: 3,
	}, {
		name:     "undecodable event",
		h:        sseHandler([]byte("data: {\"candidates\": [{\"content\": \r\n\r\n")),
		wantKind: llm.ErrBadResponse,
		wantMsg:  `unexpected end of JSON input: {"candidates": [{"content":`,
		want:     &llm.Response{},
		requests: 1,
	}, {
		name:     "HTTP error",
		h:        reply(http.StatusBadRequest, apiKeyInvalid),
		wantKind: llm.ErrAuth,
		wantMsg:  "API key not valid",
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

func TestStreamRetriesBeforeTheFirstChunk(t *testing.T) {
	stream := sseHandler(testdata(t, "stream/text.sse"))
	for _, first := range []http.HandlerFunc{
		reply(http.StatusServiceUnavailable, `{"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}`),
		sseHandler([]byte(`data: {"error": {"code": 500,"message": "An internal error has occurred.","status": "INTERNAL"}}` + "\r\n\r\n")),
		func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
	} {
		c, n := serve(t, counting(stream, first))
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

func TestStreamCancel(t *testing.T) {
	providertest.StreamCancel(t, served(t), ask, cut(t, "text.sse", 1), "The capital of France")
}

func TestStreamBreak(t *testing.T) {
	providertest.StreamBreak(t, served(t), ask, cut(t, "text.sse", 1))
}

func TestStreamDeadline(t *testing.T) {
	providertest.StreamDeadline(t, served(t), ask, cut(t, "text.sse", 1))
}
