package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/tool"
)

// editor is an ACP client for the tests, over the Go SDK's client side: it
// keeps every update, answers permission requests as told, and, when it
// offers them, holds files in memory (fs/*) and runs terminals as processes
// (terminal/*), as an editor does.
type editor struct {
	t    testing.TB
	conn *sdk.ClientSideConnection

	mu          sync.Mutex
	updates     []sdk.SessionNotification
	asked       []sdk.RequestPermissionRequest
	answer      string // the option to select; "" cancels
	buffers     map[string]string
	reads       []string
	terms       map[string]*term
	nterm       int
	unknownReqs int
}

type term struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan struct{}
	code int
	sig  string
}

var _ sdk.Client = (*editor)(nil)

func (e *editor) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates = append(e.updates, n)
	return nil
}

func (e *editor) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	e.mu.Lock()
	e.asked = append(e.asked, p)
	answer := e.answer
	e.mu.Unlock()
	if answer == "wait" { // the user does not answer
		<-ctx.Done()
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{Outcome: "selected", OptionId: sdk.PermissionOptionId(answer)}}}, nil
}

func (e *editor) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads = append(e.reads, p.Path)
	if text, ok := e.buffers[p.Path]; ok {
		return sdk.ReadTextFileResponse{Content: text}, nil
	}
	data, err := os.ReadFile(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.ReadTextFileResponse{Content: string(data)}, nil
}

func (e *editor) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buffers[p.Path] = p.Content
	return sdk.WriteTextFileResponse{}, nil
}

func (e *editor) CreateTerminal(_ context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	cmd := exec.Command(p.Command, p.Args...)
	if p.Cwd != nil {
		cmd.Dir = *p.Cwd
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	tm := &term{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &lockedWriter{mu: &e.mu, w: &tm.out}, &lockedWriter{mu: &e.mu, w: &tm.out}
	if err := cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	e.mu.Lock()
	e.nterm++
	id := fmt.Sprintf("term-%d", e.nterm)
	e.terms[id] = tm
	e.mu.Unlock()
	go func() {
		err := cmd.Wait()
		e.mu.Lock()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				tm.sig = ws.Signal().String()
			}
			tm.code = ee.ExitCode()
		}
		e.mu.Unlock()
		close(tm.done)
	}()
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (e *editor) terminal(id string) *term {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.terms[id]
}

func (e *editor) KillTerminal(_ context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	if tm := e.terminal(p.TerminalId); tm != nil {
		syscall.Kill(-tm.cmd.Process.Pid, syscall.SIGKILL)
		<-tm.done
	}
	return sdk.KillTerminalResponse{}, nil
}

func (e *editor) TerminalOutput(_ context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	tm := e.terminal(p.TerminalId)
	if tm == nil {
		return sdk.TerminalOutputResponse{}, sdk.NewInvalidParams(map[string]any{"error": "no terminal"})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	resp := sdk.TerminalOutputResponse{Output: tm.out.String()}
	select {
	case <-tm.done:
		code := tm.code
		resp.ExitStatus = &sdk.TerminalExitStatus{ExitCode: &code}
	default:
	}
	return resp, nil
}

func (e *editor) ReleaseTerminal(ctx context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	e.KillTerminal(ctx, sdk.KillTerminalRequest{SessionId: p.SessionId, TerminalId: p.TerminalId})
	return sdk.ReleaseTerminalResponse{}, nil
}

func (e *editor) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	tm := e.terminal(p.TerminalId)
	if tm == nil {
		return sdk.WaitForTerminalExitResponse{}, sdk.NewInvalidParams(map[string]any{"error": "no terminal"})
	}
	select {
	case <-tm.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	code := tm.code
	return sdk.WaitForTerminalExitResponse{ExitCode: &code}, nil
}

// connect serves cfg to a new editor; caps are what the editor offers.
func connect(t testing.TB, cfg Config, caps sdk.ClientCapabilities) *editor {
	t.Helper()
	toAgent, fromEditor := io.Pipe()
	toEditor, fromAgent := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), cfg, toAgent, fromAgent) }()
	e := &editor{t: t, buffers: map[string]string{}, terms: map[string]*term{}, answer: optionOnce}
	e.conn = sdk.NewClientSideConnection(e, fromEditor, toEditor)
	e.conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		fromEditor.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not end when the editor went away")
		}
		fromAgent.Close()
	})
	resp, err := e.conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if !resp.AgentCapabilities.LoadSession || !resp.AgentCapabilities.PromptCapabilities.EmbeddedContext || resp.AgentInfo.Name != "ptk" {
		t.Errorf("initialize = %+v", resp)
	}
	return e
}

func (e *editor) newSession(cwd string) string {
	e.t.Helper()
	resp, err := e.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		e.t.Fatalf("session/new: %v", err)
	}
	return string(resp.SessionId)
}

