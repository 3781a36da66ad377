package chat

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/tools/fs"
	"github.com/ptkit/ptk/tools/shell"
)

var update = flag.Bool("update", false, "rewrite the golden frames")

// harness drives a Model the way Bubble Tea does, one message at a time,
// on the test's goroutine, with a real agent run on a scripted model and
// the real tools over a temporary workspace.
type harness struct {
	t   *testing.T
	m   *Model
	dir string
}

func newHarness(t *testing.T, replies ...llmtest.Reply) *harness {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\nworld\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte(strings.Repeat("a line of notes\n", 10)), 0o644)
	ws, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	sh, err := shell.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	tools := append(append(ws.Tools(), ws.EditTools()...), sh.Tool())
	script := llmtest.New(replies...)
	m := New(Config{
		Options: agent.Options{Model: script, ModelName: "scripted", StreamModel: true, Mode: agent.ModeNative, Tools: tools},
		Files:   ws,
		// Durations vary from run to run: the golden frames leave them out.
		Run: func(ctx context.Context, h []ptk.Message, o agent.Options) iter.Seq2[agent.Event, error] {
			return func(yield func(agent.Event, error) bool) {
				for e, err := range agent.Stream(ctx, h, o) {
					e.Duration = 0
					if !yield(e, err) {
						return
					}
				}
			}
		},
	})
	m.opts.Approver = screenApprover{m}
	h := &harness{t: t, m: m, dir: dir}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	t.Cleanup(func() { m.Close() })
	return h
}

// screenApprover asks every call on the screen (ptk chat's approver does
// the policy and --yes first).
type screenApprover struct{ m *Model }

func (a screenApprover) Approve(ctx context.Context, c ptk.Call, _ ptk.ToolInfo) (tool.Verdict, error) {
	s, err := a.m.Ask(ctx, c, "")
	if err != nil {
		return tool.Verdict{}, err
	}
	return tool.Verdict{Allow: s != "n", Reason: "the user said no"}, nil
}

func (h *harness) send(msg tea.Msg) { h.m.Update(msg) }

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) press(code rune) { h.send(tea.KeyPressMsg{Code: code}) }

// pump hands the run's messages to the Model until stop says so.
func (h *harness) pump(what string, stop func(tea.Msg) bool) {
	h.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case msg := <-h.m.events:
			h.send(msg)
			if stop(msg) {
				return
			}
		case <-timeout:
			h.t.Fatalf("waiting for %s: timed out; the screen:\n%s", what, h.frame())
		}
	}
}

func isEvent(k agent.EventKind) func(tea.Msg) bool {
	return func(msg tea.Msg) bool {
		e, ok := msg.(eventMsg)
		return ok && e.e.Kind == k
	}
}

func isAsk(msg tea.Msg) bool { _, ok := msg.(askMsg); return ok }

// frame is the screen as text, checked to fit the window.
func (h *harness) frame() string {
	h.t.Helper()
	s := ansi.Strip(h.m.View().Content)
	lines := strings.Split(s, "\n")
	if len(lines) != h.m.height {
		h.t.Errorf("the frame has %d lines, the window %d", len(lines), h.m.height)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > h.m.width {
			h.t.Errorf("line %d is %d wide, the window %d: %q", i+1, w, h.m.width, l)
		}
	}
	return s
}

// golden compares the screen with testdata/NAME.golden.
func (h *harness) golden(name string) {
	h.t.Helper()
	got := h.frame()
	// Trailing spaces are the status line's padding: keep the files clean.
	var b strings.Builder
	for l := range strings.SplitSeq(got, "\n") {
		b.WriteString(strings.TrimRight(l, " ") + "\n")
	}
	got = b.String()
	file := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		h.t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		h.t.Errorf("the screen differs from %s:\n--- got\n%s--- want\n%s", file, got, want)
	}
}

func call(id, toolName string, args any) ptk.Call {
	b, _ := json.Marshal(args)
	return ptk.Call{ID: id, Tool: toolName, Args: b}
}

const answer = "## What it does\n\nIt gives **tool calling** to any model: `ptk run` and `ptk chat`.\n\n- parses what the model writes\n- runs the tools\n"

