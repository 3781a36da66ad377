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
		if os.Getenv("PTK_TEST_BWRAP_REQUIRED") == "1" {
			t.Fatal(err)
		}
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

// TestSandboxAsRoot: run as root (as on CI and this project's machines), a
// sandboxed command is nobody without capabilities: it cannot remount the
// system or its view of / writable, mount over it, or make a user
// namespace in which it would be root again; so it writes nothing outside.
func TestSandboxAsRoot(t *testing.T) {
	t.Parallel()
	sh, _, _ := sandboxed(t)
	res := run(t, sh, command(`id -u; grep CapEff /proc/self/status
mount -o remount,rw / 2>/dev/null; echo "remount / $?"
mount -o remount,rw /usr 2>/dev/null; echo "remount /usr $?"
mount -t tmpfs none /usr 2>/dev/null; echo "tmpfs /usr $?"
unshare -Urm true 2>/dev/null; echo "unshare $?"
touch /usr/ptk-remounted 2>/dev/null; echo "touch $?"`))
	t.Logf("as uid %d: %s", os.Geteuid(), res.Content)
	for _, want := range []string{"65534\n", "CapEff:\t0000000000000000", "touch 1"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("%q missing in %q", want, res.Content)
		}
	}
	for _, bad := range []string{"remount / 0", "remount /usr 0", "tmpfs /usr 0", "unshare 0", "touch 0"} {
		if strings.Contains(res.Content, bad) {
			t.Errorf("%q in %q", bad, res.Content)
		}
	}
	if _, err := os.Stat("/usr/ptk-remounted"); err == nil {
		os.Remove("/usr/ptk-remounted")
		t.Error("the sandbox wrote /usr")
	}
}

// TestSandboxHidesHome: the home directory is an empty one, and nothing of
// the host outside the system and the workspace is there: no /run,
// /var/run or /var/lib (where the host's sockets and databases are), no
// /root, no readable /etc/shadow.
func TestSandboxHidesHome(t *testing.T) {
	home, err := os.MkdirTemp(varTmp(), "ptk-home-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	os.WriteFile(filepath.Join(home, "secret"), []byte("the planted secret"), 0o600)
	t.Setenv("HOME", home)
	sh, _, _ := sandboxed(t)
	res := run(t, sh, command(`cat "$HOME/secret" 2>&1; ls -A "$HOME" | wc -l; ls /run /var/run /var/lib /root 2>&1 | grep -c "No such file"; cat /etc/shadow 2>&1 | head -c 60; echo; echo x > "$HOME/new" && cat "$HOME/new"`))
	if strings.Contains(res.Content, "the planted secret") || !strings.Contains(res.Content, "No such file or directory\n0\n4\n") ||
		strings.Contains(res.Content, "root:") || !strings.Contains(res.Content, "\nx\n") {
		t.Errorf("got %q", res.Content)
	}
	if _, err := os.Stat(filepath.Join(home, "new")); err == nil {
		t.Error("a file written in the sandbox's home reached the real one")
	}
	// The workspace may not be the home directory, or hold it.
	if _, err := New(home, WithSandbox()); err == nil || !strings.Contains(err.Error(), "holds the home directory") {
		t.Errorf("the home directory as the workspace: %v", err)
	}
	if _, err := New(filepath.Dir(home), WithSandbox()); err == nil || !strings.Contains(err.Error(), "holds the home directory") {
		t.Errorf("the home directory's parent as the workspace: %v", err)
	}
}

// TestSandboxNoHostSocket: a Unix socket the host listens on, outside the
// workspace, is not there (with / bound read-only it was: connecting needs
// no write access to the file system).
func TestSandboxNoHostSocket(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp(varTmp(), "ptk-sock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sh, _, _ := sandboxed(t)
	res := run(t, sh, command("test -S "+sock+" && echo reachable || echo absent"))
	if res.Content != "absent\nexit code 0" {
		t.Errorf("got %q", res.Content)
	}
}

// varTmp is a directory outside the sandbox that is not a tmpfs inside it.
func varTmp() string {
	if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() {
		return "/var/tmp"
	}
	return ""
}
