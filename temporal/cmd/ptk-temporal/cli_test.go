package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ptktemporal "github.com/ptkit/ptk/temporal"
	"github.com/ptkit/ptk/temporal/internal/devtest"
)

// The commands as a user runs them: ptk (the core binary, which hands
// over) and ptk-temporal, built once, against a real Temporal server and
// a worker process with an OpenAI-compatible test model.
var env struct {
	addr, ptk, temporal string
	err                 error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ptk-temporal-cli")
	if err != nil {
		panic(err)
	}
	stop := func() {}
	env.ptk, env.temporal = filepath.Join(dir, "ptk"), filepath.Join(dir, "ptk-temporal")
	for _, b := range []struct{ out, dir string }{{env.temporal, "."}, {env.ptk, "../../../cmd/ptk"}} {
		cmd := exec.Command("go", "build", "-o", b.out, ".")
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			env.err = fmt.Errorf("go build %s: %v\n%s", b.dir, err, out)
		}
	}
	if env.err == nil {
		env.addr, stop, env.err = devtest.Start("../../devserver")
	}
	code := m.Run()
	stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

func need(t *testing.T) {
	t.Helper()
	if env.err != nil {
		if os.Getenv("CI") != "" || os.Getenv("PTK_TEMPORAL_REQUIRED") != "" {
			t.Fatal(env.err)
		}
		t.Skip(env.err)
	}
}

