package httpx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A call to a model server on this machine (the gateway in front of a local
// Ollama, vLLM or llama.cpp) goes over a loopback connection, which costs
// little; what net/http's Transport does around it costs more: it writes a
// request on one goroutine of the connection's and reads the answer's head
// on another, each handing over to the next through channels, a wake-up of
// a goroutine each way per call (about a third of the gateway's own hop).
// localTransport makes the same HTTP/1.1 call on the caller's goroutine: it
// writes the request (Request.Write, as the Transport does) and reads the
// answer (http.ReadResponse) on a kept-alive connection, and gives the
// connection back to its pool when the answer's body has been read to its
// end. Anything else (https, a host that is not a loopback address, a
// request that waits for 100 Continue or asks to switch protocols) goes to
// the Transport it was made with.

// maxLocalHead bounds the head of an answer (its status line and headers):
// a server that sends headers without end is not read past it.
const maxLocalHead = 1 << 20

// maxLocalInformational is how many 1xx answers are skipped before the
// answer, as net/http's Transport does.
const maxLocalInformational = 5

// errLocalHead is the error of an answer whose head passed maxLocalHead.
var errLocalHead = fmt.Errorf("the model server's answer headers passed %d KiB: not read further", maxLocalHead>>10)

type localTransport struct {
	fallback    *http.Transport // what it does not make itself, and its settings
	dial        func(ctx context.Context, network, addr string) (net.Conn, error)
	maxIdle     int           // idle connections kept a host
	idleTimeout time.Duration // an idle connection is closed after it

	mu       sync.Mutex
	idle     map[string][]*localConn // by host:port, the last used last
	sweeping bool                    // a sweep of stale connections is due
}

var (
	_ http.RoundTripper = (*localTransport)(nil)
	_ io.ReadCloser     = (*localBody)(nil)
)

// newLocalTransport returns a localTransport with t's settings (dialer,
// idle connections and their timeout, buffer sizes), which takes what it
// does not make itself.
func newLocalTransport(t *http.Transport) *localTransport {
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	return &localTransport{fallback: t, dial: dial, maxIdle: max(t.MaxIdleConnsPerHost, 2),
		idleTimeout: cmpOr(t.IdleConnTimeout, 90*time.Second)}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// localConn is a connection and its buffers.
type localConn struct {
	net.Conn
	key    string
	head   headLimit // between the connection and br
	br     *bufio.Reader
	bw     *bufio.Writer
	reused bool
	idle   time.Time // when it went back to the pool
}

// headLimit reads from a connection, up to left bytes while left >= 0,
// and counts what it read.
type headLimit struct {
	c    net.Conn
	left int64
	read int64
}

func (h *headLimit) Read(p []byte) (int, error) {
	if h.left >= 0 {
		if h.left == 0 {
			return 0, errLocalHead
		}
		if int64(len(p)) > h.left {
			p = p[:h.left]
		}
	}
	n, err := h.c.Read(p)
	h.read += int64(n)
	if h.left >= 0 {
		h.left -= int64(n)
	}
	return n, err
}

// direct reports whether the transport makes req itself.
func (t *localTransport) direct(req *http.Request) bool {
	if req.URL == nil || req.URL.Scheme != "http" || req.Method == http.MethodConnect || req.Header == nil ||
		req.Header.Get("Expect") != "" || req.Header.Get("Upgrade") != "" || t.fallback.Proxy != nil && usesProxy(t.fallback, req) {
		return false
	}
	h := req.URL.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func usesProxy(t *http.Transport, req *http.Request) bool {
	u, err := t.Proxy(req)
	return err != nil || u != nil
}

// RoundTrip makes the call. A connection from the pool that the server
// closed while it waited (a server's keep-alive timeout) fails before any
// byte of an answer: the call is then made again, once, on a new
// connection, when its body can be made again (GetBody), as net/http's
// Transport does with a connection it saw closed.
func (t *localTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.direct(req) {
		return t.fallback.RoundTrip(req)
	}
	ctx := req.Context()
	key := canonicalAddr(req)
	for try := 0; ; try++ {
		c, err := t.conn(ctx, key)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := t.roundTrip(ctx, c, req)
		if err == nil {
			return resp, nil
		}
		c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if try > 0 || !c.reused || c.head.read > 0 {
			return nil, err
		}
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, err
			}
			body, berr := req.GetBody()
			if berr != nil {
				return nil, err
			}
			r := *req
			r.Body = body
			req = &r
		}
	}
}

// canonicalAddr is req's host:port, the port 80 when it names none.
func canonicalAddr(req *http.Request) string {
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(req.URL.Hostname(), port)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// roundTrip writes req on c and reads the answer's head.
func (t *localTransport) roundTrip(ctx context.Context, c *localConn, req *http.Request) (*http.Response, error) {
	stop := context.AfterFunc(ctx, func() { c.Conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		return nil, err
	}
	werr := req.Write(c.bw)
	if werr == nil {
		werr = c.bw.Flush()
	}
	c.head.left, c.head.read = maxLocalHead, 0
	resp, err := http.ReadResponse(c.br, req)
	if werr != nil {
		// A server may answer before it has read the whole body (413)
		// and close the connection: its answer is the call's, as with
		// net/http's Transport; without one, the write's error is.
		if err != nil || resp.StatusCode < 200 {
			return fail(werr)
		}
		resp.Close = true
	}
	for n := 0; err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200; n++ {
		if resp.StatusCode == http.StatusSwitchingProtocols || n == maxLocalInformational {
			return fail(fmt.Errorf("the model server answered %s", resp.Status))
		}
		resp, err = http.ReadResponse(c.br, req)
	}
	c.head.left = -1
	if err != nil {
		return fail(err)
	}
	b := &localBody{t: t, c: c, ctx: ctx, body: resp.Body, stop: stop, keep: !resp.Close && !req.Close}
	if resp.Body == http.NoBody {
		b.release(true)
	} else {
		resp.Body = b
	}
	return resp, nil
}

// conn returns an idle connection to key, or a new one.
func (t *localTransport) conn(ctx context.Context, key string) (*localConn, error) {
	now := time.Now()
	t.mu.Lock()
	for cs := t.idle[key]; len(cs) > 0; cs = t.idle[key] {
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		t.idle[key] = cs[:len(cs)-1]
		if now.Sub(c.idle) < t.idleTimeout {
			t.mu.Unlock()
			c.reused = true
			return c, nil
		}
		c.Close()
	}
	t.mu.Unlock()
	nc, err := t.dial(ctx, "tcp", key)
	if err != nil {
		return nil, err
	}
	c := &localConn{Conn: nc, key: key, head: headLimit{c: nc, left: -1}}
	c.br = bufio.NewReaderSize(&c.head, cmpSize(t.fallback.ReadBufferSize))
	c.bw = bufio.NewWriterSize(nc, cmpSize(t.fallback.WriteBufferSize))
	return c, nil
}

func cmpSize(n int) int {
	if n > 0 {
		return n
	}
	return 4 << 10
}

// put gives c back to the pool, or closes it when the pool is full.
func (t *localTransport) put(c *localConn) {
	c.idle = time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle[c.key]) >= t.maxIdle {
		c.Close()
		return
	}
	if t.idle == nil {
		t.idle = make(map[string][]*localConn)
	}
	t.idle[c.key] = append(t.idle[c.key], c)
	if !t.sweeping {
		t.sweeping = true
		time.AfterFunc(t.idleTimeout, t.sweep)
	}
}

// sweep closes the connections idle for longer than idleTimeout.
func (t *localTransport) sweep() {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweeping = false
	for key, cs := range t.idle {
		kept := cs[:0]
		for _, c := range cs {
			if now.Sub(c.idle) >= t.idleTimeout {
				c.Close()
			} else {
				kept = append(kept, c)
			}
		}
		clear(cs[len(kept):])
		if len(kept) == 0 {
			delete(t.idle, key)
		} else {
			t.idle[key] = kept
		}
	}
	if len(t.idle) > 0 {
		t.sweeping = true
		time.AfterFunc(t.idleTimeout, t.sweep)
	}
}

// CloseIdleConnections closes the connections in the pool, and the
// fallback's.
func (t *localTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.Close()
		}
	}
	t.fallback.CloseIdleConnections()
}

