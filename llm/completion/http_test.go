package completion

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/splitread"
	"github.com/ptkit/ptk/llm"
)

// endpoint is one of the HTTP models with its real answers.
type endpoint struct {
	pattern     string
	whole, sse  string
	newModel    func(url string) llm.Streamer
	want        *llm.Response
	streamError string // an error event in the middle of a stream
}

var endpoints = map[string]endpoint{
	"LlamaCpp": {
		pattern:  "POST /completion",
		whole:    "llamacpp.json",
		sse:      "llamacpp.sse",
		newModel: func(url string) llm.Streamer { return LlamaCpp(url, fast) },
		want: &llm.Response{
			Content:      "The capital of France is Paris — “la Ville Lumière”.",
			Usage:        ptk.Usage{PromptTokens: 412, CompletionTokens: 16, CacheReadTokens: 384},
			FinishReason: "stop",
			Model:        "qwen2.5-7b-instruct-q4_k_m.gguf",
		},
		streamError: `data: {"error":{"code":500,"message":"Input prompt is too big compared to KV size. Please try increasing KV size.","type":"server_error"}}`,
	},
	"OpenAI": {
		pattern:  "POST /v1/completions",
		whole:    "openai.json",
		sse:      "openai.sse",
		newModel: func(url string) llm.Streamer { return OpenAI(url+"/v1", fast) },
		want: &llm.Response{
			Content:      "The capital of France is Paris — “la Ville Lumière”.",
			Usage:        ptk.Usage{PromptTokens: 412, CompletionTokens: 16},
			FinishReason: "stop",
			Model:        "gpt-3.5-turbo-instruct:20230824-v2",
		},
		streamError: `data: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
	},
}

// TestGenerateAndStream: the whole answer and the stream, however the
// network cuts it, give the same response.
func TestGenerateAndStream(t *testing.T) {
	for name, ep := range endpoints {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url, _ := serve(t, ep.pattern, reply(http.StatusOK, string(readFile(t, ep.whole))))
			got, err := ep.newModel(url).Generate(t.Context(), ask)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ep.want, got); diff != "" {
				t.Errorf("Generate (-want +got):\n%s", diff)
			}

			in := readFile(t, ep.sse)
			var next atomic.Value
			url, _ = serve(t, ep.pattern, func(w http.ResponseWriter, r *http.Request) {
				events(next.Load().(func() io.Reader)())(w, r)
			})
			m := ep.newModel(url)
			for how, r := range splitread.Readers(in, true) {
				next.Store(r)
				got, err := llm.Collect(m.Stream(t.Context(), ask))
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				if diff := cmp.Diff(ep.want, got); diff != "" {
					t.Fatalf("Stream, %s (-want +got):\n%s", how, diff)
				}
			}
		})
	}
}

// TestStreamChunks: text as it arrives, the model once, usage and finish
// reason at the end.
func TestStreamChunks(t *testing.T) {
	url, _ := serve(t, endpoints["LlamaCpp"].pattern, events(bytes.NewReader(readFile(t, "llamacpp.sse"))))
	var got []llm.Chunk
	for ch, err := range LlamaCpp(url).Stream(t.Context(), ask) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
	}
	want := []llm.Chunk{
		{Text: "The"}, {Text: " capital"}, {Text: " of France is Paris"}, {Text: " — “la Ville"}, {Text: " Lumière”."},
		{Model: "qwen2.5-7b-instruct-q4_k_m.gguf", FinishReason: "stop", Usage: &ptk.Usage{PromptTokens: 412, CompletionTokens: 16, CacheReadTokens: 384}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

// TestCutByClient: a server that does not stop at a turn header (an old
// llama.cpp, a proxy that drops "stop") is cut here; a stream is closed at
// once.
func TestCutByClient(t *testing.T) {
	url, _ := serve(t, "POST /completion", reply(http.StatusOK, `{"content":"Paris.\nUSER: And Rome?\nASSISTANT: Rome.","stop":true,"stop_type":"limit","tokens_evaluated":20,"tokens_predicted":14}`))
	got, err := LlamaCpp(url).Generate(t.Context(), ask)
	want := &llm.Response{Content: "Paris.", FinishReason: "stop", Usage: ptk.Usage{PromptTokens: 20, CompletionTokens: 14}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("Generate: %+v, %v; want %+v", got, err, want)
	}

	closed := make(chan struct{})
	url, _ = serve(t, "POST /completion", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, s := range []string{"Paris.", "\n", "USER", ":", " And Rome?"} {
			io.WriteString(w, `data: {"content":"`+strings.ReplaceAll(s, "\n", `\n`)+`","stop":false}`+"\n\n")
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done() // a model that goes on and on
		close(closed)
	})
	got, err = llm.Collect(LlamaCpp(url).Stream(t.Context(), ask))
	if want := (&llm.Response{Content: "Paris.", FinishReason: "stop"}); err != nil || !cmp.Equal(want, got) {
		t.Errorf("Stream: %+v, %v; want %+v", got, err, want)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Error("the stream was not closed")
	}
}

func TestErrors(t *testing.T) {
	type answer struct {
		status int
		body   string
	}
	ok := func(ep endpoint) answer { return answer{http.StatusOK, ep.whole} }
	tests := []struct {
		name     string
		endpoint string
		answers  []answer // the last repeats
		kind     error
		status   int
		message  string
		requests int32
	}{
		{"loading model, retried", "LlamaCpp", []answer{{503, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`}, {}}, nil, 0, "", 2},
		{"loading model, gives up", "LlamaCpp", []answer{{503, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`}}, llm.ErrServer, 503, "Loading model", 3},
		{"wrong key", "LlamaCpp", []answer{{401, `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`}}, llm.ErrAuth, 401, "Invalid API Key (check the API key)", 1},
		{"context exceeded", "LlamaCpp", []answer{{400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`}}, llm.ErrBadRequest, 400, "the request exceeds the available context size, try increasing it", 1},
		{"not llama.cpp", "LlamaCpp", []answer{{404, `404 page not found`}}, llm.ErrModelNotFound, 404, "404 page not found (no such model, or no such endpoint: check the base URL", 1},
		{"unreadable", "LlamaCpp", []answer{{200, `{"content":`}}, llm.ErrBadResponse, 0, "unexpected end of JSON input", 1},
		{"chat model", "OpenAI", []answer{{404, `{"error":{"message":"This is a chat model and not supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?","type":"invalid_request_error","param":"model","code":null}}`}}, llm.ErrModelNotFound, 404, "This is a chat model", 1},
		{"unknown model", "OpenAI", []answer{{404, `{"error":{"message":"The model ` + "`gpt-5-instruct`" + ` does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`}}, llm.ErrModelNotFound, 404, "The model `gpt-5-instruct` does not exist", 1},
		{"rate limited, retried", "OpenAI", []answer{{429, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`}, {}}, nil, 0, "", 2},
		{"vLLM context", "OpenAI", []answer{{400, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5120 tokens.","type":"BadRequestError","param":null,"code":400}`}}, llm.ErrBadRequest, 400, "This model's maximum context length is 4096 tokens", 1},
		{"no choices", "OpenAI", []answer{{200, `{"id":"cmpl-1","object":"text_completion","choices":[]}`}}, llm.ErrBadResponse, 0, "no choices", 1},
		{"error in a 200", "OpenAI", []answer{{200, `{"error":{"message":"upstream failed","code":502}}`}}, llm.ErrServer, 502, "upstream failed", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := endpoints[tt.endpoint]
			var n atomic.Int32
			url, _ := serve(t, ep.pattern, func(w http.ResponseWriter, r *http.Request) {
				a := tt.answers[min(int(n.Add(1)), len(tt.answers))-1]
				if a == (answer{}) {
					a = ok(ep)
				}
				if a.body == ep.whole {
					a.body = string(readFile(t, ep.whole))
				}
				reply(a.status, a.body)(w, r)
			})
			_, err := ep.newModel(url).Generate(t.Context(), ask)
			if n.Load() != tt.requests {
				t.Errorf("%d requests, want %d", n.Load(), tt.requests)
			}
			if tt.kind == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e, ok := errors.AsType[*llm.Error](err)
			if !ok || !errors.Is(err, tt.kind) || e.Status != tt.status || !strings.Contains(e.Message, tt.message) {
				t.Fatalf("err = %#v, want kind %v, status %d, message with %q", err, tt.kind, tt.status, tt.message)
			}
		})
	}
}

