package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
)

func newShell(t *testing.T, opts ...Option) (*Shell, string) {
	t.Helper()
	ws := t.TempDir()
	sh, err := New(ws, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return sh, ws
}

// run calls the tool with args and fails the test on a Go error.
func run(t *testing.T, sh *Shell, args string) ptk.Result {
	t.Helper()
	res, err := sh.Tool().Run(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return res
}

func command(c string) string {
	b, _ := json.Marshal(map[string]string{"command": c})
	return string(b)
}

func TestRun(t *testing.T) {
	t.Parallel()
	sh, ws := newShell(t)
	for _, tt := range []struct{ command, want string }{
		{"echo hello", "hello\nexit code 0"},
		{"exit 7", "(no output)\nexit code 7"},
		{"echo out; false", "out\nexit code 1"},
		{"printf abc", "abc\nexit code 0"},
		{"echo 1; echo 2 >&2; echo 3; echo 4 >&2", "1\n2\n3\n4\nexit code 0"},
		{"pwd; pwd -P", ws + "\n" + ws + "\nexit code 0"},
		{"echo $PTK", "1\nexit code 0"},
		{"cat", "(no output)\nexit code 0"},
		{"read line; echo read=$?", "read=1\nexit code 0"},
		{`printf 'caf\xe9\n'`, "caf\uFFFD\nexit code 0"},
		{"kill -9 $$", "(no output)\nexit code 137 (killed by signal 9: killed)"},
		{"cd /; echo gone", "gone\nexit code 0"},
	} {
		res := run(t, sh, command(tt.command))
		if res.Content != tt.want || res.IsError {
			t.Errorf("%s:\ngot  %q (error %v)\nwant %q", tt.command, res.Content, res.IsError, tt.want)
		}
	}
	// Each call starts in the workspace again.
	if res := run(t, sh, command("pwd")); res.Content != ws+"\nexit code 0" {
		t.Errorf("pwd after cd: %q", res.Content)
	}
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	sh, _ := newShell(t)
	for _, args := range []string{
		``, `null`, `{}`, `[]`, `"echo hi"`, `{`,
		`{"command": ""}`,
		`{"command": "  \n"}`,
		`{"command": 5}`,
		`{"command": ["echo", "hi"]}`,
		`{"command": "echo hi", "timeout": "30"}`,
		`{"command": "echo hi", "timeout": 0}`,
		`{"command": "echo hi", "timeout": -1}`,
		`{"command": "echo hi", "timeout": true}`,
	} {
		res := run(t, sh, args)
		if !res.IsError || res.Content == "" {
			t.Errorf("%s: got %q (error %v), want an error result", args, res.Content, res.IsError)
		}
	}
}

func TestTimeoutParameter(t *testing.T) {
	t.Parallel()
	// The commands that must time out get short limits; the ones that must
	// finish get limits a loaded machine cannot miss (a CI run once timed
	// out "echo fast" at 300ms with every core busy).
	short, _ := newShell(t, WithDefaultTimeout(300*time.Millisecond), WithMaxTimeout(500*time.Millisecond))
	long, _ := newShell(t, WithDefaultTimeout(20*time.Second), WithMaxTimeout(30*time.Second))
	for _, tt := range []struct {
		sh         *Shell
		args, want string
	}{
		{long, `{"command": "echo fast"}`, "fast\nexit code 0"},
		{short, `{"command": "echo start; sleep 5"}`, "start\ntimed out after 300ms; the process group was killed"},
		{short, `{"command": "sleep 5", "timeout": 0.2}`, "(no output)\ntimed out after 200ms; the process group was killed"},
		{short, `{"command": "sleep 5", "timeout": 900}`, "(no output)\n(timeout 900s is above the maximum; it was lowered to 0.5s)\n" +
			"timed out after 500ms; the process group was killed"},
		{long, `{"command": "echo ok", "timeout": 900}`, "ok\n(timeout 900s is above the maximum; it was lowered to 30s)\nexit code 0"},
	} {
		start := time.Now()
		res := run(t, tt.sh, tt.args)
		if res.Content != tt.want || res.IsError != strings.Contains(tt.want, "timed out") {
			t.Errorf("%s:\ngot  %q (error %v)\nwant %q", tt.args, res.Content, res.IsError, tt.want)
		}
		if strings.Contains(tt.want, "timed out") {
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s took %v", tt.args, d)
			}
		}
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, tt := range []struct {
		opts        []Option
		timeout     time.Duration
		description string
	}{
		{nil, 2 * time.Minute, "(default 120s, at most 600s)"},
		{[]Option{WithMaxTimeout(30 * time.Second)}, 30 * time.Second, "(default 30s, at most 30s)"},
		{[]Option{WithDefaultTimeout(time.Second), WithMaxTimeout(time.Hour)}, time.Second, "(default 1s, at most 3600s)"},
	} {
		sh, err := New(ws, tt.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if sh.cfg.timeout != tt.timeout {
			t.Errorf("timeout %v, want %v", sh.cfg.timeout, tt.timeout)
		}
		if d := sh.Tool().Info().Description; !strings.Contains(d, tt.description) {
			t.Errorf("description does not say %q:\n%s", tt.description, d)
		}
	}
}

func TestInfo(t *testing.T) {
	t.Parallel()
	sh, ws := newShell(t)
	info := sh.Tool().Info()
	if info.Name != "bash" || info.ReadOnly || info.Cacheable {
		t.Errorf("info %+v", info)
	}
	for _, s := range []string{ws, "stdout and stderr", "exit code N", "default 120s, at most 600s", "50 KB", "cut in the middle", "stdin is empty"} {
		if !strings.Contains(info.Description, s) {
			t.Errorf("description does not say %q:\n%s", s, info.Description)
		}
	}
	if strings.Contains(info.Description, "sandbox") {
		t.Errorf("description speaks of a sandbox:\n%s", info.Description)
	}
	var schema struct {
		Properties map[string]struct{ Type string }
		Required   []string
	}
	if err := json.Unmarshal(info.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Properties["command"].Type != "string" || schema.Properties["timeout"].Type != "number" ||
		len(schema.Required) != 1 || schema.Required[0] != "command" {
		t.Errorf("parameters %s", info.Parameters)
	}
}

// The tool says which command a call runs, for approval policies, through
// any middleware.
func TestSubject(t *testing.T) {
	t.Parallel()
	sh, _ := newShell(t)
	bash := tool.Wrap(sh.Tool(), tool.Timeout(time.Minute), tool.Limit(1000, 10))
	for args, want := range map[string]string{
		`{"command": "go test ./..."}`:    "go test ./...",
		`{"command": "ls", "timeout": 3}`: "ls",
		`{"command": 5}`:                  "",
		`{}`:                              "",
	} {
		if got := tool.SubjectOf(bash, json.RawMessage(args)); got != (tool.Subject{Command: want}) {
			t.Errorf("%s: subject %+v, want command %q", args, got, want)
		}
	}
}

func TestNewFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ws   string
		opts []Option
	}{
		{file, nil},
		{filepath.Join(dir, "missing"), nil},
		{dir, []Option{WithDefaultTimeout(0)}},
		{dir, []Option{WithMaxTimeout(-time.Second)}},
		{dir, []Option{WithMaxOutput(0)}},
	} {
		if _, err := New(tt.ws, tt.opts...); err == nil {
			t.Errorf("New(%q) with %d options succeeded", tt.ws, len(tt.opts))
		}
	}
}

// TestNoBash and TestNoBwrap change PATH, so they do not run in parallel.
func TestNoBash(t *testing.T) {
	sh, _ := newShell(t)
	t.Setenv("PATH", t.TempDir())
	res := run(t, sh, command("echo hi"))
	if !res.IsError || !strings.Contains(res.Content, "could not start bash") {
		t.Errorf("got %q (error %v)", res.Content, res.IsError)
	}
}

func TestNoBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := New(t.TempDir(), WithSandbox())
	if !errors.Is(err, ErrNoBwrap) {
		t.Errorf("got %v, want ErrNoBwrap", err)
	}
}

// gone reports whether process pid no longer runs: it does not exist or is a
// zombie waiting for its new parent to reap it.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	return strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z")
}

