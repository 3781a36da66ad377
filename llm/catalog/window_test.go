package catalog_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/catalog"
)

// A hosted model's window is the catalog's, its provider never asked; a
// free one's is what its server says, the catalog's number what it was
// trained for; the catalog's when the server tells nothing.
func TestCatalogWindow(t *testing.T) {
	asked := 0
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		asked++
		io.WriteString(w, `{"data":[{"id":"qwen3-32b","max_model_len":16384}]}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	quiet := httptest.NewServer(http.NotFoundHandler())
	defer quiet.Close()
	c, err := catalog.Parse([]byte(`{"providers": {"local": {"api_base": "` + srv.URL + `/v1"}, "quiet": {"api_base": "` + quiet.URL + `/v1"}, "hosted": {"api_base": "` + srv.URL + `/v1"}},
		"models": {"mine": {"provider": "local", "model_id": "qwen3-32b", "context_window": 40960, "tool_protocol": "native"},
		           "other": {"provider": "quiet", "context_window": 32768, "tool_protocol": "native"},
		           "paid": {"provider": "hosted", "context_window": 128000, "cost": {"input": 1, "output": 2}, "tool_protocol": "native"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	window := func(name string) llm.Window {
		m, err := c.Resolve(name, catalog.Options{AskWindow: true})
		if err != nil {
			t.Fatal(err)
		}
		w, err := llm.ContextWindowOf(ctx, m, name)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	if w := window("paid"); w != (llm.Window{Tokens: 128000, Trained: 128000, Source: "the catalog"}) || asked != 0 {
		t.Errorf("hosted: %+v, the server asked %d times", w, asked)
	}
	if w := window("mine"); w != (llm.Window{Tokens: 16384, Trained: 40960, Source: "the server's max_model_len"}) || asked != 1 {
		t.Errorf("local: %+v, asked %d", w, asked)
	}
	if w := window("other"); w != (llm.Window{Tokens: 32768, Trained: 32768, Source: "the catalog"}) {
		t.Errorf("a server that tells nothing: %+v", w)
	}
	// The API can be chosen per base URL (ptk speaks Ollama's native API
	// to an Ollama server).
	m, err := c.Resolve("mine", catalog.Options{API: func(api, base string) string { return "ollama" }, NumCtx: 8192})
	if err != nil || llm.BaseURLOf(m) != srv.URL {
		t.Errorf("ollama: %v, base %q", err, llm.BaseURLOf(m))
	}
}
