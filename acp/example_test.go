package acp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk/acp"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/llmtest"
)

// An editor's side of the connection for the example: it prints the
// answer as it streams.
type printer struct {
	mu     sync.Mutex
	answer strings.Builder
}

func (p *printer) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
		p.answer.WriteString(c.Content.Text.Text)
	}
	return nil
}

func (*printer) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, nil
}
func (*printer) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}
func (*printer) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}
func (*printer) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (*printer) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (*printer) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (*printer) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (*printer) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// Serve runs the agent on one connection; here an editor made with the Go
// SDK sits on the other end of two pipes (`ptk acp` serves stdin and
// stdout). The model is scripted.
func ExampleServe() {
	model := llmtest.New(llmtest.Text("Hello from ptk."))
	cfg := acp.Config{Options: agent.Options{Model: model, ModelName: "scripted", StreamModel: true}}

	toAgent, fromEditor := io.Pipe()
	toEditor, fromAgent := io.Pipe()
	go acp.Serve(context.Background(), cfg, toAgent, fromAgent)

	editor := &printer{}
	conn := sdk.NewClientSideConnection(editor, fromEditor, toEditor)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	ctx := context.Background()
	conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Say hello")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fromEditor.Close()
	fmt.Println(r.StopReason)
	fmt.Println(editor.answer.String())
	// Output:
	// end_turn
	// Hello from ptk.
}
