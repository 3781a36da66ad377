package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/trace"
)

// TestMain keeps the runs the tests make out of the user's trace store:
// the default store is under a temporary $XDG_DATA_HOME.
func TestMain(m *testing.M) {
	beingPTK()
	dir, err := os.MkdirTemp("", "ptk-data")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("XDG_STATE_HOME", dir) // where checkpoints are kept
	os.Unsetenv("PTK_TRACE_DB")
	code := m.Run()
	os.RemoveAll(dir)
	if testBinary.dir != "" {
		os.RemoveAll(testBinary.dir)
	}
	os.Exit(code)
}

func TestRunRecordsTraces(t *testing.T) {
	_, url := newFakeOpenAI(t, messyReplies()...)
	ws := workspace(t)
	db := filepath.Join(t.TempDir(), "traces.db")
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "qwen3:8b", "--mode", "ptk", "--workspace", ws, "--json",
		"--trace-db", db, "What does this repository do?")
	if code != 0 || errOut != "" {
		t.Fatalf("run: exit %d, stderr %q, stdout %s", code, errOut, out)
	}

	code, out, errOut = runPTK(t, "", "traces", "list", "--json", "--trace-db", db)
	if code != 0 {
		t.Fatalf("traces list: exit %d, %s", code, errOut)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 {
		t.Fatalf("traces list --json: %v\n%s", err, out)
	}
	r := list[0]
	for _, k := range []string{"id", "kind", "name", "status", "model", "started_at", "duration_ms", "usage", "cost", "tool_calls"} {
		if _, ok := r[k]; !ok {
			t.Errorf("list lacks %q: %v", k, r)
		}
	}
	if r["kind"] != "agent" || r["status"] != "ok" || r["model"] != "qwen3:8b" || r["tool_calls"] != 3.0 ||
		r["usage"].(map[string]any)["prompt_tokens"] != 480.0 {
		t.Errorf("run listed as %v", r)
	}
	id := r["id"].(string)

	code, out, errOut = runPTK(t, "", "traces", "show", id[:10], "--json", "--trace-db", db)
	if code != 0 {
		t.Fatalf("traces show: exit %d, %s", code, errOut)
	}
	var show map[string]any
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		t.Fatal(err)
	}
	mcs, _ := show["model_calls"].([]any)
	tcs, _ := show["tool_calls"].([]any)
	if show["id"] != id || len(mcs) != 4 || len(tcs) != 3 {
		t.Fatalf("show: %d model calls, %d tool calls:\n%s", len(mcs), len(tcs), out)
	}
	first := tcs[0].(map[string]any)
	if first["tool"] != "read_file" || first["is_error"] != false || !strings.Contains(first["result"].(string), "module example.com/hello") ||
		first["args"].(map[string]any)["path"] != "go.mod" {
		t.Errorf("first tool call: %v", first)
	}
	if !strings.Contains(mcs[0].(map[string]any)["text"].(string), "<tool_call>") {
		t.Errorf("first model call's text: %v", mcs[0])
	}

	code, out, _ = runPTK(t, "", "traces", "show", id, "--trace-db", db)
	if code != 0 || !strings.Contains(out, "read_file") || !strings.Contains(out, "model call 4") {
		t.Errorf("traces show (text): exit %d\n%s", code, out)
	}
	code, out, _ = runPTK(t, "", "traces", "list", "--trace-db", db, "--tool", "grep")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "What does this repository do?") {
		t.Errorf("traces list --tool grep: exit %d\n%s", code, out)
	}
	code, out, _ = runPTK(t, "", "traces", "list", "--trace-db", db, "--status", "error", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("traces list --status error: exit %d, %s", code, out)
	}
	code, out, _ = runPTK(t, "", "traces", "stats", "--json", "--trace-db", db)
	var st struct{ Tools []map[string]any }
	if json.Unmarshal([]byte(out), &st); code != 0 || len(st.Tools) != 3 {
		t.Errorf("traces stats: exit %d\n%s", code, out)
	}
	code, out, _ = runPTK(t, "", "traces", "export", "--trace-db", db)
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"model_calls"`) {
		t.Errorf("traces export: exit %d\n%s", code, out)
	}
	if code, _, errOut := runPTK(t, "", "traces", "prune", "--trace-db", db); code != 2 || !strings.Contains(errOut, "--older-than") {
		t.Errorf("prune without a bound: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runPTK(t, "", "traces", "show", "nope", "--trace-db", db); code != 2 || !strings.Contains(errOut, "no run") {
		t.Errorf("show of an unknown id: exit %d, %s", code, errOut)
	}
	code, out, _ = runPTK(t, "", "traces", "prune", "--older-than", "0s", "--trace-db", db)
	if code != 0 || out != "deleted 1 runs\n" {
		t.Errorf("prune: exit %d, %q", code, out)
	}
}

// TestRunWithBrokenStore: a store that cannot be used is said in one line
// on stderr, and the run completes.
func TestRunWithBrokenStore(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("this is no database "), 500), 0o644)
	newer := filepath.Join(dir, "newer.db")
	runPTK(t, "", "traces", "list", "--trace-db", newer) // makes it
	// Make it a store of a newer ptk.
	code, _, _ := runPTK(t, "", "traces", "list", "--trace-db", newer)
	if code != 0 {
		t.Fatal("could not make a store")
	}
	setSchemaVersion(t, newer, 99)
	for _, c := range []struct{ db, want string }{
		{garbage, "not a readable SQLite database"},
		{newer, "newer ptk"},
	} {
		_, url := newFakeOpenAI(t, fakeReply{content: "Hello."})
		code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", t.TempDir(), "--json",
			"--trace-db", c.db, "hi")
		if code != 0 || !strings.Contains(out, `"content":"Hello."`) {
			t.Errorf("%s: exit %d, stdout %s", c.db, code, out)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "ptk: not recording runs: trace store "+c.db) || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: stderr %q", c.db, errOut)
		}
	}
}

func TestNoTrace(t *testing.T) {
	_, url := newFakeOpenAI(t, fakeReply{content: "Hello."})
	db := filepath.Join(t.TempDir(), "traces.db")
	code, _, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", t.TempDir(), "--no-trace", "--trace-db", db, "hi")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("--no-trace made the store: %v", err)
	}
	// PTK_TRACE_DB names the store.
	t.Setenv("PTK_TRACE_DB", db)
	_, url = newFakeOpenAI(t, fakeReply{content: "Hello."})
	runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", t.TempDir(), "hi")
	if _, out, _ := runPTK(t, "", "traces", "list", "--json"); !strings.Contains(out, `"output": "Hello."`) {
		t.Errorf("PTK_TRACE_DB: the run is not in %s:\n%s", db, out)
	}
}

func TestConversations(t *testing.T) {
	f, url := newFakeOpenAI(t, fakeReply{content: "Nice to meet you, Ada."}, fakeReply{content: "You are Ada."})
	db := filepath.Join(t.TempDir(), "traces.db")
	args := []string{"run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", t.TempDir(), "--trace-db", db, "--conversation", "intro"}
	if code, _, errOut := runPTK(t, "", append(args, "I am Ada.")...); code != 0 {
		t.Fatalf("first run: exit %d, %s", code, errOut)
	}
	if code, out, errOut := runPTK(t, "", append(args, "Who am I?")...); code != 0 || !strings.Contains(out, "You are Ada.") {
		t.Fatalf("second run: exit %d, %s %s", code, out, errOut)
	}
	second, _ := json.Marshal(f.request(1)["messages"])
	if !strings.Contains(string(second), "I am Ada.") || !strings.Contains(string(second), "Nice to meet you, Ada.") {
		t.Errorf("the second run did not continue the first:\n%s", second)
	}
	code, out, _ := runPTK(t, "", "conversations", "list", "--json", "--trace-db", db)
	var convs []map[string]any
	if json.Unmarshal([]byte(out), &convs); code != 0 || len(convs) != 1 || convs[0]["id"] != "intro" || convs[0]["messages"] != 4.0 {
		t.Errorf("conversations list: exit %d\n%s", code, out)
	}
	if code, out, _ := runPTK(t, "", "conversations", "show", "intro", "--trace-db", db); code != 0 || !strings.Contains(out, "Who am I?") {
		t.Errorf("conversations show: exit %d\n%s", code, out)
	}
	// The runs are recorded under the conversation's name.
	if _, out, _ := runPTK(t, "", "traces", "list", "--name", "intro", "--json", "--trace-db", db); strings.Count(out, `"kind": "agent"`) != 2 {
		t.Errorf("runs of the conversation:\n%s", out)
	}
	if code, _, _ := runPTK(t, "", "conversations", "rm", "intro", "--trace-db", db); code != 0 {
		t.Errorf("rm: exit %d", code)
	}
	if code, _, errOut := runPTK(t, "", "conversations", "show", "intro", "--trace-db", db); code != 2 || !strings.Contains(errOut, "no conversation") {
		t.Errorf("show after rm: exit %d, %s", code, errOut)
	}
	// A conversation needs its store.
	garbage := filepath.Join(t.TempDir(), "g.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("x"), 5000), 0o644)
	if code, _, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--trace-db", garbage, "--conversation", "c", "hi"); code != 2 ||
		!strings.Contains(errOut, "--conversation c needs the trace store") {
		t.Errorf("conversation without a store: exit %d, %s", code, errOut)
	}
}

// TestServeRecords: the gateway's own tool runs are recorded.
func TestServeRecords(t *testing.T) {
	_, upstream := newFakeOpenAI(t, messyReplies()[0], fakeReply{content: "It is example.com/hello."})
	db := filepath.Join(t.TempDir(), "traces.db")
	url := startServe(t, "--base-url", upstream, "--model", "qwen3:8b", "--mode", "ptk", "--tools", "read_file", "--workspace", workspace(t), "--trace-db", db)
	status, out := postChat(t, url, "", `{"messages":[{"role":"user","content":"What is the module?"}]}`)
	if status != http.StatusOK {
		t.Fatalf("%d %v", status, out)
	}
	// The writer lingers before it writes: wait for the run to land (for
	// up to 30 s on a loaded machine).
	for range 600 {
		if _, out, _ := runPTK(t, "", "traces", "list", "--json", "--trace-db", db); strings.Contains(out, `"input": "What is the module?"`) {
			if !strings.Contains(out, `"tool_calls": 1`) || !strings.Contains(out, `"name": "serve"`) {
				t.Errorf("recorded as:\n%s", out)
			}
			return
		}
		runPTKSleep()
	}
	t.Fatal("the gateway's run was not recorded")
}

func setSchemaVersion(t *testing.T, db string, v int) {
	t.Helper()
	s, err := openForTest(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Exec(fmt.Sprintf("UPDATE ptk_schema SET version = %d", v)); err != nil {
		t.Fatal(err)
	}
}

// openForTest opens a SQLite store's file directly (the driver comes with
// package trace).
func openForTest(db string) (*sql.DB, error) { return sql.Open("sqlite", db) }

func runPTKSleep() { time.Sleep(50 * time.Millisecond) }

// TestTracesLabel: ptk traces label marks a run and a ptool call, and says
// what is wrong with a label it refuses (exit 2).
func TestTracesLabel(t *testing.T) {
	db := filepath.Join(t.TempDir(), "traces.db")
	s, err := trace.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Write(context.Background(), &trace.Record{Run: trace.Run{ID: "0123456789abcdef", Kind: trace.KindPtool, Name: "classify"},
		PtoolCalls: []trace.PtoolCall{{Ptool: "classify", Input: json.RawMessage(`{"t":1}`), Output: json.RawMessage(`"a"`)}}})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runPTK(t, "", "traces", "label", "01234567", "bad", "--span", "ptool/0", "--note", "not a", "--trace-db", db); code != 0 || out != "run 0123456789abcdef ptool/0: bad\n" {
		t.Fatalf("label: %d %q %s", code, out, errOut)
	}
	if code, _, errOut := runPTK(t, "", "traces", "label", "0123456789abcdef", "good", "--trace-db", db); code != 0 {
		t.Fatalf("label the run: %d %s", code, errOut)
	}
	for _, args := range [][]string{
		{"0123456789abcdef", "meh"},
		{"0123456789abcdef", "bad", "--span", "ptool/3"},
		{"nosuchrun", "bad"},
	} {
		if code, _, errOut := runPTK(t, "", append(append([]string{"traces", "label"}, args...), "--trace-db", db)...); code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("label %v: exit %d, %q", args, code, errOut)
		}
	}
	s, _ = trace.Open(context.Background(), db)
	defer s.Close()
	ls, _ := s.Labels(context.Background(), "0123456789abcdef")
	if len(ls) != 2 || ls[0].Span != "" || ls[0].Label != "good" || ls[1].Span != "ptool/0" || ls[1].Note != "not a" {
		t.Errorf("labels = %+v", ls)
	}
	if good, _ := s.GoodCalls(context.Background(), trace.GoodFilter{Ptool: "classify"}); len(good) != 0 {
		t.Errorf("a call labelled bad is a good call: %+v", good)
	}
}

// TestRunOTLP: ptk run --otlp-endpoint sends the run's spans over OTLP/HTTP
// as protobuf to the endpoint's /v1/traces, besides the store; a bad
// endpoint is a usage error. (otlpcheck checks the spans a real receiver
// gets.)
func TestRunOTLP(t *testing.T) {
	got := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type") + " " + strconv.FormatBool(bytes.Contains(b, []byte("gen_ai.operation.name")))
	}))
	defer srv.Close()
	_, url := newFakeOpenAI(t, fakeReply{content: "Hello."})
	db := filepath.Join(t.TempDir(), "traces.db")
	if code, _, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", t.TempDir(), "--trace-db", db, "--otlp-endpoint", srv.URL, "hi"); code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	select {
	case g := <-got:
		if g != "POST /v1/traces application/x-protobuf true" {
			t.Errorf("the endpoint got %q", g)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no spans sent")
	}
	if code, _, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--trace-db", db, "--otlp-endpoint", "localhost:4318", "hi"); code != 2 || !strings.Contains(errOut, "http://") {
		t.Errorf("a bad endpoint: exit %d, %s", code, errOut)
	}
}