// model is an OpenAI-compatible test model whose answer depends only on
// the conversation: asked to "write X", it calls write_file for note.txt
// with X, then answers with the tool's result; asked anything else, it
// answers with what it was asked, escape sequences and all.
func model(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		var prompt, result string
		for _, m := range req.Messages {
			switch m.Role {
			case "user":
				prompt, result = m.Content, "" // the results of this turn's calls
			case "tool":
				result = m.Content
			}
		}
		msg := map[string]any{"role": "assistant", "content": "you said: " + prompt}
		if prompt == "evil" {
			msg["content"] = "evil \x1b]0;owned\x07\x1b[2J\x1b[31mred"
		}
		finish := "stop"
		if text, ok := strings.CutPrefix(prompt, "write "); ok {
			if result == "" {
				args, _ := json.Marshal(map[string]string{"path": "note.txt", "content": text})
				msg = map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
					"id": "call_1", "type": "function", "function": map[string]any{"name": "write_file", "arguments": string(args)}}}}
				finish = "tool_calls"
			} else {
				msg["content"] = "done: " + result
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// lockedBuffer is a buffer a process writes to while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startWorker runs "ptk worker" with args on the test's task queue until
// the test ends (SIGTERM), and waits until it says it runs.
func startWorker(t *testing.T, environ []string, args ...string) *lockedBuffer {
	t.Helper()
	cmd := exec.Command(env.ptk, append([]string{"worker", "--temporal", env.addr}, args...)...)
	cmd.Env = environ
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // ptk and the ptk-temporal it runs
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGTERM to ptk alone: ptk passes it on to ptk-temporal, and
		// both stop
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ptk worker after SIGTERM: %v\n%s", err, stderr.String())
			}
		case <-time.After(20 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Errorf("ptk worker did not stop on SIGTERM:\n%s", stderr.String())
		}
		// and nothing of the group is left
		if err := syscall.Kill(-cmd.Process.Pid, 0); err == nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Errorf("ptk-temporal outlived ptk worker")
		}
	})
	end := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "ptk worker: task queue") {
		if time.Now().After(end) {
			t.Fatalf("the worker did not start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return stderr
}

// runPTK runs the ptk binary with args, and returns its exit status and
// output.
func runPTK(t *testing.T, environ []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.ptk, args...)
	cmd.Env = environ
	cmd.WaitDelay = 5 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("ptk %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// status is "ptk runs status ID --json".
func status(t *testing.T, environ []string, id string) *ptktemporal.Progress {
	t.Helper()
	code, out, errOut := runPTK(t, environ, "runs", "status", id, "--temporal", env.addr, "--json")
	if code != 0 {
		t.Fatalf("runs status: exit %d: %s", code, errOut)
	}
	var p ptktemporal.Progress
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("runs status --json: %v\n%s", err, out)
	}
	return &p
}

func waitState(t *testing.T, environ []string, id string, states ...string) *ptktemporal.Progress {
	t.Helper()
	end := time.Now().Add(60 * time.Second)
	for {
		p := status(t, environ, id)
		for _, s := range states {
			if p.State == s {
				return p
			}
		}
		if time.Now().After(end) {
			t.Fatalf("run %s is %s, not %v, after 60s: %+v", id, p.State, states, p)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCommands: the three commands of docs/temporal.md and the runs
// commands, as a user runs them. ptk hands 'worker', 'run --temporal' and
// 'runs' to ptk-temporal (found through $PTK_TEMPORAL); a detached run
// waits for approval of its write, shows it in 'runs status', and writes
// once approved; a followed run with --yes prints its answer; a canceled
// run ends canceled; the runs are in the worker's trace store; the run's
// flags that belong to the workers are a usage error; and a model that
// writes escape sequences reaches the terminal as text.
func TestCommands(t *testing.T) {
	need(t)
	ws, data := t.TempDir(), t.TempDir()
	store := filepath.Join(data, "traces.db")
	environ := append(os.Environ(), "PTK_TEMPORAL="+env.temporal, "PTK_TEMPORAL_TASK_QUEUE=cli-"+fmt.Sprint(os.Getpid()),
		"XDG_DATA_HOME="+data, "PTK_TRACE_DB=")
	startWorker(t, environ, "--model", "test-model", "--base-url", model(t), "--workspace", ws, "--tools", "read_file,write_file",
		"--trace-store", store)

	// a detached run that waits for approval
	code, out, errOut := runPTK(t, environ, "run", "--temporal", env.addr, "--detach", "--mode", "native", "write durable")
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "ptk-") {
		t.Fatalf("run --detach: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	p := waitState(t, environ, id, ptktemporal.StateWaiting)
	if len(p.Waiting) != 1 || p.Waiting[0].Tool != "write_file" {
		t.Fatalf("waiting: %+v", p.Waiting)
	}
	if _, err := os.Stat(filepath.Join(ws, "note.txt")); err == nil {
		t.Fatal("the write ran before it was approved")
	}
	code, out, _ = runPTK(t, environ, "runs", "status", id, "--temporal", env.addr)
	if code != 0 || !strings.Contains(out, "waiting for approval: "+p.Waiting[0].CallID+" write_file") {
		t.Errorf("runs status: exit %d\n%s", code, out)
	}
	if code, _, errOut := runPTK(t, environ, "runs", "approve", id, p.Waiting[0].CallID, "--temporal", env.addr); code != 0 {
		t.Fatalf("runs approve: exit %d: %s", code, errOut)
	}
	p = waitState(t, environ, id, ptktemporal.StateDone, ptktemporal.StateFailed)
	if p.State != ptktemporal.StateDone || !strings.HasPrefix(p.Answer, "done: ") {
		t.Fatalf("after approval: %+v", p)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "note.txt")); err != nil || string(b) != "durable" {
		t.Errorf("note.txt: %q, %v", b, err)
	}

	// a followed run: events on stderr, the answer on stdout
	code, out, errOut = runPTK(t, environ, "run", "--temporal", env.addr, "--mode", "native", "--yes", "write again")
	if code != 0 || !strings.HasPrefix(out, "done: ") || !strings.Contains(errOut, "→ write_file") {
		t.Errorf("run --yes: exit %d, stdout %q, stderr %s", code, out, errOut)
	}

	// an answer with escape sequences: as JSON, escaped; in runs status,
	// shown as text
	code, out, errOut = runPTK(t, environ, "run", "--temporal", env.addr, "--mode", "native", "--json", "hi \x1b]0;owned\x07\x1b[2J")
	if code != 0 || !strings.Contains(out, `you said: hi \u001b]0;owned`) {
		t.Errorf("run --json: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var id3 string
	fmt.Sscanf(errOut, "ptk: run %s", &id3)
	code, out, _ = runPTK(t, environ, "runs", "status", id3, "--temporal", env.addr)
	if code != 0 || strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `answer: you said: hi \x1b]0;owned\x07\x1b[2J`) {
		t.Errorf("runs status of %q: exit %d, %q", id3, code, out)
	}

	// a canceled run
	code, out, _ = runPTK(t, environ, "run", "--temporal", env.addr, "--detach", "--mode", "native", "write never")
	id2 := strings.TrimSpace(out)
	waitState(t, environ, id2, ptktemporal.StateWaiting)
	if code, _, errOut := runPTK(t, environ, "runs", "cancel", id2, "--temporal", env.addr); code != 0 {
		t.Fatalf("runs cancel: exit %d: %s", code, errOut)
	}
	waitState(t, environ, id2, ptktemporal.StateCanceled)
	if b, _ := os.ReadFile(filepath.Join(ws, "note.txt")); string(b) == "never" {
		t.Error("the canceled run wrote")
	}

	// the runs are in the worker's trace store
	code, out, errOut = runPTK(t, environ, "traces", "list", "--json", "--trace-db", store)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, id2) {
		t.Errorf("traces list: exit %d: %s %s", code, out, errOut)
	}

	// a flag of the workers' with --temporal: a usage error that says so
	code, _, errOut = runPTK(t, environ, "run", "--temporal", env.addr, "--workspace", "/", "hi")
	if code != 2 || !strings.Contains(errOut, "--workspace") || !strings.Contains(errOut, "ptk worker") {
		t.Errorf("run --temporal --workspace: exit %d: %s", code, errOut)
	}
	// no ptk-temporal: a usage error that says how to install it
	// (ptk alone in a folder: it also looks beside itself)
	alone := filepath.Join(t.TempDir(), "ptk")
	if err := os.Link(env.ptk, alone); err != nil {
		t.Fatal(err)
	}
	saved := env.ptk
	env.ptk = alone
	code, _, errOut = runPTK(t, append(environ, "PTK_TEMPORAL=", "PATH=/nonexistent"), "runs", "status", id)
	env.ptk = saved
	if code != 2 || !strings.Contains(errOut, "go install github.com/ptkit/ptk/temporal/cmd/ptk-temporal") {
		t.Errorf("without ptk-temporal: exit %d: %s", code, errOut)
	}
}

// TestEventsAreText: what a model or a tool wrote reaches the terminal as
// text: escape sequences, carriage returns and bidirectional overrides in
// a run's events are shown as escapes, on one line.
func TestEventsAreText(t *testing.T) {
	var b bytes.Buffer
	printEvent(&b, ptktemporal.Event{Kind: "result", Text: "ok\x1b[2J\rrm -rf /\u202e\nnext"})
	got := b.String()
	if strings.ContainsAny(got, "\x1b\r\u202e") || strings.Count(got, "\n") != 1 || !strings.Contains(got, `\x1b[2J`) {
		t.Errorf("%q", got)
	}
}
