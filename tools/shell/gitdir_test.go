package shell

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The attack: a sandboxed command cannot run anything outside, so it
// plants what the user's own git will run later, unconfined: a hook in
// .git/hooks, core.fsmonitor or an alias in .git/config (run by the next
// git status, often by the shell's prompt), or a .git file pointing at a
// repository it made. The workspace's repository is read-only inside the
// sandbox; the rest of the workspace stays writable.
func TestSandboxGitDirReadOnly(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	sh, ws, _ := sandboxed(t)
	// Made after the shell: each command looks again.
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	config := filepath.Join(ws, ".git", "config")
	before, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{
		"mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
		"git config core.fsmonitor 'touch /tmp/pwned'",
		"printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
		"rm -rf .git",
		"mv .git .git-old && mkdir .git",
	} {
		run(t, sh, command(c))
	}
	after, err := os.ReadFile(config)
	if err != nil || string(after) != string(before) {
		t.Errorf(".git/config changed by a sandboxed command (%v):\n%s", err, after)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a sandboxed command planted a hook")
	}
	if _, err := os.Stat(filepath.Join(ws, ".git-old")); err == nil {
		t.Error("a sandboxed command moved .git away")
	}
	// The repository is still readable, and the workspace writable.
	if res := run(t, sh, command("git rev-parse --git-dir && echo ok > file && cat file")); !strings.Contains(res.Content, ".git\nok\nexit code 0") {
		t.Errorf("reading the repository or writing the workspace: %q", res.Content)
	}

	t.Run("gitfile", func(t *testing.T) {
		t.Parallel()
		sh, ws, _ := sandboxed(t)
		gitfile := filepath.Join(ws, ".git")
		if err := os.WriteFile(gitfile, []byte("gitdir: /elsewhere/.git/worktrees/ws\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, sh, command("mkdir evil && git init -q evil && echo 'gitdir: evil/.git' > .git"))
		if b, _ := os.ReadFile(gitfile); string(b) != "gitdir: /elsewhere/.git/worktrees/ws\n" {
			t.Errorf("a sandboxed command repointed the .git file: %q", b)
		}
	})
}

// The attack: XDG_CONFIG_HOME inside the project, and a sandboxed
// command that writes the mcp.json the next ptk starts its servers from,
// outside any sandbox. A sandboxed shell refuses such a workspace.
func TestSandboxRefusesProtectedInWorkspace(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	cfg := filepath.Join(ws, ".cfg", "ptk") // not made yet
	_, err := New(ws, WithSandbox(), WithProtected(cfg))
	if errors.Is(err, ErrNoBwrap) {
		t.Skip(err)
	}
	if err == nil || !strings.Contains(err.Error(), "of ptk's own") {
		t.Fatalf("a sandboxed shell on a workspace that holds %s: %v", cfg, err)
	}
	// A protected folder elsewhere is no reason to refuse.
	if _, err := New(ws, WithSandbox(), WithProtected(filepath.Join(t.TempDir(), "ptk"))); err != nil {
		t.Skipf("the sandbox does not work here: %v", err)
	}
}
