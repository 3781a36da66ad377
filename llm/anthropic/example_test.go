package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic"
)

// fakeServer stands in for api.anthropic.com: it answers POST /v1/messages
// with body, as contentType.
func fakeServer(contentType, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}))
}

func Example() {
	srv := fakeServer("application/json", `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Paris."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":6,"cache_creation_input_tokens":0,"cache_read_input_tokens":1024,"output_tokens":4}}`)
	defer srv.Close()

	model := anthropic.New(srv.URL, anthropic.WithAPIKey("sk-ant-...")) // "" for https://api.anthropic.com
	resp, err := model.Generate(context.Background(), llm.Request{
		Model: "claude-sonnet-4-5",
		Messages: []ptk.Message{
			{Role: ptk.RoleSystem, Content: "Answer in one word."},
			{Role: ptk.RoleUser, Content: "What is the capital of France?"},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Content, resp.FinishReason)
	fmt.Printf("prompt %d tokens (%d from the cache), completion %d\n",
		resp.Usage.PromptTokens, resp.Usage.CacheReadTokens, resp.Usage.CompletionTokens)
	// Output:
	// Paris. end_turn
	// prompt 1030 tokens (1024 from the cache), completion 4
}

func ExampleClient_Stream() {
	srv := fakeServer("text/event-stream", `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}

event: message_stop
data: {"type":"message_stop"}

`)
	defer srv.Close()

	model := anthropic.New(srv.URL, anthropic.WithAPIKey("sk-ant-..."))
	req := llm.Request{Model: "claude-sonnet-4-5", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "Say hello."}}}
	for chunk, err := range model.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if chunk.Text != "" {
			fmt.Printf("%q\n", chunk.Text)
		}
		if chunk.Usage != nil {
			fmt.Println(chunk.FinishReason, chunk.Usage.TotalTokens(), "tokens")
		}
	}
	// Output:
	// "Hello"
	// ", world"
	// end_turn 15 tokens
}
