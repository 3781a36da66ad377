package catalog

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// TestChoose: a name the catalog has, one it does not (a model of the
// server at the base URL), and a fallback of several.
func TestChoose(t *testing.T) {
	var mu sync.Mutex
	var seen []string // model, key
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Model string }
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		mu.Lock()
		seen = append(seen, body.Model, r.Header.Get("Authorization"))
		mu.Unlock()
		if body.Model == "down" {
			w.WriteHeader(503)
			io.WriteString(w, `{"error": {"message": "down"}}`)
			return
		}
		io.WriteString(w, `{"id": "1", "object": "chat.completion", "model": "`+body.Model+`",
			"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}`)
	}))
	defer srv.Close()
	env := map[string]string{"OPENAI_API_KEY": "sk-env"}
	c := Default()
	ask := func(names string, o Options) (string, string) {
		t.Helper()
		mu.Lock()
		seen = nil
		mu.Unlock()
		o.Getenv = func(k string) string { return env[k] }
		m, err := c.Choose(names, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Generate(context.Background(), llm.Request{Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return seen[len(seen)-2], seen[len(seen)-1]
	}
	if model, key := ask("my-local-model", Options{BaseURL: srv.URL}); model != "my-local-model" || key != "Bearer sk-env" {
		t.Errorf("a name the catalog does not have: model %q, key %q", model, key)
	}
	if model, key := ask("gpt-4o-mini", Options{BaseURL: srv.URL, APIKey: "sk-flag"}); model != c.Models["gpt-4o-mini"].ModelID || key != "Bearer sk-flag" {
		t.Errorf("a catalog model at another base URL: model %q, key %q", model, key)
	}
	if model, _ := ask("down, spare", Options{BaseURL: srv.URL}); model != "spare" {
		t.Errorf("the fallback answered from %q", model)
	}
	if _, err := c.Choose(" , ", Options{}); err == nil {
		t.Error("no names: no error")
	}
}
