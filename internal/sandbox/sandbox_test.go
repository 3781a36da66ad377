//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// built is the attacker program, built once (static and without -race, so
// that the memory limits are its own) into a directory the host's nobody
// can reach.
var built struct {
	once sync.Once
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.bin != "" {
		os.RemoveAll(filepath.Dir(filepath.Dir(built.bin)))
	}
	os.Exit(code)
}

// attacker returns the attacker program (testdata/attacker), which tries
// the attack its first argument names inside the sandbox, and a directory
// outside every sandbox that the test plants things in: below /var/tmp,
// which is no tmpfs in the sandbox, so that what the sandbox does not see
// it does not see because it is not bound.
func attacker(t *testing.T) (bin, outside string) {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp(varTmp(), "ptk-sandbox-attacker-")
		if err != nil {
			built.err = err
			return
		}
		os.Chmod(dir, 0o755)
		os.Mkdir(filepath.Join(dir, "bin"), 0o755)
		bin := filepath.Join(dir, "bin", "attacker")
		cmd := exec.Command("go", "build", "-o", bin, "./testdata/attacker")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("building the attacker: %v\n%s", err, out)
			return
		}
		built.bin = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	dir, err := os.MkdirTemp(varTmp(), "ptk-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	return built.bin, dir
}

func varTmp() string {
	if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() {
		return "/var/tmp"
	}
	return ""
}

// newSandbox returns a sandbox with the system and the attacker bound, or
// skips the test when bubblewrap is not installed (it fails instead with
// PTK_TEST_BWRAP_REQUIRED=1, as in CI).
func newSandbox(t *testing.T, bin string, c Config) *Sandbox {
	t.Helper()
	c.System = true
	c.Binds = append(c.Binds, Bind{Path: filepath.Dir(bin)})
	c.Tmpfs = append(c.Tmpfs, "/tmp")
	c.Env = append(c.Env, "PATH=/usr/bin:/bin")
	s, err := New(c)
	if errors.Is(err, ErrNoBwrap) {
		if os.Getenv("PTK_TEST_BWRAP_REQUIRED") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Probe(context.Background(), bin, "whoami"); err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t *testing.T, s *Sandbox, bin, name string, args ...string) string {
	t.Helper()
	r := s.Run(context.Background(), time.Minute, 64<<10, nil, append([]string{bin, name}, args...)...)
	if r.Err != nil {
		t.Logf("%s: %v", name, r.Err)
	}
	return r.Output
}

func TestRootInsideIsNobodyWithoutCapabilities(t *testing.T) {
	t.Parallel()
	bin, _ := attacker(t)
	s := newSandbox(t, bin, Config{})
	out := run(t, s, bin, "whoami")
	if !strings.Contains(out, "Uid: 65534 65534 65534 65534") || !strings.Contains(out, "CapEff: 0000000000000000") {
		t.Errorf("inside the sandbox:\n%s", out)
	}
}

// TestCannotRemount: as root outside (as on CI and this project's
// machines), the program cannot remount / or a bound directory writable,
// mount over it, or bind / anew; the write that follows fails.
func TestCannotRemount(t *testing.T) {
	t.Parallel()
	bin, outside := attacker(t)
	s := newSandbox(t, bin, Config{Binds: []Bind{{Path: outside}}})
	out := run(t, s, bin, "remount", outside)
	if strings.Count(out, "operation not permitted") != 5 || !strings.Contains(out, "write after remount: open "+outside+"/remounted: read-only file system") {
		t.Errorf("remounting:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "remounted")); err == nil {
		t.Error("a file was written outside")
	}
}

func TestNoUserNamespaceInside(t *testing.T) {
	t.Parallel()
	bin, _ := attacker(t)
	s := newSandbox(t, bin, Config{})
	if !slicesContains(s.args, "--disable-userns") {
		t.Skip("this bubblewrap has no --disable-userns (0.8.0 on)")
	}
	out := run(t, s, bin, "userns")
	if strings.Contains(out, "unshare user: ok") || strings.Contains(out, "unshare mount: ok") {
		t.Errorf("a namespace was made inside:\n%s", out)
	}
}

func slicesContains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// TestSeesOnlyWhatIsBound: a secret in the home directory, in a directory
// beside the bound one, or in /etc is not there, and the home directory is
// not listed.
func TestSeesOnlyWhatIsBound(t *testing.T) {
	t.Parallel()
	bin, outside := attacker(t)
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("the planted secret"), 0o644)
	s := newSandbox(t, bin, Config{})
	home, _ := os.UserHomeDir()
	for _, path := range []string{secret, "/etc/shadow", filepath.Join(home, ".bashrc"), "/root/.profile"} {
		if out := run(t, s, bin, "read", path); !strings.Contains(out, "read: open") {
			t.Errorf("read %s: %s", path, out)
		}
	}
	if out := run(t, s, bin, "list", home); !strings.Contains(out, "no such file or directory") && home != "/" {
		t.Errorf("list %s: %s", home, out)
	}
	if out := run(t, s, bin, "read", "/etc/passwd"); !strings.Contains(out, "root:") {
		t.Errorf("the system's world-readable /etc/passwd is not there: %s", out)
	}
}

// TestDropRoot: a root-only file bound by mistake is read by root through
// the user namespace, but not by the host's nobody.
func TestDropRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("DropRoot changes nothing when not run as root")
	}
	bin, outside := attacker(t)
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("root's secret"), 0o600)
	mapped := newSandbox(t, bin, Config{Binds: []Bind{{Path: outside}}})
	if out := run(t, mapped, bin, "read", secret); !strings.Contains(out, "root's secret") {
		t.Errorf("without DropRoot the mapped root reads its own file: %s", out)
	}
	nobody := newSandbox(t, bin, Config{Binds: []Bind{{Path: outside}}, DropRoot: true})
	if !nobody.AsNobody() {
		t.Fatal("not as nobody")
	}
	if out := run(t, nobody, bin, "read", secret); !strings.Contains(out, "permission denied") {
		t.Errorf("as the host's nobody: %s", out)
	}
}