// waitGone waits up to 3s for the process whose pid is in file to be gone.
func waitGone(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); !gone(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still runs", pid)
		}
	}
}

// stubborn starts a background process that ignores SIGTERM, writes its pid
// to the file pid, and waits for it.
const stubborn = `trap "" TERM; sleep 300 & echo $! > pid; echo started; wait`

func TestTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	sh, ws := newShell(t)
	start := time.Now()
	res := run(t, sh, `{"command": `+strconv.Quote(stubborn)+`, "timeout": 1}`)
	if d := time.Since(start); d > 1*time.Second+termGrace+time.Second {
		t.Errorf("returned after %v", d)
	}
	if want := "started\ntimed out after 1s; the process group was killed"; res.Content != want || !res.IsError {
		t.Errorf("got %q (error %v), want %q", res.Content, res.IsError, want)
	}
	waitGone(t, filepath.Join(ws, "pid"))
}

func TestBackgroundKilled(t *testing.T) {
	t.Parallel()
	sh, ws := newShell(t)
	start := time.Now()
	// The background process holds the output pipe open.
	res := run(t, sh, command("sleep 300 & echo $! > pid; echo done"))
	if d := time.Since(start); d > time.Second {
		t.Errorf("returned after %v", d)
	}
	if res.Content != "done\nexit code 0" {
		t.Errorf("got %q", res.Content)
	}
	waitGone(t, filepath.Join(ws, "pid"))
}

