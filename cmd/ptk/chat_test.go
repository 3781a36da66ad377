package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/trace"
)

func TestChatNeedsTerminal(t *testing.T) {
	var stdout, stderr strings.Builder
	code := run([]string{"chat", "--model", "qwen3:8b"}, strings.NewReader(""), &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "ptk chat needs a terminal") || !strings.Contains(stderr.String(), "ptk run") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// The chat's approver asks through the screen: "a" allows the tool for the
// rest of the session, "n" denies, a canceled run gets its error.
func TestChatApproverUI(t *testing.T) {
	var asked int
	a := &cliApprover{ask: true, tools: approvalTools(nil)}
	answers := []string{"n", "a"}
	a.ui = func(ctx context.Context, c ptk.Call, _ string) (string, error) {
		asked++
		if err := ctx.Err(); err != nil {
			return "", err
		}
		s := answers[0]
		answers = answers[1:]
		return s, nil
	}
	c := ptk.Call{Tool: "bash", Args: []byte(`{"command":"ls"}`)}
	ctx := context.Background()
	if v, err := a.Approve(ctx, c, ptk.ToolInfo{Name: "bash"}); err != nil || v.Allow {
		t.Errorf("n: %+v, %v", v, err)
	}
	if v, err := a.Approve(ctx, c, ptk.ToolInfo{Name: "bash"}); err != nil || !v.Allow {
		t.Errorf("a: %+v, %v", v, err)
	}
	if v, err := a.Approve(ctx, c, ptk.ToolInfo{Name: "bash"}); err != nil || !v.Allow || asked != 2 {
		t.Errorf("after a: %+v, %v, asked %d times", v, err, asked)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	c.Tool = "write_file"
	if _, err := a.Approve(canceled, c, ptk.ToolInfo{Name: "write_file"}); err == nil {
		t.Error("a canceled question allowed or denied the call")
	}
}

// tmuxTerm is the real binary running in a real terminal: tmux, with a
// server of its own.
type tmuxTerm struct {
	t      *testing.T
	socket string
	// session is the session keys go to and screens come from (default
	// "chat").
	session string
}

func (m *tmuxTerm) target() string {
	if m.session == "" {
		return "chat"
	}
	return m.session
}

func (m *tmuxTerm) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", m.socket}, args...)...).CombinedOutput()
	return string(out), err
}

func (m *tmuxTerm) keys(keys ...string) {
	m.t.Helper()
	if out, err := m.tmux(append([]string{"send-keys", "-t", m.target()}, keys...)...); err != nil {
		m.t.Fatalf("tmux send-keys: %v %s", err, out)
	}
}

func (m *tmuxTerm) screen() string {
	out, _ := m.tmux("capture-pane", "-p", "-t", m.target())
	return out
}

// waitFor waits until the screen shows all of texts.
func (m *tmuxTerm) waitFor(what string, texts ...string) string {
	m.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := m.screen()
		ok := true
		for _, text := range texts {
			ok = ok && strings.Contains(s, text)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("waiting for %s: the screen shows\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestChatInTerminal drives ptk chat in tmux against a scripted
// OpenAI-compatible server: ask and see the answer, approve an edit and
// see the file changed, interrupt a long bash call and see the run stop,
// quit with ctrl+c twice.
func TestChatInTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the end-to-end test of ptk chat needs it (CI installs it; apt-get install tmux)")
	}
	bin := filepath.Join(t.TempDir(), "ptk")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	_, url := newFakeOpenAI(t,
		fakeReply{content: "Hello! I am **ptk**, a coding assistant. Ask me to change something."},
		fakeReply{calls: [][2]string{{"edit_file", `{"path":"greet.go","old_string":"\"hello, \"","new_string":"\"hi, \""}`}}},
		fakeReply{content: "greet now says hi."},
		fakeReply{calls: [][2]string{{"bash", `{"command":"sleep 30"}`}}},
	)
	dir := workspace(t)
	term := &tmuxTerm{t: t, socket: fmt.Sprintf("ptk-chat-test-%d", os.Getpid())}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last screen:\n%s", term.screen())
		}
		term.tmux("kill-server")
	})
	env := []string{"PTK_BASE_URL=" + url, "PTK_API_KEY=sk-test", "XDG_CONFIG_HOME=" + t.TempDir(), "XDG_DATA_HOME=" + t.TempDir()}
	shellCmd := "env " + strings.Join(env, " ") + " " + bin + " chat --model qwen3:8b --mode native; echo ptk exited $?; sleep 60"
	if out, err := term.tmux("new-session", "-d", "-s", "chat", "-x", "100", "-y", "30", "-c", dir, shellCmd); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}

	term.waitFor("the chat", "/help")
	term.keys("hi", "Enter")
	term.waitFor("the answer", "› hi", "Hello! I am ptk, a coding assistant.")

	term.keys("say hi instead of hello", "Enter")
	// The question shows the diff the edit would make to the file as it is.
	term.waitFor("the approval question", "edit_file  greet.go", "@@ -1,3 +1,3 @@", `-func greet(name string) string { return "hello, " + name }`, `+func greet(name string) string { return "hi, " + name }`, "allow? [y]es")
	term.keys("y")
	screen := term.waitFor("the edit's result", "Edited greet.go", "greet now says hi.")
	if b, _ := os.ReadFile(filepath.Join(dir, "greet.go")); !strings.Contains(string(b), `"hi, "`) {
		t.Errorf("greet.go after the approved edit:\n%s", b)
	}
	if os.Getenv("PTK_CHAT_SCREEN") != "" {
		os.WriteFile(os.Getenv("PTK_CHAT_SCREEN"), []byte(screen), 0o644)
	}

	term.keys("wait a while", "Enter")
	term.waitFor("the bash approval", "$ sleep 30", "allow?")
	term.keys("y")
	term.waitFor("bash to run", "running… (esc interrupts)")
	start := time.Now()
	term.keys("Escape")
	screen = term.waitFor("the run to stop", "interrupted: the conversation keeps what was done", "/help")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("esc took %v to stop sleep 30", d)
	}
	if strings.Contains(screen, "working") {
		t.Errorf("still working after esc:\n%s", screen)
	}

	term.keys("C-c")
	term.waitFor("the quit warning", "ctrl+c again quits")
	term.keys("C-c")
	term.waitFor("ptk to exit", "ptk exited 0")
}

