package openai

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// reuseServer streams a short answer, one flushed event at a time as model
// servers do, then after [DONE] does what after says; it counts the
// connections clients open.
func reuseServer(t *testing.T, after func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, p := range []string{"Hel", "lo", "."} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", p)
			f.Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		f.Flush()
		if after != nil {
			after(w)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func streamText(t *testing.T, c *Client) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	var b strings.Builder
	for ch, err := range c.Stream(context.Background(), llm.Request{Model: "m", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}}) {
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(ch.Text)
	}
	return b.String(), time.Since(start)
}

// A stream read to its [DONE] leaves its connection for the next call:
// closing the body before its end made net/http close the connection, and
// every streamed call through the gateway dialed a new one.
//
// The server ends the body a little after [DONE], as one does whose
// handler has work left after its last event: the client has then read
// [DONE] before the end of the body arrives.
func TestStreamReusesConnection(t *testing.T) {
	srv, conns := reuseServer(t, func(http.ResponseWriter) { time.Sleep(500 * time.Microsecond) })
	c := New(srv.URL, WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
	const calls = 10
	for range calls {
		if got, _ := streamText(t, c); got != "Hello." {
			t.Fatalf("got %q", got)
		}
	}
	// One, and a little room for a machine so loaded that the end of a
	// body took longer than drainWait.
	if n := conns.Load(); n > 3 {
		t.Errorf("%d streamed calls opened %d connections, want 1", calls, n)
	}
}

// The attacks: a server that keeps the body open after [DONE], and one
// that goes on sending after it. The answer is not held back waiting for
// the end of the body (a few milliseconds at most, however long the server
// waits), nor read on without end.
func TestStreamDoesNotWaitForABodyThatDoesNotEnd(t *testing.T) {
	cases := map[string]func(w http.ResponseWriter){
		"silent": func(w http.ResponseWriter) { time.Sleep(3 * time.Second) },
		"endless": func(w http.ResponseWriter) {
			junk := []byte(": " + strings.Repeat("x", 4000) + "\n\n")
			for end := time.Now().Add(3 * time.Second); time.Now().Before(end); {
				if _, err := w.Write(junk); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		},
	}
	for name, after := range cases {
		t.Run(name, func(t *testing.T) {
			srv, _ := reuseServer(t, after)
			c := New(srv.URL, WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
			got, took := streamText(t, c)
			if got != "Hello." {
				t.Fatalf("got %q", got)
			}
			if took > time.Second {
				t.Errorf("the stream took %v: it waited for the server to end the body", took)
			}
		})
	}
}
