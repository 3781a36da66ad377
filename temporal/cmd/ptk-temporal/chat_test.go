package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmuxTerm is a binary running in a real terminal: tmux, with a server of
// its own.
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
	deadline := time.Now().Add(60 * time.Second)
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
		time.Sleep(100 * time.Millisecond)
	}
}

// TestChatDurable drives 'ptk chat --temporal' in tmux: each turn is a
// durable run on a worker; the write the run waits for is asked on the
// chat's screen, and the file changes only after y; n denies it (the
// model is told, the file stays); esc while the question is up cancels the
// durable run; a model's escape sequences show as text; the conversation
// goes on from turn to turn.
func TestChatDurable(t *testing.T) {
	need(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (CI installs it)")
	}
	environ, ws := testEnv(t, "chat", "read_file,write_file")
	term := &tmuxTerm{t: t, socket: fmt.Sprintf("ptk-temporal-chat-%d", os.Getpid())}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last screen:\n%s", term.screen())
		}
		term.tmux("kill-server")
	})
	var vars []string
	for _, v := range environ {
		if strings.HasPrefix(v, "PTK_") || strings.HasPrefix(v, "XDG_") || strings.HasPrefix(v, "HOME=") || strings.HasPrefix(v, "PATH=") {
			vars = append(vars, "'"+v+"'")
		}
	}
	shellCmd := "env " + strings.Join(vars, " ") + " " + env.ptk + " chat --temporal " + env.addr + " --mode native --workspace " + ws +
		"; echo ptk exited $?; sleep 60"
	if out, err := term.tmux("new-session", "-d", "-s", "chat", "-x", "110", "-y", "34", "-c", ws, shellCmd); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	note := filepath.Join(ws, "note.txt")
	term.waitFor("the chat", "/help", "runs durably")

	term.keys("write approved", "Enter")
	screen := term.waitFor("the approval question", "write_file", "note.txt", "allow? [y]es")
	if out := os.Getenv("PTK_CHAT_SCREEN"); out != "" {
		os.WriteFile(out+".ask", []byte(screen), 0o644)
	}
	if _, err := os.Stat(note); err == nil {
		t.Fatal("the write ran before it was approved")
	}
	term.keys("y")
	screen = term.waitFor("the approved write's answer", "done: Created note.txt")
	if b, err := os.ReadFile(note); err != nil || string(b) != "approved" {
		t.Errorf("note.txt after yes: %q, %v", b, err)
	}
	if out := os.Getenv("PTK_CHAT_SCREEN"); out != "" {
		os.WriteFile(out, []byte(screen), 0o644)
	}

	term.keys("write denied", "Enter")
	term.waitFor("the second question", "› write denied", "allow? [y]es")
	term.keys("n")
	term.waitFor("the denial's answer", "done: Error: Denied")
	if b, _ := os.ReadFile(note); string(b) != "approved" {
		t.Errorf("note.txt after no: %q", b)
	}

	term.keys("write canceled", "Enter")
	term.waitFor("the third question", "› write canceled", "allow? [y]es")
	term.keys("Escape")
	term.waitFor("the run to stop", "interrupted: the conversation keeps what was done")
	if b, _ := os.ReadFile(note); string(b) != "approved" {
		t.Errorf("note.txt after esc: %q", b)
	}
	checkCanceled(t, environ, "write canceled", "write approved")

	term.keys("evil", "Enter")
	screen = term.waitFor("the answer with escapes", `evil \x1b]0;owned\x07\x1b[2J\x1b[31mred`)
	if title, _ := term.tmux("display-message", "-p", "-t", "chat", "#{pane_title}"); strings.Contains(title, "owned") {
		t.Errorf("the model set the terminal's title: %q", title)
	}
	if out := os.Getenv("PTK_CHAT_SCREEN"); out != "" {
		os.WriteFile(out+".2", []byte(screen), 0o644)
	}

	term.keys("C-c")
	term.waitFor("the quit warning", "ctrl+c again quits")
	term.keys("C-c")
	term.waitFor("ptk to exit", "ptk exited 0")
}
