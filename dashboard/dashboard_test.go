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

// TestLabelWrite: the page's one write, a label, lands in the store with
// the token and as JSON from the page's own origin; a page of another
// site (its JSON, its text/plain "simple request"), a request without the
// token, a bad label and a dashboard without Options.Labels are refused.
func TestLabelWrite(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	s.Write(ctx, &trace.Record{Run: trace.Run{ID: "run1", Kind: trace.KindPtool, Name: "classify"},
		PtoolCalls: []trace.PtoolCall{{Ptool: "classify", Input: json.RawMessage(`{}`), Output: json.RawMessage(`"a"`)}}})
	h := New(s, Options{Token: "s3cret", Labels: s})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(path, ctype, origin, token, body string) int {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	good := `{"span": "ptool/0", "label": "bad", "note": "not a"}`
	for _, c := range []struct {
		name                       string
		path, ctype, origin, token string
		body                       string
		want                       int
	}{
		{"another site's JSON", "/api/runs/run1/labels", "application/json", "https://attacker.example", "s3cret", good, http.StatusForbidden},
		{"another site's form", "/api/runs/run1/labels", "text/plain", "https://attacker.example", "s3cret", good, http.StatusForbidden},
		{"no token", "/api/runs/run1/labels", "application/json", srv.URL, "", good, http.StatusUnauthorized},
		{"not JSON", "/api/runs/run1/labels", "text/plain", "", "s3cret", good, http.StatusUnsupportedMediaType},
		{"a bad label", "/api/runs/run1/labels", "application/json", srv.URL, "s3cret", `{"label": "meh"}`, http.StatusBadRequest},
		{"an unknown field", "/api/runs/run1/labels", "application/json", srv.URL, "s3cret", `{"label": "bad", "run_id": "other"}`, http.StatusBadRequest},
		{"no such call", "/api/runs/run1/labels", "application/json", srv.URL, "s3cret", `{"span": "ptool/4", "label": "bad"}`, http.StatusNotFound},
		{"no such run", "/api/runs/nope/labels", "application/json", srv.URL, "s3cret", good, http.StatusNotFound},
		{"too long", "/api/runs/run1/labels", "application/json", srv.URL, "s3cret", `{"label": "bad", "note": "` + strings.Repeat("x", 3*trace.MaxNoteBytes) + `"}`, http.StatusBadRequest},
	} {
		if got := post(c.path, c.ctype, c.origin, c.token, c.body); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if ls, _ := s.Labels(ctx, "run1"); len(ls) != 0 {
		t.Fatalf("labels written by refused requests: %+v", ls)
	}
	if got := post("/api/runs/run1/labels", "application/json", srv.URL, "s3cret", good); got != http.StatusOK {
		t.Fatalf("the page's label: %d", got)
	}
	if ls, _ := s.Labels(ctx, "run1"); len(ls) != 1 || ls[0].Span != "ptool/0" || ls[0].Label != "bad" || ls[0].Note != "not a" {
		t.Errorf("labels = %+v", ls)
	}
	// Without Options.Labels nothing is written.
	ro := New(s, Options{})
	defer ro.Close()
	srv2 := httptest.NewServer(ro)
	defer srv2.Close()
	req, _ := http.NewRequest("POST", srv2.URL+"/api/runs/run1/labels", strings.NewReader(`{"label": "good"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a read-only dashboard: %d", resp.StatusCode)
	}
}