// TestStreamErrors: an error in the middle of a stream ends it, without a
// retry; so does a stream cut short.
func TestStreamErrors(t *testing.T) {
	for name, ep := range endpoints {
		t.Run(name, func(t *testing.T) {
			in := readFile(t, ep.sse)
			first := in[:bytes.Index(in, []byte("\n\n"))+2]
			for _, tt := range []struct {
				body string
				kind error
			}{
				{string(first) + ep.streamError + "\n\n", llm.ErrServer},
				{string(first), llm.ErrConnection},
				{string(first) + "data: {\"content\n\n", llm.ErrBadResponse},
			} {
				url, n := serve(t, ep.pattern, events(strings.NewReader(tt.body)))
				got, err := llm.Collect(ep.newModel(url).Stream(t.Context(), ask))
				if !errors.Is(err, tt.kind) || n.Load() != 1 {
					t.Errorf("%q: %v after %d requests, want %v after 1", tt.body, err, n.Load(), tt.kind)
				}
				if got.Content != "The" {
					t.Errorf("what arrived before the error: %q", got.Content)
				}
			}
		})
	}
}

// TestCancel: canceling ctx ends a stream that is waiting for the server at
// once, with ctx's error.
func TestCancel(t *testing.T) {
	for name, ep := range endpoints {
		t.Run(name, func(t *testing.T) {
			in := readFile(t, ep.sse)
			url, _ := serve(t, ep.pattern, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(in[:bytes.Index(in, []byte("\n\n"))+2])
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			start := time.Now()
			var err error
			for _, e := range ep.newModel(url).Stream(ctx, ask) {
				cancel()
				if e != nil {
					err = e
				}
			}
			if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
				t.Errorf("%v after %v", err, time.Since(start))
			}
		})
	}
}
