package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/llm"
)

// gatedModel streams its first piece, then waits for release before the
// rest: a model that is slow after its first token.
type gatedModel struct {
	first, rest string
	release     chan struct{}
}

var _ llm.Streamer = (*gatedModel)(nil)

func (m *gatedModel) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return &llm.Response{Content: m.first + m.rest, FinishReason: "stop"}, nil
}

func (m *gatedModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		if !yield(llm.Chunk{Text: m.first}, nil) {
			return
		}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(llm.Chunk{}, ctx.Err())
			return
		}
		if yield(llm.Chunk{Text: m.rest}, nil) {
			yield(llm.Chunk{FinishReason: "stop", Usage: &ptk.Usage{PromptTokens: 10, CompletionTokens: 5}}, nil)
		}
	}
}

// flushCounter counts the flushes of the answers it passes on.
type flushCounter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (f flushCounter) Flush() {
	f.n.Add(1)
	f.ResponseWriter.(http.Flusher).Flush()
}

// TestStreamFlushesPerPiece: what one piece of a model's stream makes (here
// text and a whole call: several events in every API) goes to the client
// in one write, at once, before the gateway waits for the next piece; it is
// not held back until the answer ends, nor written event by event.
// postCounting posts body to s at path through a test server that counts
// the handler's flushes; the answer's body is closed when the test ends.
func postCounting(t *testing.T, s http.Handler, path, body string, timeout time.Duration) (*http.Response, *atomic.Int64) {
	t.Helper()
	flushes := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(flushCounter{w, flushes}, r)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, flushes
}

func TestStreamFlushesPerPiece(t *testing.T) {
	t.Parallel()
	for _, api := range []struct {
		name, path, body string
		// callDone is how the stream says the call is complete.
		callDone string
	}{
		{"chat", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[` + flushWeatherTool + `]}`, `"arguments":"{\"city\":\"Paris\"}"`},
		{"messages", "/v1/messages", `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[{"name":"get_weather","input_schema":` + flushWeatherSchema + `}]}`, `"type":"content_block_stop","index":1`},
		{"responses", "/v1/responses", `{"model":"m","stream":true,"input":"Weather in Paris?","tools":[{"type":"function","name":"get_weather","parameters":` + flushWeatherSchema + `}]}`, `"type":"response.output_item.done"`},
	} {
		t.Run(api.name, func(t *testing.T) {
			t.Parallel()
			m := &gatedModel{
				first:   "Let me look.\n<PTK_CALL>\n{\"tool\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}\n</PTK_CALL>",
				rest:    " ",
				release: make(chan struct{}),
			}
			s, err := gateway.New(gateway.Config{DefaultModel: "m", Logger: slog.New(slog.DiscardHandler),
				Resolve: func(string) (gateway.Upstream, error) { return gateway.Upstream{Model: m, Mode: agent.ModePTK}, nil }})
			if err != nil {
				t.Fatal(err)
			}
			resp, flushes := postCounting(t, s, api.path, api.body, 20*time.Second)
			var once sync.Once
			var before int64 = -1
			sc := bufio.NewScanner(resp.Body)
			var all strings.Builder
			for sc.Scan() {
				all.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), api.callDone) {
					// The call arrived while the model still waits.
					once.Do(func() {
						before = flushes.Load()
						close(m.release)
					})
				}
			}
			if before < 0 {
				t.Fatalf("the stream ended without the call (%v):\n%s", sc.Err(), all.String())
			}
			if before != 1 {
				t.Errorf("%d flushes sent the first piece's events, want 1:\n%s", before, all.String())
			}
			if !strings.Contains(all.String(), "Let me look.") {
				t.Errorf("the text is missing:\n%s", all.String())
			}
		})
	}
}

const (
	flushWeatherSchema = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	flushWeatherTool   = `{"type":"function","function":{"name":"get_weather","parameters":` + flushWeatherSchema + `}}`
)

// blockingObserver's Done waits until the client has read the whole
// answer: an Observer that writes a slow trace.
type blockingObserver struct{ release chan struct{} }

func (o blockingObserver) Run(gateway.Upstream, []ptk.Message) func(agent.Event, error) { return nil }

func (o blockingObserver) Done(gateway.Exchange) {
	select {
	case <-o.release:
	case <-time.After(20 * time.Second):
	}
}

// TestStreamEnd: a stream's last events go out with its end, in one
// write, when nothing comes after them but the handler's return (no flush
// of their own); with an Observer, whose Done may be slow, they are
// flushed before it, and the client reads the whole answer while Done
// still waits.
func TestStreamEnd(t *testing.T) {
	t.Parallel()
	for _, api := range []struct{ name, path, body, last string }{
		{"chat", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[` + flushWeatherTool + `]}`, "data: [DONE]"},
		{"messages", "/v1/messages", `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[{"name":"get_weather","input_schema":` + flushWeatherSchema + `}]}`, "event: message_stop"},
		{"responses", "/v1/responses", `{"model":"m","stream":true,"input":"Weather in Paris?","tools":[{"type":"function","name":"get_weather","parameters":` + flushWeatherSchema + `}]}`, "event: response.completed"},
	} {
		for _, observed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/observed=%v", api.name, observed), func(t *testing.T) {
				t.Parallel()
				m := &gatedModel{first: "It is sunny.", rest: " Take a hat.", release: make(chan struct{})}
				close(m.release)
				obs := blockingObserver{release: make(chan struct{})}
				cfg := gateway.Config{DefaultModel: "m", Logger: slog.New(slog.DiscardHandler),
					Resolve: func(string) (gateway.Upstream, error) { return gateway.Upstream{Model: m, Mode: agent.ModePTK}, nil }}
				if observed {
					cfg.Observe = func() gateway.Observer { return obs }
				} else {
					close(obs.release)
				}
				s, err := gateway.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				resp, flushes := postCounting(t, s, api.path, api.body, 10*time.Second)
				sc := bufio.NewScanner(resp.Body)
				var all strings.Builder
				sawLast := false
				for sc.Scan() {
					all.WriteString(sc.Text() + "\n")
					if strings.HasPrefix(sc.Text(), api.last) && !sawLast {
						sawLast = true
						if observed {
							// Read while Done waits: the last events were
							// not held behind it.
							close(obs.release)
						}
					}
				}
				if err := sc.Err(); err != nil || !sawLast {
					t.Fatalf("the stream did not end with %q (%v):\n%s", api.last, err, all.String())
				}
				// The parser holds the last word of a piece (it may begin a
				// call), so the second piece's text is in two events.
				if !strings.Contains(all.String(), "Take a") || !strings.Contains(all.String(), "hat.") {
					t.Errorf("the text is missing:\n%s", all.String())
				}
				// Each piece is flushed as it comes (what the parser reads
				// of it); the rest is the stream's end, flushed only before
				// an Observer's Done.
				want := int64(2)
				if observed {
					want = 3
				}
				if n := flushes.Load(); n != want {
					t.Errorf("%d flushes, want %d:\n%s", n, want, all.String())
				}
			})
		}
	}
}