func (e *editor) prompt(id, text string) (sdk.PromptResponse, error) {
	return e.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: sdk.SessionId(id), Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
}

// seen returns the updates so far, and forgets them.
func (e *editor) seen() []sdk.SessionUpdate {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []sdk.SessionUpdate
	for _, n := range e.updates {
		out = append(out, n.Update)
	}
	e.updates = nil
	return out
}

// answerText joins the agent_message_chunks of updates.
func answerText(us []sdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if c := u.AgentMessageChunk; c != nil && c.Content.Text != nil {
			b.WriteString(c.Content.Text.Text)
		}
	}
	return b.String()
}

// lastCall returns the final state of a tool call, folding its updates.
type foldedCall struct {
	title, kind, status string
	content             []sdk.ToolCallContent
	rawInput            any
	locations           []sdk.ToolCallLocation
	updates             int
}

func calls(us []sdk.SessionUpdate) (order []string, byID map[string]*foldedCall) {
	byID = map[string]*foldedCall{}
	for _, u := range us {
		switch {
		case u.ToolCall != nil:
			tc := u.ToolCall
			id := string(tc.ToolCallId)
			order = append(order, id)
			byID[id] = &foldedCall{title: tc.Title, kind: string(tc.Kind), status: string(tc.Status), content: tc.Content, rawInput: tc.RawInput, locations: tc.Locations}
		case u.ToolCallUpdate != nil:
			tu := u.ToolCallUpdate
			c := byID[string(tu.ToolCallId)]
			if c == nil {
				continue
			}
			c.updates++
			if tu.Title != nil {
				c.title = *tu.Title
			}
			if tu.Kind != nil {
				c.kind = string(*tu.Kind)
			}
			if tu.Status != nil {
				c.status = string(*tu.Status)
			}
			if tu.Content != nil {
				c.content = tu.Content
			}
			if tu.RawInput != nil {
				c.rawInput = tu.RawInput
			}
			if tu.Locations != nil {
				c.locations = tu.Locations
			}
		}
	}
	return order, byID
}

func contentText(cs []sdk.ToolCallContent) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Content != nil && c.Content.Content.Text != nil {
			b.WriteString(c.Content.Content.Text.Text)
		}
	}
	return b.String()
}

func call(id, tool, args string) ptk.Call {
	return ptk.Call{ID: id, Tool: tool, Args: json.RawMessage(args)}
}

// project makes a folder to work in.
func project(t testing.TB) string {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"package.json": `{"name": "demo", "version": "1.0.0"}` + "\n",
		"main.go":      "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func config(model *llmtest.Script) Config {
	return Config{Options: agent.Options{Model: model, ModelName: "scripted", StreamModel: true, Mode: agent.ModeNative}}
}

func TestStreamedAnswerAndToolCall(t *testing.T) {
	dir := project(t)
	model := llmtest.New(
		llmtest.Reply{Reasoning: "Look at the file.", Content: "Let me read it.", Calls: []ptk.Call{call("c1", "read_file", `{"path": "package.json"}`)}},
		llmtest.Reply{Content: "The package is **demo**, version 1.0.0.", Usage: ptk.Usage{PromptTokens: 10, CompletionTokens: 5}},
	)
	e := connect(t, config(model), sdk.ClientCapabilities{})
	id := e.newSession(dir)
	resp, err := e.prompt(id, "read package.json")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	meta, _ := resp.Meta["ptk"].(map[string]any)
	if meta["iterations"] != 2.0 || meta["toolCalls"] != 1.0 || meta["promptTokens"] != 10.0 {
		t.Errorf("_meta.ptk = %v", resp.Meta)
	}
	us := e.seen()
	if got := answerText(us); got != "Let me read it.The package is **demo**, version 1.0.0." {
		t.Errorf("answer = %q", got)
	}
	var thought string
	for _, u := range us {
		if u.AgentThoughtChunk != nil {
			thought += u.AgentThoughtChunk.Content.Text.Text
		}
	}
	if thought != "Look at the file." {
		t.Errorf("thought = %q", thought)
	}
	order, byID := calls(us)
	if len(order) != 1 {
		t.Fatalf("tool calls %v", order)
	}
	c := byID[order[0]]
	if c.title != "Read package.json" || c.kind != "read" || c.status != "completed" ||
		!strings.Contains(contentText(c.content), `"name": "demo"`) || len(c.locations) != 1 || c.locations[0].Path != filepath.Join(dir, "package.json") {
		t.Errorf("the call = %+v", c)
	}
	if len(e.asked) != 0 {
		t.Errorf("a read was asked about: %+v", e.asked)
	}
}