// TestEscaped checks that a process that leaves the group and holds the
// output pipe neither holds the call nor outlives it.
func TestEscaped(t *testing.T) {
	t.Parallel()
	sh, ws := newShell(t)
	start := time.Now()
	res := run(t, sh, command("setsid sleep 300 & echo $! > pid; echo done"))
	if d := time.Since(start); d > drainDelay+time.Second {
		t.Errorf("returned after %v", d)
	}
	if res.Content != "done\nexit code 0" {
		t.Errorf("got %q", res.Content)
	}
	if tracked {
		waitGone(t, filepath.Join(ws, "pid"))
		return
	}
	b, err := os.ReadFile(filepath.Join(ws, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
		syscall.Kill(pid, syscall.SIGKILL) // it escaped: only a sandbox ends it
	}
}

// BenchmarkRun measures a call that runs "true": starting bash (under the
// reaper, on Linux) and making sure nothing is left.
func BenchmarkRun(b *testing.B) {
	sh, err := New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(command("true"))
	for b.Loop() {
		if res, err := sh.Tool().Run(context.Background(), args); err != nil || res.IsError {
			b.Fatal(res.Content, err)
		}
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	sh, ws := newShell(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := sh.Tool().Run(ctx, json.RawMessage(command(stubborn)))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 300*time.Millisecond+time.Second {
		t.Errorf("returned after %v", d)
	}
	waitGone(t, filepath.Join(ws, "pid"))

	// A context already done runs nothing.
	_, err = sh.Tool().Run(ctx, json.RawMessage(command("touch ran")))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("the command ran with a canceled context")
	}
}

// note is the line headtail puts where it cut the output.
var note = regexp.MustCompile(`\[\.\.\. ([0-9,]+) bytes \(([0-9,]+) lines\) cut from the middle of the output \.\.\.\]\n`)

func TestOutputCap(t *testing.T) {
	t.Parallel()
	sh, _ := newShell(t)
	res := run(t, sh, command("seq 1 2000000"))
	got := res.Content
	if !strings.HasPrefix(got, "1\n2\n3\n") || !strings.HasSuffix(got, "\n1999999\n2000000\nexit code 0") {
		t.Errorf("head %q, tail %q", got[:20], got[len(got)-40:])
	}
	m := note.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no note in the output")
	}
	if len(got) > DefaultMaxOutput+200 {
		t.Errorf("result of %d bytes", len(got))
	}
	// The lines shown (less the note) and the lines cut are all the lines.
	cut, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
	if shown := strings.Count(got, "\n") - 1; shown+cut != 2000000 {
		t.Errorf("%d lines shown and %d cut, want 2000000 in all", shown, cut)
	}
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	sh, _ := newShell(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			want := fmt.Sprintf("%d\nexit code 0", i)
			res, err := sh.Tool().Run(context.Background(), json.RawMessage(command(fmt.Sprintf("sleep 0.1; echo %d", i))))
			if err != nil || res.Content != want {
				t.Errorf("got %q, %v; want %q", res.Content, err, want)
			}
		})
	}
	wg.Wait()
}
