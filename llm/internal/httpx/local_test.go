package httpx

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// newTestLocal is a localTransport as LocalClient's, its own pool.
func newTestLocal() *localTransport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConnsPerHost = 4
	return newLocalTransport(t)
}

// countConns counts the connections a test server accepts.
func countConns(srv *httptest.Server) *atomic.Int64 {
	var n atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

// Calls to a loopback server go through the local transport on one kept
// connection: whole bodies, chunked ones, none, a POST's body and headers
// as net/http writes them; an answer that asks to close its connection
// (or a body closed before its end) is not kept.
func TestLocalTransportCalls(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/echo":
			fmt.Fprintf(w, "%s %s %s len=%d ct=%s ua=%s ae=%q", r.Method, r.URL.RequestURI(), body, r.ContentLength,
				r.Header.Get("Content-Type"), r.Header.Get("User-Agent"), r.Header.Get("Accept-Encoding"))
		case "/chunked":
			for i := range 3 {
				fmt.Fprintf(w, "part %d;", i)
				w.(http.Flusher).Flush()
			}
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/close":
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		case "/long":
			io.WriteString(w, strings.Repeat("x", 1<<16))
		}
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	lt := newTestLocal()
	defer lt.CloseIdleConnections()
	c := &http.Client{Transport: lt}
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body == "" {
			req.Body = http.NoBody
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s %s: reading: %v", method, path, err)
		}
		return resp.StatusCode, string(got)
	}
	for range 3 {
		if _, got := call("POST", "/echo?q=1", `{"a":1}`); got != `POST /echo?q=1 {"a":1} len=7 ct=application/json ua=Go-http-client/1.1 ae=""` {
			t.Errorf("echo: %s", got)
		}
		if _, got := call("GET", "/chunked", ""); got != "part 0;part 1;part 2;" {
			t.Errorf("chunked: %q", got)
		}
		if code, got := call("GET", "/empty", ""); code != 204 || got != "" {
			t.Errorf("empty: %d %q", code, got)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("9 calls took %d connections, want 1", n)
	}
	call("GET", "/close", "")
	call("GET", "/echo", "")
	if n := conns.Load(); n != 2 {
		t.Errorf("after an answer that closed its connection: %d connections, want 2", n)
	}
	resp, err := c.Get(srv.URL + "/long")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Read(make([]byte, 10))
	resp.Body.Close()
	call("GET", "/echo", "")
	if n := conns.Load(); n != 3 {
		t.Errorf("after a body closed before its end: %d connections, want 3", n)
	}
}

// A request to another host, over https, or one waiting for 100 Continue
// goes to the fallback transport.
func TestLocalTransportFallback(t *testing.T) {
	lt := newTestLocal()
	for _, tc := range []struct {
		url    string
		header string
		direct bool
	}{
		{"http://127.0.0.1:8080/v1", "", true},
		{"http://localhost:11434/v1", "", true},
		{"http://[::1]:8000/v1", "", true},
		{"https://127.0.0.1/v1", "", false},
		{"http://example.com/v1", "", false},
		{"http://10.0.0.1/v1", "", false},
		{"http://ollama.localhost/v1", "", false},
		{"http://127.0.0.1/v1", "Expect", false},
		{"http://127.0.0.1/v1", "Upgrade", false},
	} {
		req, _ := http.NewRequest("POST", tc.url, nil)
		if tc.header != "" {
			req.Header.Set(tc.header, "x")
		}
		if got := lt.direct(req); got != tc.direct {
			t.Errorf("%s %s: direct %v, want %v", tc.url, tc.header, got, tc.direct)
		}
	}
}

// A kept connection that the server closed while it was idle (its
// keep-alive timeout) costs the call nothing: it is made again, with its
// body, on a new connection.
func TestLocalTransportStaleConnection(t *testing.T) {
	var bodies []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	lt := newTestLocal()
	defer lt.CloseIdleConnections()
	c := &http.Client{Transport: lt}
	post := func(body string) {
		t.Helper()
		resp, err := c.Post(srv.URL, "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	post("one")
	srv.CloseClientConnections() // the server drops the idle connection
	time.Sleep(20 * time.Millisecond)
	post("two")
	if fmt.Sprint(bodies) != "[one two]" {
		t.Errorf("the server got %v", bodies)
	}
}

// hostileServer accepts connections and answers each request with what
// answer writes.
func hostileServer(t *testing.T, answer func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				answer(c)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// Attacks: a server whose headers never end is read no further than
// maxLocalHead; one that never answers is left when the context ends; one
// that sends an answer's body without end is left when the caller closes
// it; informational answers without end are refused.
func TestLocalTransportHostileServer(t *testing.T) {
	lt := newTestLocal()
	defer lt.CloseIdleConnections()
	c := &http.Client{Transport: lt}

	endless := hostileServer(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		line := []byte("X-Pad: " + strings.Repeat("a", 1000) + "\r\n")
		for {
			if _, err := c.Write(line); err != nil {
				return
			}
		}
	})
	if _, err := c.Get(endless); !errors.Is(err, errLocalHead) {
		t.Errorf("endless headers: %v, want %v", err, errLocalHead)
	}

	silent := hostileServer(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", silent, nil)
	start := time.Now()
	if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a server that never answers: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the call was left after %v", d)
	}

	flood := hostileServer(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
		for {
			if _, err := io.WriteString(c, "400\r\n"+strings.Repeat("z", 1024)+"\r\n"); err != nil {
				return
			}
		}
	})
	resp, err := c.Get(flood)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, resp.Body); done <- err }()
	time.Sleep(20 * time.Millisecond)
	resp.Body.Close() // while a Read may wait
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the body did not end the read")
	}

	informational := hostileServer(t, func(c net.Conn) {
		for range 100 {
			io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n")
		}
	})
	if _, err := c.Get(informational); err == nil || !strings.Contains(err.Error(), "103") {
		t.Errorf("endless 1xx answers: %v", err)
	}

	// Bytes after an answer's end (an answer the server was not asked
	// for): the connection is not kept.
	extra := hostileServer(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nevil")
	})
	resp, err = c.Get(extra)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	lt.mu.Lock()
	kept := len(lt.idle[strings.TrimPrefix(extra, "http://")])
	lt.mu.Unlock()
	if kept != 0 {
		t.Error("a connection with bytes after the answer was kept")
	}
}

