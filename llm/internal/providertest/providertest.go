// Package providertest is the conformance suite of the provider clients
// ([Run]): the behaviours every client must show — text, reasoning and
// native calls, whole and streamed, however the network cuts the stream;
// usage; errors classified (ErrToolsUnsupported among them); retries and
// when not to retry; cancellation, deadlines and a caller that stops
// reading — written once and run by each provider over its own fixtures
// ([Provider]). It also holds what those tests share: a server that counts
// its requests and handlers that answer as a provider does.
package providertest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
)

// Serve starts a server that answers pattern with h and returns its URL and
// the count of requests it received.
func Serve(t *testing.T, pattern string, h http.HandlerFunc) (string, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

// Reply answers with status and body, as JSON.
func Reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// SSE answers with parts as an event stream, flushed after each part.
func SSE(parts ...[]byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		for _, p := range parts {
			w.Write(p)
			w.(http.Flusher).Flush()
		}
	}
}

// Counting answers the first len(first) requests with those handlers and
// the rest with then.
func Counting(then http.HandlerFunc, first ...http.HandlerFunc) http.HandlerFunc {
	var n atomic.Int32
	return func(w http.ResponseWriter, r *http.Request) {
		if i := int(n.Add(1)) - 1; i < len(first) {
			first[i](w, r)
			return
		}
		then(w, r)
	}
}

// Testdata returns the file name under the test's testdata folder.
func Testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CheckError checks that err is an *llm.Error of the kind, whose message
// has msg.
func CheckError(t *testing.T, err error, kind error, msg string) *llm.Error {
	t.Helper()
	e, ok := errors.AsType[*llm.Error](err)
	if !ok {
		t.Fatalf("err = %v (%T), want an *llm.Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Errorf("err = %v, want kind %v", err, kind)
	}
	if !strings.Contains(e.Message, msg) {
		t.Errorf("message = %q, want it to contain %q", e.Message, msg)
	}
	return e
}

// hanging serves head, the first events of a stream, then waits until the
// client goes away, and closes gone.
func hanging(head []byte, gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // from here the server watches the connection
		SSE(head)(w, r)
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(10 * time.Second):
		}
	}
}

// StreamCancel tests that canceling ctx once text has arrived ends a stream
// at once, with one error, ctx's, that is not retryable, and closes the
// connection. serve returns a client of a server that answers with h, to
// which req is sent; the server sends head, which holds wantText, then
// waits.
func StreamCancel(t *testing.T, serve func(h http.HandlerFunc) llm.Streamer, req llm.Request, head []byte, wantText string) {
	t.Helper()
	gone := make(chan struct{})
	c := serve(hanging(head, gone))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var errs []error
	var text strings.Builder
	start := time.Now()
	for ch, err := range c.Stream(ctx, req) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		text.WriteString(ch.Text)
		if ch.Text != "" {
			cancel()
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Stream returned %v after the cancel", d)
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("errors = %v, want one context.Canceled", errs)
	}
	if llm.Retryable(errs[0]) {
		t.Errorf("a canceled call reads as retryable: %v", errs[0])
	}
	if text.String() != wantText {
		t.Errorf("text = %q, want %q", text.String(), wantText)
	}
	select {
	case <-gone:
	case <-time.After(time.Second):
		t.Fatal("the server did not see the connection close")
	}
}

// StreamBreak tests that breaking out of a stream once text has arrived
// returns at once and closes the connection; serve, req and head are as for
// [StreamCancel].
func StreamBreak(t *testing.T, serve func(h http.HandlerFunc) llm.Streamer, req llm.Request, head []byte) {
	t.Helper()
	gone := make(chan struct{})
	c := serve(hanging(head, gone))
	start := time.Now()
	for ch, err := range c.Stream(t.Context(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.Text != "" {
			break
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Stream returned %v after the break", d)
	}
	select {
	case <-gone:
	case <-time.After(time.Second):
		t.Fatal("the server did not see the connection close")
	}
}

// StreamDeadline tests that a stream that outlasts ctx's deadline ends with
// context.DeadlineExceeded; serve, req and head are as for [StreamCancel].
func StreamDeadline(t *testing.T, serve func(h http.HandlerFunc) llm.Streamer, req llm.Request, head []byte) {
	t.Helper()
	c := serve(hanging(head, make(chan struct{})))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := llm.Collect(c.Stream(ctx, req))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
}
