package gateway

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
)

// gatedModel answers "done" once release is closed, and says on started
// that a call is waiting.
type gatedModel struct {
	started chan struct{}
	release chan struct{}
}

func (m *gatedModel) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	m.started <- struct{}{}
	select {
	case <-m.release:
		return &llm.Response{Content: "done", FinishReason: "stop"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Shutting down lets the requests in flight finish, streams included, and
// takes no new one.
func TestServeDrains(t *testing.T) {
	m := &gatedModel{started: make(chan struct{}, 2), release: make(chan struct{})}
	s, err := New(Config{
		Resolve: func(string) (Upstream, error) { return Upstream{Model: m, Mode: agent.ModePTK}, nil },
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1/chat/completions"
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	type answer struct {
		status int
		body   string
		err    error
	}
	answers := make(chan answer, 2)
	for _, stream := range []string{"false", "true"} {
		go func() {
			body := `{"model":"m","stream":` + stream + `,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}]}`
			resp, err := http.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				answers <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			answers <- answer{resp.StatusCode, string(b), err}
		}()
	}
	<-m.started
	<-m.started
	cancel()
	// The listener closes at once; new requests are refused.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still takes connections after shutdown began")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v with requests in flight", err)
	default:
	}
	close(m.release)
	for range 2 {
		a := <-answers
		if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `done`) {
			t.Errorf("in-flight request: %d %q %v", a.status, a.body, a.err)
		}
		if strings.HasPrefix(a.body, "data:") && !strings.HasSuffix(a.body, "data: [DONE]\n\n") {
			t.Errorf("stream cut short: %q", a.body)
		}
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil after a clean shutdown", err)
	}
}