func TestWritesStayInWritableBinds(t *testing.T) {
	t.Parallel()
	bin, outside := attacker(t)
	ro := filepath.Join(outside, "ro")
	rw := filepath.Join(outside, "rw")
	os.Mkdir(ro, 0o755)
	os.Mkdir(rw, 0o777)
	os.Chmod(rw, 0o777)
	s := newSandbox(t, bin, Config{Binds: []Bind{{Path: ro}, {Path: rw, Write: true}}})
	for _, target := range []string{filepath.Join(ro, "x"), filepath.Join(outside, "x"), "/usr/x", "/etc/x", filepath.Join(bin, "..", "x"), "/x"} {
		if out := run(t, s, bin, "write", target); !strings.Contains(out, "read-only file system") && !strings.Contains(out, "no such file") {
			t.Errorf("write %s: %s", target, out)
		}
		if _, err := os.Stat(target); err == nil {
			t.Errorf("the sandbox wrote %s", target)
		}
	}
	if out := run(t, s, bin, "write", filepath.Join(rw, "x")); !strings.Contains(out, "write: ok") {
		t.Errorf("the writable bind: %s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(rw, "x")); string(b) != "written from the sandbox" {
		t.Errorf("the writable bind holds %q", b)
	}
}

// TestNoHostSocket: a Unix socket the host listens on is not reachable
// (bubblewrap's --ro-bind / left every socket on the file system open).
func TestNoHostSocket(t *testing.T) {
	t.Parallel()
	bin, outside := attacker(t)
	sock := filepath.Join(outside, "s")
	ln, err := net.Listen("unix", sock)
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
	if c, err := net.Dial("unix", sock); err != nil {
		t.Fatalf("outside the sandbox: %v", err)
	} else {
		c.Close()
	}
	s := newSandbox(t, bin, Config{})
	if out := run(t, s, bin, "dial", sock); !strings.Contains(out, "no such file or directory") {
		t.Errorf("dial from the sandbox: %s", out)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	bin, outside := attacker(t)
	rw := filepath.Join(outside, "rw")
	os.Mkdir(rw, 0o777)
	os.Chmod(rw, 0o777)
	s := newSandbox(t, bin, Config{Binds: []Bind{{Path: rw, Write: true}}, DropRoot: true,
		Limits: Limits{Memory: 256 << 20, FileSize: 1 << 20, Processes: 32}})
	if out := run(t, s, bin, "alloc", strconv.Itoa(16<<20)); !strings.Contains(out, "alloc: 16777216 bytes") {
		t.Errorf("16 MiB under a limit of 256 MiB: %s", out)
	}
	// The Go runtime ends the program when the kernel refuses memory (with
	// "out of memory", or a fault in the runtime's own allocation).
	r := s.Run(context.Background(), time.Minute, 4096, nil, bin, "alloc", strconv.Itoa(1<<30))
	if r.Err == nil || strings.Contains(r.Output, "alloc: ") {
		t.Errorf("1 GiB under a limit of 256 MiB: %v: %s", r.Err, firstLines(r.Output))
	}
	if out := run(t, s, bin, "fsize", filepath.Join(rw, "small"), strconv.Itoa(512<<10)); !strings.Contains(out, "fsize: ok") {
		t.Errorf("a file of 512 KiB under a limit of 1 MiB: %s", out)
	}
	if out := run(t, s, bin, "fsize", filepath.Join(rw, "big"), strconv.Itoa(4<<20)); !strings.Contains(out, "file too large") {
		t.Errorf("a file of 4 MiB under a limit of 1 MiB: %s", out)
	}
	if fi, err := os.Stat(filepath.Join(rw, "big")); err != nil || fi.Size() > 1<<20 {
		t.Errorf("the big file: %v", err)
	}
	if s.User() == 0 {
		t.Log("the process limit does not hold for root: not tested")
		return
	}
	out := run(t, s, bin, "fork", "200")
	t.Log(out)
	var started int
	fmt.Sscanf(out, "fork: started %d", &started)
	if started == 0 || started >= 200 {
		t.Errorf("200 processes under a limit of 32 more: %s", out)
	}
}

// TestOutputBounded: a program that writes 256 MiB costs the caller its
// bound, not what it wrote.
func TestOutputBounded(t *testing.T) {
	bin, _ := attacker(t)
	s := newSandbox(t, bin, Config{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	r := s.Run(context.Background(), 2*time.Minute, 64<<10, nil, bin, "flood", strconv.Itoa(256<<20))
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if r.Err != nil || r.Total != 256<<20 || len(r.Output) > 64<<10+200 || !strings.Contains(r.Output, "cut from the middle of the output") {
		t.Fatalf("err %v, total %d, kept %d", r.Err, r.Total, len(r.Output))
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("256 MiB of output read in %v; %.1f MiB allocated meanwhile", elapsed, float64(alloc)/(1<<20))
	if alloc > 64<<20 {
		t.Errorf("%d bytes allocated to read 256 MiB of output", alloc)
	}
}

func TestTimeoutKillsEverything(t *testing.T) {
	t.Parallel()
	bin, _ := attacker(t)
	s := newSandbox(t, bin, Config{})
	start := time.Now()
	r := s.Run(context.Background(), 500*time.Millisecond, 4096, nil, bin, "sleep")
	if !r.TimedOut || time.Since(start) > 10*time.Second {
		t.Fatalf("timed out %v after %v: %v", r.TimedOut, time.Since(start), r.Err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := processesRunning(bin + "\x00sleep\x00"); n > 0 {
		t.Errorf("%d processes of the sandbox still run", n)
	}
}

// processesRunning counts the live processes whose command line is cmdline.
func processesRunning(cmdline string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	n := 0
	for _, d := range dirs {
		if b, err := os.ReadFile(filepath.Join(d, "cmdline")); err == nil && string(b) == cmdline {
			if stat, _ := os.ReadFile(filepath.Join(d, "stat")); !strings.Contains(string(stat), ") Z ") {
				n++
			}
		}
	}
	return n
}

// TestUnconfined: --no-sandbox's runs have the limits but not the walls.
func TestUnconfined(t *testing.T) {
	t.Parallel()
	bin, outside := attacker(t)
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("the planted secret"), 0o644)
	s := Unconfined(Config{Limits: Limits{Memory: 256 << 20}, Dir: outside})
	if s.Confined() {
		t.Fatal("confined")
	}
	r := s.Run(context.Background(), time.Minute, 4096, nil, bin, "read", secret)
	if !strings.Contains(r.Output, "the planted secret") {
		t.Errorf("unconfined, the secret is readable (and the docs say so): %s", r.Output)
	}
	r = s.Run(context.Background(), time.Minute, 4096, nil, bin, "alloc", strconv.Itoa(1<<30))
	if r.Err == nil || strings.Contains(r.Output, "alloc: ") {
		t.Errorf("unconfined, the memory limit still holds: %s", firstLines(r.Output))
	}
}

func TestBadConfig(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip(err)
	}
	for _, c := range []Config{{Binds: []Bind{{Path: "/"}}}, {Binds: []Bind{{Path: "rel"}}}, {Tmpfs: []string{"/"}}} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

func TestHiddenEtc(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "open"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "shadow"), nil, 0o640)
	os.Mkdir(filepath.Join(dir, "private"), 0o700)
	os.WriteFile(filepath.Join(dir, "private", "key"), nil, 0o644)
	os.Mkdir(filepath.Join(dir, "public"), 0o755)
	os.WriteFile(filepath.Join(dir, "public", "key"), nil, 0o600)
	got := strings.Join(hidden(dir), " ")
	want := "--size 4096 --tmpfs " + dir + "/private --ro-bind /dev/null " + dir + "/public/key --ro-bind /dev/null " + dir + "/shadow"
	if got != want {
		t.Errorf("hidden:\n got %s\nwant %s", got, want)
	}
}

func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], "\n")
}
