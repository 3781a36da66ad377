package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needBwrap skips a test without bubblewrap, or fails it when CI says
// bubblewrap is installed (PTK_TEST_BWRAP_REQUIRED=1).
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("PTK_TEST_BWRAP_REQUIRED") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// outsideDir is a directory outside the workspace that is no tmpfs in the
// sandbox, so that a write that does not reach it was stopped by the
// sandbox and not hidden by a private /tmp.
func outsideDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/var/tmp", "ptk-outside-")
	if err != nil {
		dir = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	return dir
}

// TestRunSandboxAsRoot: ptk run --sandbox --yes, as root here, with a model
// whose bash call tries to remount the system writable, mount over /usr,
// write outside the workspace and read a secret in the home directory:
// every attempt fails, and the workspace is still writable.
func TestRunSandboxAsRoot(t *testing.T) {
	needBwrap(t)
	outside := outsideDir(t)
	home := filepath.Join(outside, "home")
	os.Mkdir(home, 0o755)
	os.WriteFile(filepath.Join(home, "secret"), []byte("the planted secret"), 0o600)
	t.Setenv("HOME", home)
	escaped := filepath.Join(outside, "escaped")
	attack := `id -u
mount -o remount,rw / 2>/dev/null; echo "remount / $?"
mount -o remount,rw /usr 2>/dev/null; echo "remount /usr $?"
mount -t tmpfs none /usr 2>/dev/null; echo "tmpfs /usr $?"
echo pwned > ` + escaped + ` 2>/dev/null; echo "outside $?"
touch /usr/ptk-pwned 2>/dev/null; echo "usr $?"
cat "$HOME/secret" 2>/dev/null; echo "secret $?"
echo mine > made-here && echo "workspace $?"`
	args, _ := json.Marshal(map[string]string{"command": attack})
	f, url := newFakeOpenAI(t, fakeReply{calls: [][2]string{{"bash", string(args)}}}, fakeReply{content: "done"})
	ws := workspace(t)
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "native", "--workspace", ws,
		"--sandbox", "--yes", "--tools", "bash", "try")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	msgs, _ := json.Marshal(f.request(1)["messages"])
	var result string
	var all []map[string]any
	json.Unmarshal(msgs, &all)
	for _, m := range all {
		if m["role"] == "tool" {
			result, _ = m["content"].(string)
		}
	}
	t.Logf("as uid %d, the bash call said:\n%s", os.Geteuid(), result)
	for _, want := range []string{"65534\n", "remount / 32", "remount /usr 32", "tmpfs /usr 32", "outside 1", "usr 1", "secret 1", "workspace 0"} {
		if !strings.Contains(result, want) {
			t.Errorf("%q not in the result", want)
		}
	}
	if _, err := os.Stat(escaped); err == nil {
		t.Error("the command wrote outside the workspace")
	}
	if _, err := os.Stat("/usr/ptk-pwned"); err == nil {
		os.Remove("/usr/ptk-pwned")
		t.Error("the command wrote /usr")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "made-here")); string(b) != "mine\n" {
		t.Errorf("the workspace holds %q", b)
	}
	if strings.Contains(result, "the planted secret") {
		t.Error("the secret in the home directory reached the model")
	}
}
