package ollama_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/ollama"
)

func Example() {
	// An Ollama server; in a program, "http://localhost:11434".
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"parameters":"num_ctx 16384","model_info":{"general.architecture":"qwen3","qwen3.context_length":40960}}`)
	})
	mux.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"model":"qwen3:8b","message":{"role":"assistant","content":"Hello."},"done":true,"done_reason":"stop","prompt_eval_count":12,"eval_count":3}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	model := ollama.New(srv.URL)
	w, _ := model.ContextWindow(context.Background(), "qwen3:8b")
	fmt.Printf("num_ctx %d (%s), trained for %d\n", w.Tokens, w.Source, w.Trained)
	resp, err := model.Generate(context.Background(), llm.Request{Model: "qwen3:8b", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "Say hello."}}})
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	fmt.Println(resp.Content, resp.Usage.PromptTokens, "prompt tokens")
	// Output:
	// num_ctx 16384 (the Modelfile's num_ctx), trained for 40960
	// Hello. 12 prompt tokens
}