// TestChatSessionsInTerminal drives ptk chat in tmux through what a user
// keeps from session to session: an @file mention completed with tab and
// attached, an edit undone with /undo (the file back as it was), a message
// typed while the model works waiting in the queue and sent after, /new
// keeping the old conversation, ctrl+d saying how to resume, and
// --continue going on with the workspace's latest conversation. With
// PTK_CHAT_SCREENS=DIR, the screens are written there to look at.
func TestChatSessionsInTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the end-to-end test of ptk chat needs it (CI installs it; apt-get install tmux)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: checkpoints need it")
	}
	bin := filepath.Join(t.TempDir(), "ptk")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv, url := newFakeOpenAI(t,
		fakeReply{content: "greet.go says hello."},
		fakeReply{calls: [][2]string{{"edit_file", `{"path":"greet.go","old_string":"\"hello, \"","new_string":"\"hi, \""}`}}},
		fakeReply{content: "greet now says hi."},
		fakeReply{calls: [][2]string{{"bash", `{"command":"sleep 3"}`}}},
		fakeReply{content: "I waited."},
		fakeReply{content: "This came from the queue."},
		fakeReply{content: "A new conversation, hello."},
		fakeReply{content: "Still here, in the same conversation."},
	)
	dir := workspace(t)
	greet := filepath.Join(dir, "greet.go")
	original, _ := os.ReadFile(greet)
	shots := os.Getenv("PTK_CHAT_SCREENS")
	shot := func(name, screen string) {
		if shots != "" {
			os.WriteFile(filepath.Join(shots, name+".txt"), []byte(screen), 0o644)
		}
	}
	term := &tmuxTerm{t: t, socket: fmt.Sprintf("ptk-chat-sessions-%d", os.Getpid())}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last screen:\n%s", term.screen())
		}
		term.tmux("kill-server")
	})
	data := t.TempDir()
	// The editor ctrl+g opens: it adds a line to the message's file.
	editor := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nprintf ' and a line from the editor' >> \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PTK_BASE_URL=" + url, "PTK_API_KEY=sk-test", "XDG_CONFIG_HOME=" + t.TempDir(),
		"XDG_DATA_HOME=" + data, "XDG_STATE_HOME=" + t.TempDir(), "EDITOR=" + editor, "VISUAL="}
	start := func(session, args string) {
		term.session = session
		shellCmd := "env " + strings.Join(env, " ") + " " + bin + " chat --model qwen3:8b --mode native " + args + "; echo ptk exited $?; sleep 60"
		if out, err := term.tmux("new-session", "-d", "-s", session, "-x", "110", "-y", "36", "-c", dir, shellCmd); err != nil {
			t.Fatalf("tmux new-session: %v %s", err, out)
		}
	}
	start("first", "--approval yolo")
	term.waitFor("the chat", "/help", "yolo")

	// @gr completes to greet.go with tab; the file goes with the message.
	term.keys("what does @gr")
	shot("1-completion", term.waitFor("the completion", "› @greet.go", "tab completes"))
	term.keys("Tab", "say?", "Enter")
	shot("2-attached", term.waitFor("the answer", "› what does @greet.go say?", "attached: greet.go", "greet.go says hello."))
	if msgs := srv.request(0)["messages"].([]any); !strings.Contains(fmt.Sprint(msgs[len(msgs)-1]), `return \"hello, \" + name`) &&
		!strings.Contains(fmt.Sprint(msgs[len(msgs)-1]), `return "hello, " + name`) {
		t.Errorf("greet.go was not attached to the message: %v", msgs[len(msgs)-1])
	}

	// An edit, then /undo: the file is as it was, the message back in the
	// input.
	term.keys("say hi instead of hello", "Enter")
	shot("3-edited", term.waitFor("the edit", "Edited greet.go", "greet now says hi.", "/undo puts them back"))
	if b, _ := os.ReadFile(greet); !strings.Contains(string(b), `"hi, "`) {
		t.Fatalf("greet.go after the edit:\n%s", b)
	}
	term.keys("/undo", "Enter")
	shot("4-undone", term.waitFor("the undo", "undone: 1 file put back as before that turn (restored greet.go)", "┃ say hi instead of hello"))
	if b, _ := os.ReadFile(greet); string(b) != string(original) {
		t.Errorf("greet.go after /undo:\n%s\nwant\n%s", b, original)
	}
	if strings.Contains(term.screen(), "greet now says hi.") {
		t.Errorf("the undone turn is still on the screen:\n%s", term.screen())
	}
	// ctrl+g edits the message in $EDITOR.
	term.keys("C-g")
	shot("4b-editor", term.waitFor("the message from the editor", "┃ say hi instead of hello and a line from the editor"))
	term.keys("C-u")

	// While bash sleeps, a message waits in the queue, and is sent when
	// the run ends.
	term.keys("wait a little", "Enter")
	term.waitFor("bash to run", "$ sleep 3", "running")
	term.keys("and then this", "Enter")
	shot("5-queued", term.waitFor("the queue", "⧗ queued: and then this", "1 queued"))
	shot("6-dequeued", term.waitFor("the queued message's answer", "I waited.", "› and then this", "This came from the queue."))
	if msgs := srv.request(5)["messages"].([]any); !strings.Contains(fmt.Sprint(msgs[len(msgs)-1]), "and then this") {
		t.Errorf("the queued message was not sent last: %v", msgs[len(msgs)-1])
	}

	// /new keeps the old conversation.
	term.keys("/new", "Enter")
	shot("7-new", term.waitFor("a new conversation", "a new conversation", "messages), is kept"))
	if s := term.screen(); strings.Contains(s, "This came from the queue.") {
		t.Errorf("/new left the old conversation on the screen:\n%s", s)
	}
	term.keys("hello", "Enter")
	term.waitFor("the new conversation's answer", "A new conversation, hello.")
	if msgs := srv.request(6)["messages"].([]any); strings.Contains(fmt.Sprint(msgs), "and then this") {
		t.Errorf("the new conversation was sent the old one: %v", msgs)
	}

	// ctrl+d quits and says how to resume.
	term.keys("C-d")
	shot("8-exit", term.waitFor("ptk to exit", "Resume it: ptk chat --continue", "ptk exited 0"))

	// --continue goes on with this workspace's latest conversation; the
	// picker lists both.
	start("second", "--continue")
	shot("9-continued", term.waitFor("the conversation continued", "continuing conversation", "› hello", "A new conversation, hello."))
	term.keys("/conversations", "Enter")
	shot("10-picker", term.waitFor("the picker", "Conversations in this workspace (2)", "what does @greet.go say?"))
	term.keys("Escape")
	// Keys right after esc would read as alt+key: wait for the picker to
	// close.
	for deadline := time.Now().Add(10 * time.Second); strings.Contains(term.screen(), "Conversations in this workspace"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("esc does not close the picker:\n%s", term.screen())
		}
	}
	term.keys("still there?", "Enter")
	term.waitFor("the continued answer", "Still here, in the same conversation.")
	if msgs := srv.request(7)["messages"].([]any); !strings.Contains(fmt.Sprint(msgs), "A new conversation, hello.") {
		t.Errorf("--continue did not send the conversation so far: %v", msgs)
	}
	term.keys("/exit", "Enter")
	term.waitFor("ptk to exit", "ptk exited 0")

	// Every run is recorded in the trace store, as ptk run's are, named
	// by its conversation.
	ts, err := trace.Open(context.Background(), filepath.Join(data, "ptk", "traces.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	runs, err := ts.List(context.Background(), trace.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for _, r := range runs {
		byName[r.Name]++
	}
	if len(runs) != 6 || len(byName) != 2 {
		t.Errorf("%d runs recorded, in %d conversations (%v); want 6 in 2 (the undone turn's run stays recorded)", len(runs), len(byName), byName)
	}
}
