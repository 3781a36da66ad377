package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/llm/llmtest"
)

// A model without native tools, behind the gateway: it writes its call in
// the Hermes format, and the client gets a standard tool call.
func Example() {
	model := llmtest.New(llmtest.Text("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"))
	srv, err := gateway.New(gateway.Config{
		Resolve: func(name string) (gateway.Upstream, error) {
			return gateway.Upstream{Model: model, Name: name, Mode: agent.ModePTK}, nil
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{
	  "model": "gemma3:4b",
	  "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
	  "tools": [{"type": "function", "function": {"name": "get_weather",
	    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	json.Unmarshal(body, &out)
	c := out.Choices[0]
	call := c.Message.ToolCalls[0]
	fmt.Println(resp.StatusCode, c.FinishReason)
	fmt.Println(strings.HasPrefix(call.ID, "call_"), call.Function.Name, call.Function.Arguments)
	// Output:
	// 200 tool_calls
	// true get_weather {"city":"Paris"}
}
