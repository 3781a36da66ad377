package openai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/openai"
)

// fakeServer stands in for Ollama, vLLM, llama.cpp or OpenAI: it answers
// every request with body, as contentType.
func fakeServer(status int, contentType, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
}

func Example() {
	srv := fakeServer(http.StatusOK, "application/json", `{"id":"chatcmpl-245","object":"chat.completion","created":1751030500,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}],"usage":{"prompt_tokens":18,"completion_tokens":2,"total_tokens":20}}`)
	defer srv.Close()

	model := openai.New(srv.URL + "/v1") // Ollama: "http://localhost:11434/v1"
	resp, err := model.Generate(context.Background(), llm.Request{
		Model:    "qwen3:8b",
		Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "What is the capital of France?"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Content, resp.Usage.TotalTokens(), "tokens")
	// Output: Paris. 20 tokens
}

func ExampleClient_Stream() {
	srv := fakeServer(http.StatusOK, "text/event-stream", `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":", world"},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: [DONE]

`)
	defer srv.Close()

	model := openai.New(srv.URL+"/v1", openai.WithAPIKey("sk-..."))
	req := llm.Request{Model: "gpt-4o-mini", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "Say hello."}}}
	for chunk, err := range model.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if chunk.Text != "" {
			fmt.Printf("%q\n", chunk.Text)
		}
	}
	// Output:
	// "Hello"
	// ", world"
}

// A model that takes no tool definitions is told so with
// llm.ErrToolsUnsupported: the caller can fall back to ptk's text protocol.
func Example_toolsUnsupported() {
	srv := fakeServer(http.StatusBadRequest, "application/json", `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error","param":null,"code":null}}`)
	defer srv.Close()

	model := openai.New(srv.URL + "/v1")
	_, err := model.Generate(context.Background(), llm.Request{
		Model:    "gemma:2b",
		Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "What's the weather in Paris?"}},
		Tools:    []ptk.ToolInfo{{Name: "get_weather", Description: "Current weather for a city."}},
	})
	if errors.Is(err, llm.ErrToolsUnsupported) {
		fmt.Println("no native tools:", err)
	}
	// Output: no native tools: native tools not supported (HTTP 400): registry.ollama.ai/library/gemma:2b does not support tools
}
