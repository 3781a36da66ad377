package httpx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk/llm"
)

// The attack: a model server (or an open redirect on its host) answers
// 307 to another origin. Go's client drops Authorization there, but not
// the key headers other APIs use (Anthropic's x-api-key, Gemini's
// x-goog-api-key, Azure's api-key): the other origin got the user's key. A
// redirect to another origin is not followed, and the error says where it
// led.
func TestRedirectKeepsTheKey(t *testing.T) {
	var mu sync.Mutex
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("X-Api-Key")+r.Header.Get("X-Goog-Api-Key")+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/same" {
			w.Write([]byte(`{"ok":true}`))
			return
		}
		if r.URL.Path == "/v1/here" {
			http.Redirect(w, r, "/v1/same", http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, other.URL+"/v1/messages", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	tr := New("test", srv.URL)
	tr.SetHeader("x-api-key", "sk-ant-planted")
	tr.SetHeader("x-goog-api-key", "goog-planted")
	fail := func(status int, h http.Header, body []byte) *llm.Error { return &llm.Error{Message: string(body)} }
	_, err := tr.Post(context.Background(), srv.URL+"/v1/messages", []byte(`{}`), JSON(false), fail)
	if err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("a redirect to another origin: %v", err)
	}
	mu.Lock()
	if len(got) > 0 {
		t.Errorf("the other origin was asked, with the key headers %q", got)
	}
	mu.Unlock()
	resp, err := tr.Post(context.Background(), srv.URL+"/v1/here", []byte(`{}`), JSON(false), fail)
	if err != nil {
		t.Fatalf("a redirect within the origin: %v", err)
	}
	resp.Body.Close()
}
