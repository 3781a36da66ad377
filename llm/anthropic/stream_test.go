package anthropic

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
		Usage:        ptk.Usage{PromptTokens: 1860, CompletionTokens: 17, CacheReadTokens: 1846},
		FinishReason: "end_turn",
		Model:        "claude-sonnet-4-5-20250929",
	},
}, {
	// A text block, then two tool_use blocks, the second without any
	// input_json_delta.
	file: "tools.sse",
	want: &llm.Response{
		Content: "Okay, let's check the weather and the time in San Francisco, CA:",
		Calls: []ptk.Call{
			{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Tool: "get_weather", Args: json.RawMessage(`{"location": "San Francisco, CA", "unit": "fahrenheit"}`)},
			{ID: "toolu_01CeGs4vK5U7fTSq3rbn9Wvx", Tool: "get_time", Args: json.RawMessage(`{}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 2008, CompletionTokens: 89, CacheWriteTokens: 1536},
		FinishReason: "tool_use",
		Model:        "claude-sonnet-4-5-20250929",
	},
}, {
	// Extended thinking with its signature_delta; the message_delta repeats
	// the input counts, as the API does since 2025.
	file: "thinking.sse",
	want: &llm.Response{
		Content:      "27 * 453 = 12,231",
		Reasoning:    "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3",
		Usage:        ptk.Usage{PromptTokens: 14017, CompletionTokens: 131, CacheReadTokens: 13993, CacheWriteTokens: 22},
		FinishReason: "end_turn",
		Model:        "claude-sonnet-4-20250514",
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
// bytes at a time and in two parts split at every offset: the answer is
// always the one the whole stream gives, and the one expected.
func TestStreamArrival(t *testing.T) {
	for _, tt := range streamTests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			in := testdata(t, "stream/"+tt.file)
			whole, err := collectStream(bytes.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, whole); diff != "" {
				t.Fatalf("whole: response (-want +got):\n%s", diff)
			}
			for how, r := range splitread.Readers(in, true) {
				got, err := collectStream(r())
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				if diff := cmp.Diff(whole, got); diff != "" {
					t.Fatalf("%s: response (-whole +got):\n%s", how, diff)
				}
			}
		})
	}
}

// TestStreamSplitOverHTTP has the server send the stream in two flushed
// writes, split at every offset.
func TestStreamSplitOverHTTP(t *testing.T) {
	t.Parallel()
	tt := streamTests[0]
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

// TestStreamChunks checks the chunks themselves: the model first, one per
// text or argument fragment, a call's first chunk with its ID and tool,
// calls numbered among the tool_use blocks, the usage and stop reason last.
func TestStreamChunks(t *testing.T) {
	c, _ := serve(t, sseHandler(testdata(t, "stream/tools.sse")))
	var got []llm.Chunk
	for ch, err := range c.Stream(t.Context(), ask) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
	}
	text := func(s string) llm.Chunk { return llm.Chunk{Text: s} }
	call := func(i int, id, tool, args string) llm.Chunk {
		return llm.Chunk{Call: &llm.CallDelta{Index: i, ID: id, Tool: tool, ArgsDelta: args}}
	}
	want := []llm.Chunk{
		{Model: "claude-sonnet-4-5-20250929"},
		text("Okay"), text(","), text(" let"), text("'s"), text(" check"), text(" the"), text(" weather and the time in San Francisco, CA:"),
		call(0, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", ""),
		call(0, "", "", `{"location":`),
		call(0, "", "", ` "San`),
		call(0, "", "", ` Francisc`),
		call(0, "", "", `o,`),
		call(0, "", "", ` CA"`),
		call(0, "", "", `, `),
		call(0, "", "", `"unit": "fah`),
		call(0, "", "", `renheit"}`),
		call(1, "toolu_01CeGs4vK5U7fTSq3rbn9Wvx", "get_time", ""),
		{Usage: &ptk.Usage{PromptTokens: 2008, CompletionTokens: 89, CacheWriteTokens: 1536}, FinishReason: "tool_use"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

// cut returns the first n events of a stream file.
func cut(t *testing.T, file string, n int) []byte {
	events := bytes.SplitAfter(testdata(t, "stream/"+file), []byte("\n\n"))
	return bytes.Join(events[:n], nil)
}

const overloadedEvent = "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name     string
		h        http.HandlerFunc
		wantKind error
		wantMsg  string
		want     *llm.Response // what arrived before the error
		requests int32
	}{{
		name:     "overloaded after the first chunks, with a ping",
		h:        sseHandler(testdata(t, "stream/overloaded.sse")),
		wantKind: llm.ErrServer,
		wantMsg:  "Overloaded",
		want:     &llm.Response{Content: "Once upon", Model: "claude-sonnet-4-5-20250929"},
		requests: 1,
	}, {
		name:     "overloaded before the first chunk, retried",
		h:        sseHandler([]byte(overloadedEvent)),
		wantKind: llm.ErrServer,
		wantMsg:  "Overloaded",
		want:     &llm.Response{},
		requests: 3,
	}, {
		name:     "rate limited before the first chunk, retried",
		h:        sseHandler([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of requests has exceeded your per-minute rate limit\"}}\n\n")),
		wantKind: llm.ErrRateLimited,
		wantMsg:  "per-minute rate limit",
		want:     &llm.Response{},
		requests: 3,
	}, {
		name:     "invalid request event, not retried",
		h:        sseHandler([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 210443 tokens > 200000 maximum\"}}\n\n")),
		wantKind: llm.ErrBadRequest,
		wantMsg:  "prompt is too long",
		want:     &llm.Response{},
		requests: 1,
	}, {
		name:     "unknown error type",
		h:        sseHandler(cut(t, "text.sse", 1), []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"brand_new_error\",\"message\":\"Something new\"}}\n\n")),
		wantKind: llm.ErrServer,
		wantMsg:  "Something new",
		want:     &llm.Response{Model: "claude-sonnet-4-5-20250929"},
		requests: 1,
	}, {
		name:     "stream cut before the end",
		h:        sseHandler(cut(t, "text.sse", 4)),
		wantKind: llm.ErrConnection,
		wantMsg:  "ended before the answer was complete",
		want:     &llm.Response{Content: "The capital", Model: "claude-sonnet-4-5-20250929"},
		requests: 1,
	}, {
		name: "connection broken after the first chunks",
		h: func(w http.ResponseWriter, r *http.Request) {
			sseHandler(cut(t, "text.sse", 4))(w, r)
			panic(http.ErrAbortHandler)
		},
		wantKind: llm.ErrConnection,
		wantMsg:  "unexpected EOF",
		want:     &llm.Response{Content: "The capital", Model: "claude-sonnet-4-5-20250929"},
		requests: 1,
	}, {
		name:     "empty stream, retried",
		h:        sseHandler(),
		wantKind: llm.ErrConnection,
		want:     &llm.Response{},
		requests: 3,
	}, {
		name:     "undecodable event",
		h:        sseHandler(cut(t, "text.sse", 1), []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\n\n")),
		wantKind: llm.ErrBadResponse,
		wantMsg:  `unexpected end of JSON input: {"type":"content_block_delta","index":0,`,
		want:     &llm.Response{Model: "claude-sonnet-4-5-20250929"},
		requests: 1,
	}, {
		name:     "arguments for a block that is no tool_use",
		h:        sseHandler(cut(t, "text.sse", 2), []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n")),
		wantKind: llm.ErrBadResponse,
		wantMsg:  "input_json_delta for content block 0",
		want:     &llm.Response{Model: "claude-sonnet-4-5-20250929"},
		requests: 1,
	}, {
		name:     "HTTP error",
		h:        reply(http.StatusUnauthorized, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`),
		wantKind: llm.ErrAuth,
		wantMsg:  "invalid x-api-key",
		want:     &llm.Response{},
		requests: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, n := serve(t, tt.h)
			got, err := llm.Collect(c.Stream(t.Context(), ask))
			e := checkError(t, err, tt.wantKind, tt.wantMsg)
			if e.Status != 0 && e.Kind != llm.ErrAuth {
				t.Errorf("status = %d for an error in a 200 answer, want 0", e.Status)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("what arrived (-want +got):\n%s", diff)
			}
			if n.Load() != tt.requests {
				t.Errorf("%d requests, want %d", n.Load(), tt.requests)
			}
		})
	}
}

func TestStreamEndsWithoutMessageStop(t *testing.T) {
	// The answer is whole (it has a stop reason) though message_stop never
	// came.
	events := bytes.Count(testdata(t, "stream/tools.sse"), []byte("\n\n"))
	c, _ := serve(t, sseHandler(cut(t, "tools.sse", events-1)))
	got, err := llm.Collect(c.Stream(t.Context(), ask))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(streamTests[1].want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

func TestStreamRetriesBeforeTheFirstChunk(t *testing.T) {
	stream := sseHandler(testdata(t, "stream/text.sse"))
	for name, first := range map[string]http.HandlerFunc{
		"529":         reply(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CV3q6qYvDLzYeMbKkVQvX"}`),
		"error event": sseHandler([]byte(overloadedEvent)),
		"reset":       func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
	} {
		t.Run(name, func(t *testing.T) {
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
		})
	}
}

func TestStreamJSONAnswer(t *testing.T) {
	// A server that ignores "stream": true answers whole.
	c, _ := serve(t, reply(http.StatusOK, string(testdata(t, "generate/tools.json"))))
	got, err := llm.Collect(c.Stream(t.Context(), ask))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(generateTests[1].want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

func TestStreamCancel(t *testing.T) {
	providertest.StreamCancel(t, served(t), ask, cut(t, "text.sse", 4), "The capital")
}

func TestStreamBreak(t *testing.T) {
	providertest.StreamBreak(t, served(t), ask, cut(t, "text.sse", 4))
}

func TestStreamDeadline(t *testing.T) {
	providertest.StreamDeadline(t, served(t), ask, cut(t, "text.sse", 4))
}
