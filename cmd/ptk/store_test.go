package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/rofs"
	"github.com/ptkit/ptk/trace"
)

// barrierOpenAI is an OpenAI-compatible server that answers a chat
// completion only once n of them are waiting, each with "answer to" the
// last user message: runs that overlap, for certain.
type barrierOpenAI struct {
	mu      sync.Mutex
	waiting int
	n       int
	release chan struct{}
}

func newBarrierOpenAI(t *testing.T, n int) string {
	b := &barrierOpenAI{n: n, release: make(chan struct{})}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func (b *barrierOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	b.mu.Lock()
	if b.waiting++; b.waiting == b.n {
		close(b.release)
	}
	b.mu.Unlock()
	select {
	case <-b.release:
	case <-time.After(30 * time.Second):
	}
	last := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = m.Content
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "x", "object": "chat.completion", "model": "m",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": "answer to " + last}}},
		"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
}

// TestConcurrentConversationRuns runs two ptk run --conversation c1 at
// once, both started before either ends: the conversation keeps both
// exchanges. It used to keep only the one that saved last.
func TestConcurrentConversationRuns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "traces.db")
	args := func(url, prompt string) []string {
		return []string{"run", "--base-url", url, "--model", "m", "--mode", "native", "--workspace", t.TempDir(),
			"--trace-db", db, "--conversation", "c1", prompt}
	}
	if code, _, errOut := runPTK(t, "", args(newBarrierOpenAI(t, 1), "first")...); code != 0 {
		t.Fatalf("first run: exit %d, %s", code, errOut)
	}
	url := newBarrierOpenAI(t, 2)
	var wg sync.WaitGroup
	for _, p := range []string{"left", "right"} {
		wg.Go(func() {
			code, out, errOut := runPTK(t, "", args(url, p)...)
			if code != 0 || strings.TrimSpace(out) != "answer to "+p {
				t.Errorf("run %s: exit %d, stdout %q, stderr %q", p, code, out, errOut)
			}
		})
	}
	wg.Wait()
	code, out, errOut := runPTK(t, "", "conversations", "show", "c1", "--json", "--trace-db", db)
	if code != 0 {
		t.Fatalf("conversations show: exit %d, %s", code, errOut)
	}
	var msgs []ptk.Message
	if err := json.Unmarshal([]byte(out), &msgs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := fmt.Sprint(msgs)
	for _, want := range []string{"first", "answer to first", "left", "answer to left", "right", "answer to right"} {
		if !strings.Contains(text, want) {
			t.Errorf("the conversation lost %q: %s", want, text)
		}
	}
	if len(msgs) != 6 {
		t.Errorf("%d messages, want 6: %s", len(msgs), text)
	}
}

// muteServer is a PostgreSQL server that takes connections and never
// answers.
func muteServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "postgres://ptk:secret@" + ln.Addr().String() + "/traces?sslmode=disable"
}

// TestStoreThatNeverAnswers: with a PostgreSQL store that takes the
// connection and never answers, ptk run and ptk serve go on without the
// store after trace.DefaultOpenTimeout, saying so in one line, and ptk
// traces fails in one line. All three used to hang for ever.
func TestStoreThatNeverAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for trace.DefaultOpenTimeout")
	}
	db := muteServer(t)
	limit := trace.DefaultOpenTimeout + 20*time.Second
	t.Run("run", func(t *testing.T) {
		t.Parallel()
		_, url := newFakeOpenAI(t, fakeReply{content: "Hello."})
		start := time.Now()
		code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", t.TempDir(), "--trace-db", db, "hi")
		if d := time.Since(start); d > limit {
			t.Errorf("ptk run took %v", d)
		}
		first, _, _ := strings.Cut(errOut, "\n")
		if code != 0 || out != "Hello.\n" || strings.Count(errOut, "trace store") != 1 ||
			!strings.HasPrefix(first, "ptk: not recording runs: trace store postgres://ptk:xxxxx@") || !strings.Contains(first, "did not answer in time") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
	t.Run("traces", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		code, _, errOut := runPTK(t, "", "traces", "list", "--trace-db", db)
		if d := time.Since(start); d > limit {
			t.Errorf("ptk traces took %v", d)
		}
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "did not answer in time") || strings.Contains(errOut, "secret") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("serve", func(t *testing.T) {
		t.Parallel()
		_, upstream := newFakeOpenAI(t, fakeReply{content: "Hello."})
		var stderr syncBuffer
		url := startServeTo(t, &stderr, "--base-url", upstream, "--model", "m", "--mode", "ptk", "--trace-db", db)
		if status, out := postChat(t, url, "", `{"messages":[{"role":"user","content":"hi"}]}`); status != http.StatusOK {
			t.Errorf("%d %v", status, out)
		}
		if s := stderr.String(); strings.Count(s, "ptk: not recording runs: trace store") != 1 || !strings.Contains(s, "did not answer in time") {
			t.Errorf("stderr:\n%s", s)
		}
	})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// ptkEnv, set, makes the test binary ptk itself: TestMain runs ptk with
// the binary's arguments, after rofs.Enter.
const ptkEnv = "PTK_TEST_BE_PTK"

// ptkProcess is ptk run as a process of its own, in a mount namespace
// where dir is read-only.
func ptkProcess(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), ptkEnv+"=1")
	rofs.Command(cmd, dir)
	return cmd
}

