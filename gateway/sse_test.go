package gateway_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	ptkopenai "github.com/ptkit/ptk/llm/openai"
)

// TestSDKPassThroughLineEnds: an upstream's event stream is read whatever
// ends its lines (LF, CRLF or CR, as the event-stream format allows): the
// calls written in its text are found and the client gets them as
// tool_calls, with the text and the usage.
func TestSDKPassThroughLineEnds(t *testing.T) {
	t.Parallel()
	chunks := []string{
		`: keep-alive`,
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me check.\n<tool_call>\n{\"name\": \"get_weather\", "},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[{"index":0,"delta":{"content":"\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}`,
		`data: [DONE]`,
	}
	for _, eol := range []struct{ name, s string }{{"LF", "\n"}, {"CRLF", "\r\n"}, {"CR", "\r"}} {
		t.Run(eol.name, func(t *testing.T) {
			t.Parallel()
			raw := strings.Join(chunks, eol.s+eol.s) + eol.s + eol.s
			up := startUpstream(t, &upstream{tools: true, script: []reply{{raw: raw, contentType: "text/event-stream"}}})
			g := newGateway(t, up, agent.ModeAuto)
			p := chat("What is the weather in Paris?", bothTools...)
			p.StreamOptions.IncludeUsage = openai.Bool(true)
			a, err := ask(t, g.client, p, true)
			if err != nil {
				t.Fatalf("the SDK failed: %v (%s)", err, errorText(err))
			}
			if got, want := a.calls(t), []call{{"get_weather", `{"city":"Paris"}`}}; !slices.Equal(got, want) {
				t.Errorf("calls %v, want %v", got, want)
			}
			if a.content() != "Let me check." {
				t.Errorf("content %q, want %q", a.content(), "Let me check.")
			}
			if a.Usage.PromptTokens != 120 || a.Usage.CompletionTokens != 30 {
				t.Errorf("usage %+v, want the upstream's 120 + 30", a.Usage)
			}
		})
	}
}

// TestPassThroughStreamAsItCame: a stream forwarded as it came (native
// mode, nothing read from its text) reaches the client byte for byte —
// CRLF line ends and a comment too — and the request's log line still
// counts its calls and reads its usage.
func TestPassThroughStreamAsItCame(t *testing.T) {
	t.Parallel()
	chunks := []string{
		`: keep-alive`,
		`data: {"id":"chatcmpl-2","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-2","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \"Paris\"}"}}]},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-2","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-2","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`data: {"id":"chatcmpl-2","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}`,
		`data: [DONE]`,
	}
	raw := strings.Join(chunks, "\r\n\r\n") + "\r\n\r\n"
	up := startUpstream(t, &upstream{tools: true, script: []reply{{raw: raw, contentType: "text/event-stream"}}})
	var log syncBuffer
	g := newGateway(t, up, agent.ModeNative, func(c *gateway.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&log, nil))
	})
	body := `{"model":"` + modelName + `","stream":true,"messages":[{"role":"user","content":"Weather and time in Paris?"}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}]}`
	resp, err := http.Post(g.url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v: %s", resp.StatusCode, err, got)
	}
	if string(got) != raw {
		t.Errorf("the client got\n%q\nwant the upstream's stream as it came\n%q", got, raw)
	}
	line := log.String()
	for _, want := range []string{"calls=2", "prompt_tokens=120", "completion_tokens=30", "mode=native"} {
		if !strings.Contains(line, want) {
			t.Errorf("the log line %q lacks %s", line, want)
		}
	}
}

// syncBuffer is a buffer a logger writes to from the handler's goroutine
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPassThroughStreamHeaders: a forwarded stream's headers reach the
// client at once while the model thinks before its first event.
func TestPassThroughStreamHeaders(t *testing.T) {
	t.Parallel()
	events := "data: {\"id\":\"chatcmpl-3\",\"object\":\"chat.completion.chunk\",\"created\":1741576544,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, events)
	}))
	defer up.Close()
	c := ptkopenai.New(up.URL+"/v1", ptkopenai.WithMaxRetries(0))
	s, err := gateway.New(gateway.Config{
		Logger: slog.New(slog.DiscardHandler),
		Resolve: func(string) (gateway.Upstream, error) {
			return gateway.Upstream{Model: c, Forward: c, Mode: agent.ModeNative}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := postCounting(t, s, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"Hello"}]}`, 10*time.Second)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	close(release) // only now: the headers came while the upstream thought
	if got, err := io.ReadAll(resp.Body); err != nil || string(got) != events {
		t.Errorf("got %q, %v; want %q", got, err, events)
	}
}
