package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// spoof is a command that, printed as it is, redraws its own approval
// question: it erases the line and writes "ls -la" where "touch SPOOFED"
// was, so the user would approve what they do not see.
const spoof = "touch SPOOFED #\x1b[2K\x1b[1G? bash $ ls -la"

// startTerminal builds ptk and runs args in a real terminal (tmux) in dir,
// against the scripted server at url.
func startTerminal(t *testing.T, dir, url string, args ...string) *tmuxTerm {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the terminal tests need it (CI installs it; apt-get install tmux)")
	}
	bin := filepath.Join(t.TempDir(), "ptk")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	term := &tmuxTerm{t: t, socket: fmt.Sprintf("ptk-term-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last screen:\n%s", term.screen())
		}
		term.tmux("kill-server")
	})
	env := []string{"PTK_BASE_URL=" + url, "PTK_API_KEY=sk-test", "XDG_CONFIG_HOME=" + t.TempDir(), "NO_COLOR=1"}
	shellCmd := "env " + strings.Join(env, " ") + " " + bin + " " + strings.Join(args, " ") + "; echo ptk exited $?; sleep 60"
	if out, err := term.tmux("new-session", "-d", "-s", "chat", "-x", "120", "-y", "40", "-c", dir, shellCmd); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	return term
}

// commandArgs are bash's arguments for command, as JSON.
func commandArgs(command string) string {
	b, _ := json.Marshal(map[string]string{"command": command})
	return string(b)
}

// keepScreen writes a captured screen where PTK_ARTIFACTS says, to look at.
func keepScreen(t *testing.T, name, screen string) {
	if dir := os.Getenv("PTK_ARTIFACTS"); dir != "" {
		os.WriteFile(filepath.Join(dir, name), []byte(screen), 0o644)
	}
	t.Logf("%s:\n%s", name, screen)
}

// TestApprovalPromptInTerminal: in a real terminal, the approval question
// for a bash command that carries escape sequences shows the real command,
// the escapes written out, not acted on; a call an allow rule does not
// cover says why it is asked.
func TestApprovalPromptInTerminal(t *testing.T) {
	dir := workspace(t)
	pol := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(pol, []byte(`{"rules": [{"tool": "bash", "command": "go test", "action": "allow"}]}`), 0o644)
	_, url := newFakeOpenAI(t,
		fakeReply{calls: [][2]string{{"bash", commandArgs(spoof)}}},
		fakeReply{calls: [][2]string{{"bash", `{"command": "go test -exec ./x ./..."}`}}},
		fakeReply{content: "I did not change anything."},
	)
	term := startTerminal(t, dir, url, "run", "--model", "m", "--mode", "native", "--policy", pol, "'clean up'")

	screen := term.waitFor("the question", "allow? [y]es")
	keepScreen(t, "approval-escapes.txt", screen)
	if !strings.Contains(screen, `? bash $ touch SPOOFED #\x1b[2K\x1b[1G? bash $ ls -la`) {
		t.Errorf("the question does not show the real command:\n%s", screen)
	}
	for _, line := range strings.Split(screen, "\n") {
		if strings.TrimSpace(line) == "? bash $ ls -la" {
			t.Errorf("the escapes redrew the question:\n%s", screen)
		}
	}
	term.keys("n", "Enter")

	screen = term.waitFor("the second question", "go test -exec ./x ./...", "allow? [y]es")
	keepScreen(t, "approval-why.txt", screen)
	if !strings.Contains(screen, `asked: rule 1 (allow bash "go test") does not cover it: go -exec: runs the program it names`) {
		t.Errorf("the question does not say why it is asked:\n%s", screen)
	}
	term.keys("n", "Enter")
	term.waitFor("ptk to exit", "ptk exited 0")
	if _, err := os.Stat(filepath.Join(dir, "SPOOFED")); err == nil {
		t.Error("the denied command ran")
	}
}

// TestChatShowsEscapes: ptk chat's panels show escapes a model or a tool
// writes, in the answer, in a tool's result and in the command to approve.
func TestChatShowsEscapes(t *testing.T) {
	dir := workspace(t)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("line one\x1b[2J\x1b[Hpwned \u202egnp.exe\n"), 0o644)
	_, url := newFakeOpenAI(t,
		fakeReply{calls: [][2]string{{"read_file", `{"path": "notes.txt"}`}}},
		fakeReply{content: "The file clears the screen: \x1b[2J\x1b[31mred\x1b[0m, and hides \u202etxt.exe"},
		fakeReply{calls: [][2]string{{"bash", commandArgs(spoof)}}},
		fakeReply{content: "Nothing ran."},
	)
	term := startTerminal(t, dir, url, "chat", "--model", "m", "--mode", "native")
	term.waitFor("the chat", "/help")
	term.keys("what is in notes.txt?", "Enter")
	term.keys("C-o") // whole tool results
	screen := term.waitFor("the answer", "The file clears the screen:", "red")
	keepScreen(t, "chat-escapes.txt", screen)
	for _, want := range []string{`line one\x1b[2J\x1b[Hpwned \u202egnp.exe`, `The file clears the screen: \x1b[2J\x1b[31mred\x1b[0m, and hides \u202etxt.exe`} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen does not show %q:\n%s", want, screen)
		}
	}
	term.keys("clean up", "Enter")
	screen = term.waitFor("the question", "allow? [y]es")
	keepScreen(t, "chat-approval.txt", screen)
	if !strings.Contains(screen, `touch SPOOFED #\x1b[2K\x1b[1G? bash $ ls -la`) {
		t.Errorf("the question does not show the real command:\n%s", screen)
	}
	term.keys("n")
	term.waitFor("the answer", "Nothing ran.")
	if _, err := os.Stat(filepath.Join(dir, "SPOOFED")); err == nil {
		t.Error("the denied command ran")
	}
	term.keys("C-c")
	term.keys("C-c")
	term.waitFor("ptk to exit", "ptk exited 0")
}
