package gemini_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/gemini"
)

// fakeGemini stands in for generativelanguage.googleapis.com: it answers
// every request with body, as contentType.
func fakeGemini(contentType, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}))
}

func Example() {
	srv := fakeGemini("application/json; charset=UTF-8", `{
  "candidates": [{"content": {"parts": [{"text": "Paris."}], "role": "model"}, "finishReason": "STOP", "index": 0}],
  "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 2, "totalTokenCount": 11},
  "modelVersion": "gemini-2.5-flash"
}`)
	defer srv.Close()

	model := gemini.New(srv.URL, gemini.WithAPIKey("AIza...")) // gemini.New("", ...) for the real API
	resp, err := model.Generate(context.Background(), llm.Request{
		Model:    "gemini-2.5-flash",
		Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "What is the capital of France?"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Content, resp.FinishReason, resp.Usage.TotalTokens(), "tokens")
	// Output: Paris. STOP 11 tokens
}

func ExampleClient_Stream() {
	srv := fakeGemini("text/event-stream", "data: "+`{"candidates": [{"content": {"parts": [{"text": "Hello"}],"role": "model"},"index": 0}],"modelVersion": "gemini-2.5-flash"}`+"\r\n\r\n"+
		"data: "+`{"candidates": [{"content": {"parts": [{"functionCall": {"name": "greet","args": {"who": "world"}}}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 5,"candidatesTokenCount": 6,"totalTokenCount": 11},"modelVersion": "gemini-2.5-flash"}`+"\r\n\r\n")
	defer srv.Close()

	model := gemini.New(srv.URL, gemini.WithAPIKey("AIza..."))
	req := llm.Request{
		Model:    "gemini-2.5-flash",
		Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "Say hello."}},
		Tools:    []ptk.ToolInfo{{Name: "greet", Parameters: []byte(`{"type":"object","properties":{"who":{"type":"string"}}}`)}},
	}
	for chunk, err := range model.Stream(context.Background(), req) {
		switch {
		case err != nil:
			fmt.Println(err)
			return
		case chunk.Text != "":
			fmt.Printf("text %q\n", chunk.Text)
		case chunk.Call != nil:
			fmt.Println("call", chunk.Call.ID, chunk.Call.Tool, chunk.Call.ArgsDelta)
		case chunk.Usage != nil:
			fmt.Println(chunk.Usage.TotalTokens(), "tokens")
		}
	}
	// Output:
	// text "Hello"
	// call call_1 greet {"who":"world"}
	// 11 tokens
}
