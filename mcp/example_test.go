package mcp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/mcp"
	"github.com/ptkit/ptk/tool"
)

// A model without native tool calling uses an MCP server's tools through
// ptk's text protocol. The server here is ptk's own, over streamable HTTP;
// a user's mcp.json names theirs.
func ExampleStart() {
	type args struct {
		Name string `json:"name"`
	}
	greet := tool.New("greet", "Greets someone.", func(_ context.Context, a args) (string, error) {
		return "Hello, " + a.Name + "!", nil
	}, tool.ReadOnly())
	srv, _ := mcp.NewServer([]ptk.Tool{greet}, mcp.ServerOptions{})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer hs.Close()

	cfg, err := mcp.ParseConfig([]byte(`{"mcpServers": {"hello": {"url": "` + hs.URL + `"}}}`))
	if err != nil {
		log.Fatal(err)
	}
	client, err := mcp.Start(context.Background(), cfg, mcp.Options{})
	if err != nil {
		log.Fatal(err) // a *mcp.StartError per server that did not start
	}
	defer client.Close()

	model := llmtest.New(
		llmtest.Text(`<PTK_CALL>{"tool": "hello__greet", "args": {"name": "Ada"}}</PTK_CALL>`),
		llmtest.Text("It said hello."),
	)
	res, err := agent.Run(context.Background(), agent.Prompt("Greet Ada."), agent.Options{
		Model: model, Mode: agent.ModePTK, Tools: client.Tools(),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.ToolCalls[0].Call.Tool, "→", res.ToolCalls[0].Result.Content)
	fmt.Println(res.Content)
	// Output:
	// hello__greet → Hello, Ada!
	// It said hello.
}

func ExampleToolName() {
	fmt.Println(mcp.ToolName("files", "read_file"))
	fmt.Println(mcp.ToolName("my.tracker", "issues.list"))
	// Output:
	// files__read_file
	// my_tracker__issues_list_d19718a7
}