func TestPermissions(t *testing.T) {
	dir := project(t)
	edit := func(id, from, to string) llmtest.Reply {
		return llmtest.Reply{Calls: []ptk.Call{call(id, "edit_file", fmt.Sprintf(`{"path": "main.go", "old_string": %q, "new_string": %q}`, from, to))}}
	}
	model := llmtest.New(
		edit("c1", "hi", "hello"), llmtest.Text("Rejected."),
		edit("c2", "hi", "hello"), llmtest.Text("Done once."),
		edit("c3", "hello", "hey"), llmtest.Text("Done always."),
		edit("c4", "hey", "yo"), llmtest.Text("Done without asking."),
	)
	e := connect(t, config(model), sdk.ClientCapabilities{})
	id := e.newSession(dir)
	disk := func() string { b, _ := os.ReadFile(filepath.Join(dir, "main.go")); return string(b) }

	e.answer = optionReject
	if _, err := e.prompt(id, "say hello"); err != nil {
		t.Fatal(err)
	}
	_, byID := calls(e.seen())
	if c := byID["ptk-1-1-1"]; c == nil || c.status != "failed" || !strings.Contains(contentText(c.content), "Denied: the user did not allow this call") {
		t.Errorf("a rejected call: %+v", c)
	}
	if !strings.Contains(disk(), `println("hi")`) || len(e.asked) != 1 {
		t.Fatalf("rejected, yet main.go = %q (asked %d)", disk(), len(e.asked))
	}
	p := e.asked[0]
	if len(p.Options) != 3 || p.ToolCall.ToolCallId != "ptk-1-1-1" || *p.ToolCall.Title != "Edit main.go" ||
		len(p.ToolCall.Content) != 1 || p.ToolCall.Content[0].Diff == nil || !strings.Contains(p.ToolCall.Content[0].Diff.NewText, `println("hello")`) {
		t.Errorf("the permission request = %+v", p)
	}

	e.answer = optionOnce
	e.prompt(id, "again")
	_, byID = calls(e.seen())
	c := byID["ptk-2-1-1"]
	if c == nil || c.status != "completed" || c.content[0].Diff == nil || *c.content[0].Diff.OldText != "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n" ||
		c.content[0].Diff.NewText != "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n" {
		t.Errorf("an allowed edit: %+v", c)
	}
	e.answer = optionAlways
	e.prompt(id, "again")
	e.answer = "wrong" // never asked
	e.prompt(id, "again")
	if !strings.Contains(disk(), `println("yo")`) || len(e.asked) != 3 {
		t.Errorf("after allow always: main.go %q, asked %d times", disk(), len(e.asked))
	}
}

func TestPolicyAndModes(t *testing.T) {
	dir := project(t)
	write := llmtest.Reply{Calls: []ptk.Call{call("w", "write_file", `{"path": "notes.md", "content": "# notes\n"}`)}}
	bash := llmtest.Reply{Calls: []ptk.Call{call("b", "bash", `{"command": "echo ran > ran.txt"}`)}}
	model := llmtest.New(
		write, llmtest.Text("plan"), // plan: refused
		write, llmtest.Text("auto"), // auto-edit: runs
		bash, llmtest.Text("denied"), // the policy denies, in any mode
		bash, llmtest.Text("denied again"),
	)
	cfg := config(model)
	cfg.Policy = &tool.Policy{Rules: []tool.Rule{{Tool: "bash", Command: "echo", Action: tool.Deny}}}
	cfg.PolicyFile = "policy.json"
	cfg.Mode = tool.PresetPlan
	e := connect(t, cfg, sdk.ClientCapabilities{})
	id := e.newSession(dir)
	e.answer = "wrong"
	e.prompt(id, "write notes")
	_, byID := calls(e.seen())
	if c := byID["ptk-1-1-1"]; c == nil || c.status != "failed" || !strings.Contains(contentText(c.content), "plan-only mode") {
		t.Errorf("plan mode: %+v", c)
	}
	if _, err := e.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: sdk.SessionId(id), ModeId: "auto-edit"}); err != nil {
		t.Fatal(err)
	}
	e.prompt(id, "write notes")
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.md")); string(b) != "# notes\n" || len(e.asked) != 0 {
		t.Errorf("auto-edit: notes.md %q, asked %d", b, len(e.asked))
	}
	// The policy denies "echo" in any mode, without asking.
	e.answer = optionReject
	e.prompt(id, "run it")
	e.seen()
	if len(e.asked) != 0 {
		t.Errorf("the policy did not decide first: asked %+v", e.asked)
	}
	e.prompt(id, "run it")
	_, byID = calls(e.seen())
	if c := byID["ptk-4-1-1"]; c == nil || !strings.Contains(contentText(c.content), "policy.json, rule 1") {
		t.Errorf("a call the policy denies: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Error("bash ran")
	}
	if _, err := e.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: sdk.SessionId(id), ModeId: "yolo"}); err == nil {
		t.Error("set_mode took a mode ptk does not offer")
	}
}