// A server that answers before it has read the whole body, and closes
// the connection, gives its answer, not the write's error.
func TestLocalTransportEarlyAnswer(t *testing.T) {
	url := hostileServer(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\ntoo large")
		c.(*net.TCPConn).CloseWrite()
		time.Sleep(50 * time.Millisecond)
		c.(*net.TCPConn).SetLinger(0)
	})
	lt := newTestLocal()
	defer lt.CloseIdleConnections()
	resp, err := (&http.Client{Transport: lt}).Post(url, "application/json", bytes.NewReader(make([]byte, 16<<20)))
	if err != nil {
		t.Fatalf("the server's early answer was lost: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || string(body) != "too large" {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
}

// A context canceled while the body is read ends the read with the
// context's error, and the connection is not kept.
func TestLocalTransportCancelBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	lt := newTestLocal()
	defer lt.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := (&http.Client{Transport: lt}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	io.ReadFull(resp.Body, buf)
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Errorf("reading after cancel: %v", err)
	}
	resp.Body.Close()
}

// Many calls at once each get their own answer (run with -race).
func TestLocalTransportConcurrent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body) // all of it first: net/http's server stops reading a body once the answer has begun
		w.Write(b)
	}))
	defer srv.Close()
	lt := newTestLocal()
	defer lt.CloseIdleConnections()
	c := &http.Client{Transport: lt}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				want := fmt.Sprintf("g%d-%d-%s", g, i, strings.Repeat("y", i*50))
				resp, err := c.Post(srv.URL, "text/plain", strings.NewReader(want))
				if err != nil {
					t.Error(err)
					return
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || string(got) != want {
					t.Errorf("got %d %.20q, %v, want %d", len(got), got, err, len(want))
					return
				}
			}
		})
	}
	wg.Wait()
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for _, cs := range lt.idle {
		if len(cs) > lt.maxIdle {
			t.Errorf("%d idle connections kept, over %d", len(cs), lt.maxIdle)
		}
	}
}

// BenchmarkLocalCall is one whole call to a loopback server as the gateway
// makes one (a 2.5 KB request, a 1 KB answer): net/http's Transport
// against the local transport, in one binary.
//
//	go test ./llm/internal/httpx -run '^$' -bench LocalCall -benchmem -count 6
func BenchmarkLocalCall(b *testing.B) {
	answer := bytes.Repeat([]byte("a"), 1024)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	defer srv.Close()
	body := bytes.Repeat([]byte("b"), 2500)
	base := DefaultClient.Transport.(*http.Transport).Clone()
	base.DisableCompression = true
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{{"net-http", base}, {"local", newLocalTransport(base.Clone())}} {
		b.Run(tc.name, func(b *testing.B) {
			c := &http.Client{Transport: tc.rt}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Post(srv.URL, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			c.CloseIdleConnections()
		})
	}
}

// readsForbidden is a body whose every Read is a test failure.
type readsForbidden struct {
	t      *testing.T
	closed bool
}

func (b *readsForbidden) Read([]byte) (int, error) {
	b.t.Error("CloseStream read a body that had said it was finished")
	return 0, io.EOF
}
func (b *readsForbidden) Close() error   { b.closed = true; return nil }
func (b *readsForbidden) finished() bool { return true }

// A streamed answer whose last read brought the end of its body (as over
// loopback, where the whole answer usually comes in one read) is closed
// without the drain and its timer: arming a timer sooner than the
// runtime's network poller means to wake made the runtime wake the
// poller's thread, a cross-thread wake-up (and two system calls) for every
// streamed call through the gateway. The local transport's body says it
// is finished once read to its end, through the bound every answer gets,
// and not before; the connection still goes back to the pool.
func TestCloseStreamFinishedBody(t *testing.T) {
	b := &readsForbidden{t: t}
	CloseStream(&bounded{r: b, left: 10}, true)
	if !b.closed {
		t.Error("the body was not closed")
	}

	const answer = "data: {\"choices\":[]}\n\ndata: [DONE]\n\n"
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range strings.SplitAfter(answer, "\n\n") {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	lt := newTestLocal()
	defer lt.CloseIdleConnections()
	for i := range 3 {
		resp, err := (&http.Client{Transport: lt}).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body := &bounded{r: resp.Body, left: 1 << 20}
		if body.finished() {
			t.Fatalf("call %d: the body says it is finished before it was read", i)
		}
		got, err := io.ReadAll(body)
		if err != nil || string(got) != answer {
			t.Fatalf("call %d: read %q, %v", i, got, err)
		}
		if !body.finished() {
			t.Fatalf("call %d: the body read to its end does not say it is finished", i)
		}
		CloseStream(body, true)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("3 calls opened %d connections, want 1", n)
	}
}