func TestStreamedAnswer(t *testing.T) {
	h := newHarness(t, llmtest.Reply{Content: answer, Usage: ptk.Usage{PromptTokens: 1200, CompletionTokens: 80}})
	h.typeText("What does this repository do?")
	h.press(tea.KeyEnter)
	h.pump("the answer's first words", func(tea.Msg) bool {
		return h.m.open != nil && h.m.open.text.Len() >= 40
	})
	h.golden("streaming")
	h.pump("the end of the run", isEvent(agent.EventDone))
	h.golden("streamed")
	if got := h.m.history; len(got) != 2 || strings.TrimSpace(got[1].Content) != strings.TrimSpace(answer) {
		t.Errorf("the conversation is %+v", got)
	}
}

func TestToolPanel(t *testing.T) {
	h := newHarness(t,
		llmtest.Reply{Calls: []ptk.Call{call("c1", "read_file", map[string]string{"path": "notes.md"})}},
		llmtest.Text("The notes repeat one line ten times."))
	h.typeText("read notes.md")
	h.press(tea.KeyEnter)
	h.pump("the tool to start", isEvent(agent.EventToolStart))
	h.golden("tool-running")
	h.pump("the tool's result", isEvent(agent.EventToolResult))
	h.golden("tool-result")
	h.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	if f := h.frame(); !strings.Contains(f, "10") || strings.Contains(f, "more lines") {
		t.Errorf("ctrl+o does not show the whole result:\n%s", f)
	}
	h.pump("the end of the run", isEvent(agent.EventDone))
}

func editReplies() []llmtest.Reply {
	return []llmtest.Reply{
		{Calls: []ptk.Call{call("e1", "edit_file", map[string]string{"path": "hello.txt", "old_string": "world", "new_string": "chat"})}},
		llmtest.Text("Done."),
	}
}

func TestApprovalYes(t *testing.T) {
	h := newHarness(t, editReplies()...)
	h.typeText("say hello to chat")
	h.press(tea.KeyEnter)
	h.pump("the approval question", isAsk)
	h.golden("approval-asked")
	h.typeText("y")
	h.pump("the end of the run", isEvent(agent.EventDone))
	h.golden("approval-yes")
	if b, _ := os.ReadFile(filepath.Join(h.dir, "hello.txt")); string(b) != "hello\nchat\n" {
		t.Errorf("hello.txt = %q", b)
	}
}

func TestApprovalNo(t *testing.T) {
	h := newHarness(t, editReplies()...)
	h.typeText("say hello to chat")
	h.press(tea.KeyEnter)
	h.pump("the approval question", isAsk)
	h.typeText("n")
	h.pump("the end of the run", isEvent(agent.EventDone))
	h.golden("approval-no")
	if b, _ := os.ReadFile(filepath.Join(h.dir, "hello.txt")); string(b) != "hello\nworld\n" {
		t.Errorf("a denied edit changed hello.txt: %q", b)
	}
}

func TestInterruptToolCall(t *testing.T) {
	h := newHarness(t,
		llmtest.Reply{Calls: []ptk.Call{call("b1", "bash", map[string]string{"command": "sleep 30"})}},
		llmtest.Text("This is never asked for."))
	h.typeText("wait a while")
	h.press(tea.KeyEnter)
	h.pump("the approval question", isAsk)
	h.typeText("y")
	h.pump("bash to start", isEvent(agent.EventToolStart))
	h.golden("interrupt-running")
	start := time.Now()
	h.press(tea.KeyEscape)
	h.pump("the end of the run", isEvent(agent.EventDone))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the run took %v to stop", d)
	}
	h.golden("interrupted")
	// The conversation stays consistent: the call is answered, and the
	// interruption is marked, so the next message continues it.
	hist := h.m.history
	if n := len(hist); n < 4 || hist[n-2].Role != ptk.RoleTool || hist[n-2].CallID != "b1" ||
		hist[n-1].Role != ptk.RoleAssistant || hist[n-1].Content != Interrupted {
		t.Errorf("the conversation ends with %+v", hist[len(hist)-2:])
	}
	if h.m.running {
		t.Error("still running")
	}
}