// localBody is an answer's body. Read to its end, it gives its connection
// back to the pool (when neither side asked to close it and nothing more
// came after it); closed before, or failed, it closes the connection, as
// net/http's Transport does. It may be closed while a Read waits: the Read
// then returns.
type localBody struct {
	t    *localTransport
	c    *localConn
	ctx  context.Context
	body io.ReadCloser
	stop func() bool // stops closing the connection when ctx ends
	keep bool
	done atomic.Bool
}

func (b *localBody) Read(p []byte) (int, error) {
	if b.done.Load() {
		return 0, errors.New("http: read on closed response body")
	}
	n, err := b.body.Read(p)
	switch {
	case err == io.EOF:
		b.release(true)
	case err != nil:
		if b.ctx.Err() != nil {
			err = b.ctx.Err()
		}
		b.release(false)
	}
	return n, err
}

// finished reports whether the body has nothing left to read: read to its
// end, failed or closed (CloseStream then has nothing to drain).
func (b *localBody) finished() bool { return b.done.Load() }

func (b *localBody) Close() error {
	b.release(false)
	return nil
}

// release is done with the connection, once: back to the pool when the
// body was read to its end (ended) and it can serve another call, else
// closed.
func (b *localBody) release(ended bool) {
	if !b.done.CompareAndSwap(false, true) {
		return
	}
	if b.stop() && ended && b.keep && b.c.br.Buffered() == 0 {
		b.c.reused = false
		b.t.put(b.c)
		return
	}
	b.c.Close()
}
