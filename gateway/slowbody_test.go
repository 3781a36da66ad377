package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/llmtest"
)

// Clients that send their headers and then trickle (or stall) their bodies
// take no place among the requests served at once, and are answered 408:
// every other client is still served.
func TestSlowBodiesDoNotLockOthersOut(t *testing.T) {
	var replies []llmtest.Reply
	for range 6 {
		replies = append(replies, llmtest.Text("hello"))
	}
	m := llmtest.New(replies...)
	s, err := New(Config{
		Resolve:         func(string) (Upstream, error) { return Upstream{Model: m, Mode: agent.ModePTK}, nil },
		Logger:          slog.New(slog.DiscardHandler),
		MaxConcurrent:   2,
		BodyIdleTimeout: 300 * time.Millisecond,
		MinBodyRate:     100,
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Serve(ctx, ln)
	addr := ln.Addr().String()

	// Ten slow clients: five stall after a few bytes, five trickle a byte
	// every 100 ms (10 bytes a second, under the floor of 100).
	type slow struct {
		conn   net.Conn
		status chan string
		closed chan error
	}
	var slows []slow
	for i := range 10 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"mo", addr)
		sl := slow{c, make(chan string, 1), make(chan error, 1)}
		go func() {
			br := bufio.NewReader(c)
			line, _ := br.ReadString('\n')
			sl.status <- strings.TrimSpace(line)
			_, err := io.Copy(io.Discard, br) // until the gateway closes the connection
			sl.closed <- err
		}()
		if i%2 == 1 {
			go func() {
				for range 100 {
					time.Sleep(100 * time.Millisecond)
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}()
		}
		slows = append(slows, sl)
	}
	time.Sleep(50 * time.Millisecond)
	for i := range 6 {
		resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d while slow bodies are open: %d %s", i, resp.StatusCode, b)
		}
	}
	for i, sl := range slows {
		select {
		case st := <-sl.status:
			if !strings.Contains(st, "408") {
				t.Errorf("slow client %d: %q, want 408", i, st)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("slow client %d still held after 5 s", i)
		}
	}
	// and then let go: the connection closed, not kept by what net/http
	// reads of the rest of the body to reuse it.
	for i, sl := range slows {
		select {
		case <-sl.closed:
		case <-time.After(5 * time.Second):
			t.Errorf("slow client %d's connection still open 5 s after its 408", i)
		}
	}
}