// TestTracesOnReadOnlyFilesystem reads a store on a read-only filesystem
// with ptk traces, ptk conversations and the dashboard, each a process in
// a mount namespace where the store's folder is mounted read-only; ptk run
// there runs and says it does not record. Reading used to fail: the store
// was opened to be written.
func TestTracesOnReadOnlyFilesystem(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "traces.db")
	_, url := newFakeOpenAI(t, fakeReply{content: "Nice to meet you."}, fakeReply{content: "Hello again."})
	if code, _, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", t.TempDir(),
		"--trace-db", db, "--conversation", "intro", "I am Ada."); code != 0 {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	out, err := ptkProcess(dir, "traces", "list", "--json", "--trace-db", db).CombinedOutput()
	if err != nil && strings.Contains(string(out), "operation not permitted") {
		t.Skipf("no mount namespace here: %s", out)
	}
	if err != nil || !strings.Contains(string(out), `"input": "I am Ada."`) {
		t.Fatalf("traces list on a read-only filesystem: %v\n%s", err, out)
	}
	if out, err := ptkProcess(dir, "conversations", "show", "intro", "--trace-db", db).CombinedOutput(); err != nil || !strings.Contains(string(out), "Nice to meet you.") {
		t.Errorf("conversations show: %v\n%s", err, out)
	}
	if out, err := ptkProcess(dir, "traces", "stats", "--trace-db", db).CombinedOutput(); err != nil {
		t.Errorf("traces stats: %v\n%s", err, out)
	}
	out, err = ptkProcess(dir, "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", t.TempDir(), "--trace-db", db, "hi").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Hello again.") || !strings.Contains(string(out), "ptk: not recording runs: trace store "+db) ||
		!strings.Contains(string(out), "cannot be written") {
		t.Errorf("run on a read-only store: %v\n%s", err, out)
	}

	// The dashboard.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var stderr syncBuffer
	dash := ptkProcess(dir, "dashboard", "--addr", addr, "--trace-db", db)
	dash.Stderr = &stderr
	if err := dash.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dash.Process.Kill(); dash.Wait() })
	var body []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/api/runs")
		if err != nil {
			continue
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		break
	}
	if !strings.Contains(string(body), `"input":"I am Ada."`) {
		t.Errorf("the dashboard on a read-only filesystem answered %q; stderr:\n%s", body, stderr.String())
	}
}

// beingPTK runs the test binary as ptk when ptkEnv says so.
func beingPTK() {
	if os.Getenv(ptkEnv) == "" {
		return
	}
	if err := rofs.Enter(); err != nil {
		fmt.Fprintln(os.Stderr, "rofs:", err)
		os.Exit(3)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// TestTracesUpgradesAnOlderStore: ptk traces on a store of an older schema
// that can be written brings it up to date and lists it, as it did before
// it opened stores read-only.
func TestTracesUpgradesAnOlderStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "traces.db")
	_, url := newFakeOpenAI(t, fakeReply{content: "Hello."})
	if code, _, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", t.TempDir(), "--trace-db", db, "hi"); code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	sdb, err := openForTest(db)
	if err != nil {
		t.Fatal(err)
	}
	// A store of schema version 1: before conversations (migration 2),
	// each ptool call's usage (3), a conversation's workspace (4, gone with
	// its table), spans (5), labels (6), and providers and steps (7).
	if _, err := sdb.Exec(`DROP TABLE conversations;
		DROP TABLE labels;
		DROP TABLE steps;
		ALTER TABLE runs DROP COLUMN provider;
		ALTER TABLE tool_calls DROP COLUMN error_code;
		DROP INDEX runs_owner;
		ALTER TABLE runs DROP COLUMN owner;
		ALTER TABLE runs DROP COLUMN heartbeat_us;
		ALTER TABLE model_calls DROP COLUMN started_us;
		ALTER TABLE model_calls DROP COLUMN parent;
		ALTER TABLE tool_calls DROP COLUMN started_us;
		ALTER TABLE tool_calls DROP COLUMN parent;
		ALTER TABLE ptool_calls DROP COLUMN started_us;
		ALTER TABLE ptool_calls DROP COLUMN parent;
		ALTER TABLE ptool_calls DROP COLUMN prompt_tokens;
		ALTER TABLE ptool_calls DROP COLUMN completion_tokens;
		ALTER TABLE ptool_calls DROP COLUMN cost;
		UPDATE ptk_schema SET version = 1`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	if code, out, errOut := runPTK(t, "", "traces", "list", "--json", "--trace-db", db); code != 0 || !strings.Contains(out, `"output": "Hello."`) {
		t.Errorf("traces list of an older store: exit %d, %s %s", code, out, errOut)
	}
	if code, out, errOut := runPTK(t, "", "conversations", "list", "--trace-db", db); code != 0 {
		t.Errorf("conversations list after the upgrade: exit %d, %s %s", code, out, errOut)
	}
}
