package openai_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/openai"
)

// The window as each kind of server tells it: vLLM's /v1/models
// max_model_len, llama.cpp's /props n_ctx, Ollama's loaded context (its
// /v1 takes no size per request), and nothing from a server that tells
// none; each asked once per model.
func TestContextWindow(t *testing.T) {
	cases := []struct {
		name   string
		routes map[string]string
		want   llm.Window
	}{
		{"vLLM", map[string]string{"GET /v1/models": `{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","max_model_len":32768}]}`},
			llm.Window{Tokens: 32768, Trained: 32768, Source: "the server's max_model_len"}},
		{"llama.cpp", map[string]string{"GET /v1/models": `{"object":"list","data":[{"id":"model.gguf","object":"model"}]}`,
			"GET /props": `{"default_generation_settings":{"n_ctx":8192,"params":{}},"total_slots":1}`},
			llm.Window{Tokens: 8192, Source: "llama.cpp's n_ctx"}},
		{"Ollama", map[string]string{"GET /api/version": `{"version":"0.12.6"}`,
			"POST /api/show": `{"parameters":"stop \"<|im_end|>\"","model_info":{"general.architecture":"qwen3","qwen3.context_length":40960}}`,
			"GET /api/ps":    `{"models":[]}`},
			llm.Window{Tokens: 4096, Trained: 40960, Source: "Ollama's default context (its OpenAI-compatible API takes no size per request)"}},
		{"OpenAI", map[string]string{"GET /v1/models": `{"object":"list","data":[{"id":"gpt-4o","object":"model"},{"id":"gpt-4o-mini","object":"model"}]}`}, llm.Window{}},
	}
	for _, c := range cases {
		asked := 0
		mux := http.NewServeMux()
		for route, body := range c.routes {
			mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) {
				asked++
				io.WriteString(w, body)
			})
		}
		srv := httptest.NewServer(mux)
		m := openai.New(srv.URL+"/v1", openai.WithWindowProbe())
		for range 2 {
			w, err := m.ContextWindow(context.Background(), "Qwen/Qwen3-8B")
			if err != nil || w != c.want {
				t.Errorf("%s: %+v, %v; want %+v", c.name, w, err, c.want)
			}
		}
		if n := asked; n == 0 || n > len(c.routes) {
			t.Errorf("%s: asked %d times", c.name, n)
		}
		asked = 0
		if w, _ := openai.New(srv.URL+"/v1").ContextWindow(context.Background(), "Qwen/Qwen3-8B"); w.Known() || asked != 0 {
			t.Errorf("%s: a client not made WithWindowProbe asked the server", c.name)
		}
		srv.Close()
	}
}
