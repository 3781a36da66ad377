package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ptkit/ptk/trace"
)

func newStore(t *testing.T) *trace.Store {
	s, err := trace.Open(context.Background(), filepath.Join(t.TempDir(), "traces.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestToken(t *testing.T) {
	h := New(newStore(t), Options{Token: "s3cret"})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, c := range []struct {
		path, auth string
		want       int
	}{
		{"/", "", http.StatusUnauthorized},
		{"/api/runs", "Bearer wrong", http.StatusUnauthorized},
		{"/api/runs", "Bearer s3cret", http.StatusOK},
		{"/api/runs?token=s3cret", "", http.StatusOK},
		{"/?token=s3cret", "", http.StatusOK},
	} {
		req, _ := http.NewRequest("GET", srv.URL+c.path, nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s (%q) = %d, want %d", c.path, c.auth, resp.StatusCode, c.want)
		}
	}
}

// TestReadOnly: the dashboard answers GET only.
func TestReadOnly(t *testing.T) {
	h := New(newStore(t), Options{})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, p := range []string{"/api/runs", "/api/runs/x", "/"} {
		resp, err := http.Post(srv.URL+p, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST %s = %d", p, resp.StatusCode)
		}
	}
}

// TestLive: a page is told the store's mark at once and when a run lands.
func TestLive(t *testing.T) {
	s := newStore(t)
	h := New(s, Options{Poll: 20 * time.Millisecond})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/api/live", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	read := func() trace.Mark {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m trace.Mark
		json.Unmarshal(b, &m)
		return m
	}
	if m := read(); m.Runs != 0 {
		t.Fatalf("first mark %+v", m)
	}
	s.Write(ctx, &trace.Record{Run: trace.Run{Kind: trace.KindAgent, Status: trace.StatusOK}})
	if m := read(); m.Runs != 1 {
		t.Fatalf("mark after a run %+v", m)
	}
	h.Close()
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("after Close: %v", err)
	}
}