func TestResize(t *testing.T) {
	h := newHarness(t, llmtest.Reply{Content: answer})
	h.typeText("What does this repository do?")
	h.press(tea.KeyEnter)
	h.pump("the end of the run", isEvent(agent.EventDone))
	h.send(tea.WindowSizeMsg{Width: 44, Height: 14})
	h.golden("resized")
	h.send(tea.WindowSizeMsg{Width: 120, Height: 30})
	h.frame()
}

func TestCommandsAndKeys(t *testing.T) {
	h := newHarness(t)
	h.typeText("/mode ptk")
	h.press(tea.KeyEnter)
	if h.m.opts.Mode != agent.ModePTK {
		t.Errorf("/mode ptk: mode %q", h.m.opts.Mode)
	}
	h.typeText("/nonsense")
	h.press(tea.KeyEnter)
	if !strings.Contains(h.frame(), "no command /nonsense") {
		t.Errorf("an unknown command is not reported:\n%s", h.frame())
	}
	// ↑ recalls what was sent.
	h.press(tea.KeyUp)
	if got := h.m.input.Value(); got != "/nonsense" {
		t.Errorf("↑ gives %q", got)
	}
	// Ctrl-C once arms, twice quits.
	h.m.input.Reset()
	_, cmd := h.m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if cmd != nil {
		t.Error("one ctrl+c quits")
	}
	_, cmd = h.m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if cmd == nil || cmd() != tea.Quit() {
		t.Error("two ctrl+c do not quit")
	}
}

// In ptk mode the call is written in the text: the approval lands on the
// call's own panel, and the protocol never shows as text.
func TestApprovalPTKMode(t *testing.T) {
	h := newHarness(t,
		llmtest.Text("I will edit it.\n<PTK_CALL>\n{\"tool\": \"edit_file\", \"args\": {\"path\": \"hello.txt\", \"old_string\": \"world\", \"new_string\": \"chat\"}}\n</PTK_CALL>"),
		llmtest.Text("Done."))
	h.m.opts.Mode = agent.ModePTK
	h.typeText("say hello to chat")
	h.press(tea.KeyEnter)
	h.pump("the approval question", isAsk)
	h.typeText("a")
	h.pump("the end of the run", isEvent(agent.EventDone))
	f := h.frame()
	panels := 0
	for _, b := range h.m.blocks {
		if b.kind == blockTool {
			panels++
		}
	}
	if panels != 1 || strings.Contains(f, "PTK_CALL") || !strings.Contains(f, "✓ edit_file") || !strings.Contains(f, "I will edit it.") {
		t.Errorf("%d tool panels; the screen:\n%s", panels, f)
	}
}

// A model server that is down gives the one-line hint of ptk run, on the
// screen, and the chat goes on.
func TestModelDown(t *testing.T) {
	down := fmt.Errorf("dial tcp: connection refused: %w", llm.ErrConnection)
	h := newHarness(t, llmtest.Reply{Err: down}, llmtest.Text("Back."))
	h.m.cfg.Hint = func(err error) string {
		if errors.Is(err, llm.ErrConnection) {
			return "no model answers at http://localhost:11434/v1: start the server"
		}
		return ""
	}
	h.typeText("hi")
	h.press(tea.KeyEnter)
	h.pump("the end of the run", isEvent(agent.EventDone))
	if f := h.frame(); !strings.Contains(f, "✗ no model answers at http://localhost:11434/v1: start the server") {
		t.Errorf("no hint on the screen:\n%s", f)
	}
	h.typeText("again")
	h.press(tea.KeyEnter)
	h.pump("the second run", isEvent(agent.EventDone))
	if f := h.frame(); !strings.Contains(f, "Back.") {
		t.Errorf("the chat did not go on:\n%s", f)
	}
}

