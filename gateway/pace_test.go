package gateway

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPaceBodies trickles a body at a server behind PaceBodies: the
// handler's read fails within the idle time and the connection is not held,
// a later read says the body failed (never a short body's EOF), and a body
// sent at once is read whole.
func TestPaceBodies(t *testing.T) {
	readErr := make(chan error, 4)
	srv := httptest.NewServer(PaceBodies(300*time.Millisecond, 1)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			_, again := r.Body.Read(make([]byte, 8))
			readErr <- errors.Join(err, again)
			http.Error(w, "slow", http.StatusRequestTimeout)
			return
		}
		readErr <- nil
		io.WriteString(w, "read "+string(b))
	})))
	defer srv.Close()

	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"a": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `read {"a": 1}` || <-readErr != nil {
		t.Fatalf("a body sent at once: %q", b)
	}

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\":")
	select {
	case err := <-readErr:
		if err == nil || !errors.Is(err, errSlowBody) || errors.Is(err, io.EOF) {
			t.Errorf("the trickled body's reads: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a body that stopped held the handler for 10 s")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the stalled body was given up after %s", d)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("status %d", resp.StatusCode)
		}
	}
}
