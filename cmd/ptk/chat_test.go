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
}

func (m *tmuxTerm) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", m.socket}, args...)...).CombinedOutput()
	return string(out), err
}

func (m *tmuxTerm) keys(keys ...string) {
	m.t.Helper()
	if out, err := m.tmux(append([]string{"send-keys", "-t", "chat"}, keys...)...); err != nil {
		m.t.Fatalf("tmux send-keys: %v %s", err, out)
	}
}

func (m *tmuxTerm) screen() string {
	out, _ := m.tmux("capture-pane", "-p", "-t", "chat")
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
	term.waitFor("the approval question", "edit_file  greet.go", `-"hello, "`, `+"hi, "`, "allow? [y]es")
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