// A conversation resumed shows its messages, the calls with their results,
// and the next message continues it.
func TestResume(t *testing.T) {
	c := call("r1", "read_file", map[string]string{"path": "hello.txt"})
	hist := []ptk.Message{
		{Role: ptk.RoleUser, Content: "what is in hello.txt?"},
		{Role: ptk.RoleAssistant, Calls: []ptk.Call{c}},
		{Role: ptk.RoleTool, CallID: "r1", Tool: "read_file", Content: "1\thello\n2\tworld"},
		{Role: ptk.RoleAssistant, Content: "It says hello world."},
	}
	script := llmtest.New(llmtest.Text("Twice."))
	store := &MemoryConversations{}
	store.Save(context.Background(), "yesterday", hist) // as ptk chat --conversation loads it
	m := New(Config{Options: agent.Options{Model: script, ModelName: "scripted", StreamModel: true},
		Conversation: "yesterday", Conversations: store, History: hist})
	t.Cleanup(func() { m.Close() })
	h := &harness{t: t, m: m}
	h.golden("resumed")
	h.typeText("how many words?")
	h.press(tea.KeyEnter)
	h.pump("the answer", isEvent(agent.EventDone))
	reqs := script.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) < len(hist)+1 {
		t.Fatalf("the model was not sent the conversation: %+v", reqs)
	}
	saved, _ := store.Load(context.Background(), "yesterday")
	if len(saved) != len(hist)+2 || saved[len(saved)-1].Content != "Twice." {
		t.Errorf("the store keeps %+v", saved)
	}
	// /conversations says where the conversations are kept.
	h.typeText("/conversations")
	h.press(tea.KeyEnter)
	if f := h.frame(); !strings.Contains(f, "Conversations in this workspace (1), kept in memory for this session only") || !strings.Contains(f, "yesterday") {
		t.Errorf("/conversations:\n%s", f)
	}
	h.press(tea.KeyEscape)
}

// Reasoning is folded to one dimmed line until ctrl+r; pgup scrolls back.
func TestReasoningAndScroll(t *testing.T) {
	h := newHarness(t, llmtest.Reply{Reasoning: "The user wants a list.\nI will count to twenty.", Content: strings.Repeat("counting\n\n", 20) + "twenty."})
	h.typeText("count")
	h.press(tea.KeyEnter)
	h.pump("the answer", isEvent(agent.EventDone))
	for range 5 { // more than there is: it stops at the top
		h.send(tea.KeyPressMsg{Code: tea.KeyPgUp})
	}
	h.golden("reasoning-folded")
	h.send(tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
	if f := h.frame(); !strings.Contains(f, "I will count to twenty.") {
		t.Errorf("ctrl+r does not show the reasoning:\n%s", f)
	}
	for range 5 {
		h.send(tea.KeyPressMsg{Code: tea.KeyPgDown})
	}
	if f := h.frame(); !strings.Contains(f, "twenty.") || h.m.top != nil {
		t.Errorf("pgdown does not come back to the end (anchor %v):\n%s", h.m.top, f)
	}
}

// Esc while the model is still answering stops the model call; a second
// message is then a new run.
func TestInterruptModelCall(t *testing.T) {
	h := newHarness(t, llmtest.Reply{Wait: true}, llmtest.Text("Here now."))
	h.typeText("hello?")
	h.press(tea.KeyEnter)
	h.pump("the model call", isEvent(agent.EventIteration))
	h.press(tea.KeyEscape)
	h.pump("the end of the run", isEvent(agent.EventDone))
	if f := h.frame(); !strings.Contains(f, "interrupted: the conversation keeps what was done") {
		t.Errorf("no interruption shown:\n%s", f)
	}
	h.typeText("still there?")
	h.press(tea.KeyEnter)
	h.pump("the second run", isEvent(agent.EventDone))
	if f := h.frame(); !strings.Contains(f, "Here now.") {
		t.Errorf("the second run did not answer:\n%s", f)
	}
}

// write_file answers with one line: its panel shows what was written, as
// the approval did.
func TestWriteFilePanel(t *testing.T) {
	h := newHarness(t,
		llmtest.Reply{Calls: []ptk.Call{call("w1", "write_file", map[string]string{"path": "todo.md", "content": "# To do\n\n- tests\n"})}},
		llmtest.Text("Written."))
	h.typeText("write a todo")
	h.press(tea.KeyEnter)
	h.pump("the approval question", isAsk)
	h.typeText("y")
	h.pump("the end of the run", isEvent(agent.EventDone))
	h.golden("write-file")
	if b, _ := os.ReadFile(filepath.Join(h.dir, "todo.md")); string(b) != "# To do\n\n- tests\n" {
		t.Errorf("todo.md = %q", b)
	}
}
