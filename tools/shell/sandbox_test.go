package shell

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sandboxed returns a sandboxed Shell on a workspace inside the directory
// outside, or skips the test when bubblewrap cannot run here.
func sandboxed(t *testing.T) (sh *Shell, ws, outside string) {
	t.Helper()
	outside = t.TempDir()
	ws = filepath.Join(outside, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	sh, err := New(ws, WithSandbox())
	if errors.Is(err, ErrNoBwrap) {
		t.Skip(err)
	}
	if err != nil {
		t.Skipf("the sandbox does not work here: %v", err)
	}
	return sh, ws, outside
}

func TestSandboxFiles(t *testing.T) {
	t.Parallel()
	sh, ws, outside := sandboxed(t)
	if d := sh.Tool().Info().Description; !strings.Contains(d, "no network") || !strings.Contains(d, "only the workspace") {
		t.Errorf("description does not speak of the sandbox:\n%s", d)
	}
	if res := run(t, sh, command("pwd; echo $PTK; echo inside > file; cat file")); res.Content != ws+"\n1\ninside\nexit code 0" {
		t.Errorf("in the workspace: %q", res.Content)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "file")); string(b) != "inside\n" {
		t.Errorf("file written in the workspace: %q, %v", b, err)
	}

	res := run(t, sh, command("LC_ALL=C touch /etc/ptk-sandbox-test"))
	if !strings.Contains(res.Content, "Read-only file system") || !strings.HasSuffix(res.Content, "exit code 1") {
		t.Errorf("touch /etc: %q", res.Content)
	}

	// Each write outside the workspace either fails or lands in the
	// sandbox's private /tmp; none reaches the host.
	private := "/tmp/ptk-sandbox-" + strconv.Itoa(os.Getpid())
	for _, target := range []string{
		"/etc/ptk-sandbox-test",
		"/usr/ptk-sandbox-test",
		"/root/ptk-sandbox-test",
		filepath.Join(outside, "escaped"),
		"../escaped-too",
		private,
	} {
		run(t, sh, command("echo x > "+target))
		p := target
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			os.Remove(p)
			t.Errorf("the sandbox wrote %s", p)
		}
	}
	// /tmp is writable within a call.
	if res := run(t, sh, command("echo tmp > /tmp/x && cat /tmp/x")); res.Content != "tmp\nexit code 0" {
		t.Errorf("/tmp: %q", res.Content)
	}
}

func TestSandboxNetwork(t *testing.T) {
	t.Parallel()
	sh, _, _ := sandboxed(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	connect := command("exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + " && echo connected")

	// Outside the sandbox the connection is made, so the test can fail.
	plain, _ := newShell(t)
	if res := run(t, plain, connect); res.Content != "connected\nexit code 0" {
		t.Fatalf("without the sandbox: %q", res.Content)
	}
	res := run(t, sh, connect)
	if strings.Contains(res.Content, "connected") || strings.HasSuffix(res.Content, "exit code 0") {
		t.Errorf("the sandbox reached the host's network: %q", res.Content)
	}
}

// TestSandboxTimeout checks that a timeout ends every process in the
// sandbox, which has its own PID namespace and session.
func TestSandboxTimeout(t *testing.T) {
	t.Parallel()
	sh, _, _ := sandboxed(t)
	start := time.Now()
	res := run(t, sh, `{"command": "trap '' TERM; setsid sleep 371.5 & sleep 371.5 & wait", "timeout": 0.5}`)
	if d := time.Since(start); d > 500*time.Millisecond+termGrace+time.Second {
		t.Errorf("returned after %v", d)
	}
	if !res.IsError || !strings.Contains(res.Content, "timed out after 500ms") {
		t.Errorf("got %q (error %v)", res.Content, res.IsError)
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		pids := sleepers(t, "371.5")
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v still run", pids)
		}
	}
}

// sleepers returns the pids of running processes "sleep arg".
func sleepers(t *testing.T, arg string) []int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, dir := range dirs {
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if !bytes.Equal(cmdline, []byte("sleep\x00"+arg+"\x00")) {
			continue
		}
		if pid, _ := strconv.Atoi(filepath.Base(dir)); !gone(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
