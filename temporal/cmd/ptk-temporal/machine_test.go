package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testEnv is the environment of a test with a worker of its own: its task
// queue, data folder and workspace.
func testEnv(t *testing.T, name string, tools string) (environ []string, ws string) {
	t.Helper()
	ws, data := t.TempDir(), t.TempDir()
	environ = append(os.Environ(), "PTK_TEMPORAL="+env.temporal, "PTK_TEMPORAL_TASK_QUEUE="+name+"-"+fmt.Sprint(os.Getpid()),
		"XDG_DATA_HOME="+data, "XDG_CONFIG_HOME="+data, "PTK_TRACE_DB=", "PTK_TEST_WORKER_STORE="+filepath.Join(data, "traces.db"))
	startWorker(t, environ, "--model", "test-model", "--base-url", model(t), "--workspace", ws, "--tools", tools,
		"--trace-store", filepath.Join(data, "traces.db"))
	return environ, ws
}

// recordedRun is a run as 'ptk traces list --json' shows it.
type recordedRun struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	ErrorCode string `json:"error_code"`
	Input     string `json:"input"`
}

// workerRuns are the runs in the trace store of testEnv's worker; it
// waits until one has input, as the worker records a run when it ends.
func workerRuns(t *testing.T, environ []string, input string) map[string]recordedRun {
	t.Helper()
	store := ""
	for _, v := range environ {
		if s, ok := strings.CutPrefix(v, "PTK_TEST_WORKER_STORE="); ok {
			store = s
		}
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		code, out, errOut := runPTK(t, environ, "traces", "list", "--json", "--trace-db", store)
		if code != 0 {
			t.Fatalf("traces list: exit %d: %s", code, errOut)
		}
		var runs []recordedRun
		if err := json.Unmarshal([]byte(out), &runs); err != nil {
			t.Fatalf("traces list --json: %v\n%s", err, out)
		}
		byInput := map[string]recordedRun{}
		for _, r := range runs {
			byInput[r.Input] = r
		}
		if _, ok := byInput[input]; ok || time.Now().After(end) {
			return byInput
		}
	}
}

// comparable is a run's JSON object with what differs between two runs of
// the same script (how long they took) left out.
func comparable(t *testing.T, line string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		t.Fatalf("%v: %q", err, line)
	}
	delete(v, "duration_ms")
	return v
}

// TestJSONOutput: ptk run --temporal --output-format json prints the
// object ptk run --output-format json prints for the same scripted run
// (here and on the workers: one shape), a call denied because no one was
// asked is in its denied list as it is in a local run's, and stream-json
// ends with the same result event; a model's escape sequences stay escaped
// in the JSON.
func TestJSONOutput(t *testing.T) {
	need(t)
	environ, ws := testEnv(t, "json", "read_file,write_file")
	local := t.TempDir()
	base := model(t)
	localRun := func(args ...string) (int, string, string) {
		return runPTK(t, environ, append([]string{"run", "--model", "test-model", "--base-url", base, "--workspace", local,
			"--tools", "read_file,write_file", "--mode", "native", "--no-trace"}, args...)...)
	}
	durableRun := func(args ...string) (int, string, string) {
		return runPTK(t, environ, append([]string{"run", "--temporal", env.addr, "--mode", "native"}, args...)...)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"allowed", []string{"--output-format", "json", "--yes", "write json"}},
		{"denied", []string{"--output-format", "json", "write nobody asked"}},
		{"escapes", []string{"--json", "hi \x1b]0;owned\x07"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lc, lout, lerr := localRun(c.args...)
			dc, dout, derr := durableRun(c.args...)
			if lc != dc {
				t.Errorf("exit status: local %d, durable %d\nlocal: %s\ndurable: %s", lc, dc, lerr, derr)
			}
			if strings.Count(dout, "\n") != 1 {
				t.Fatalf("durable: not one line: %q (stderr %s)", dout, derr)
			}
			t.Logf("durable: %s", dout)
			lv, dv := comparable(t, lout), comparable(t, dout)
			lb, _ := json.Marshal(lv)
			db, _ := json.Marshal(dv)
			if string(lb) != string(db) {
				t.Errorf("the objects differ:\nlocal:   %s\ndurable: %s", lb, db)
			}
			if strings.ContainsAny(dout, "\x1b\x07") {
				t.Errorf("raw escapes in the JSON: %q", dout)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(ws, "note.txt")); err != nil || string(b) != "json" {
		t.Errorf("the workers' note.txt: %q, %v", b, err)
	}

	// --output-format text is the followed run of ptk-temporal, as without it
	if code, out, errOut := durableRun("--output-format", "text", "hello"); code != 0 || out != "you said: hello\n" {
		t.Errorf("--output-format text: exit %d, %q, %s", code, out, errOut)
	}

	// stream-json: the events as the run goes, and the same result event
	lc, lout, _ := localRun("--output-format", "stream-json", "--yes", "write stream")
	dc, dout, derr := durableRun("--output-format", "stream-json", "--yes", "write stream")
	if lc != 0 || dc != 0 {
		t.Fatalf("stream-json: exit %d and %d: %s", lc, dc, derr)
	}
	ll, dl := strings.Split(strings.TrimSpace(lout), "\n"), strings.Split(strings.TrimSpace(dout), "\n")
	lr, dr := comparable(t, ll[len(ll)-1]), comparable(t, dl[len(dl)-1])
	lb, _ := json.Marshal(lr)
	db, _ := json.Marshal(dr)
	if string(lb) != string(db) {
		t.Errorf("the result events differ:\nlocal:   %s\ndurable: %s", lb, db)
	}
	// the same events, in the same order, but the durable run's context
	// events (the workers' model, not known here)
	types := func(lines []string) string {
		var out []string
		for _, l := range lines {
			var e struct{ Type string }
			json.Unmarshal([]byte(l), &e)
			if e.Type != "context" {
				out = append(out, e.Type)
			}
		}
		return strings.Join(out, " ")
	}
	if lt, dt := types(ll), types(dl); lt != dt {
		t.Errorf("stream-json events:\nlocal:   %s\ndurable: %s\n%s", lt, dt, dout)
	}
}

// TestMachineBadInput: what ptk-temporal run --machine is given on stdin
// is checked: a first line that is not a conversation, no line, or an
// empty conversation is one error line on stdout (the protocol's) and
// exit status 1, before anything starts; a prompt or --yes beside
// --machine is a usage error.
func TestMachineBadInput(t *testing.T) {
	need(t)
	for _, c := range []struct{ stdin, want string }{
		{"not json\n", "the first line is not a conversation"},
		{"", "no conversation on stdin"},
		{`{"messages":[]}` + "\n", "the conversation has no messages"},
		{strings.Repeat("x", 80<<20), "token too long"},
	} {
		cmd := exec.Command(env.temporal, "run", "--machine", "--temporal", env.addr)
		cmd.Stdin = strings.NewReader(c.stdin)
		out, _ := cmd.Output()
		var l struct{ Type, Error string }
		if err := json.Unmarshal(out, &l); err != nil || l.Type != "error" || !strings.Contains(l.Error, c.want) || cmd.ProcessState.ExitCode() != 1 {
			t.Errorf("stdin %.20q: exit %d, %q", c.stdin, cmd.ProcessState.ExitCode(), out)
		}
	}
	cmd := exec.Command(env.temporal, "run", "--machine", "--temporal", env.addr, "a prompt")
	if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "--machine reads the conversation from stdin") {
		t.Errorf("--machine with a prompt: exit %d: %s", cmd.ProcessState.ExitCode(), out)
	}
}

// TestPTKLinksNoSDK: the ptk binary, which runs durable turns for run,
// chat and acp through ptk-temporal, links no module of the Temporal SDK
// (go version -m lists the modules a binary was built with), and
// ptk-temporal does.
func TestPTKLinksNoSDK(t *testing.T) {
	need(t)
	for _, c := range []struct {
		bin  string
		want bool
	}{{env.ptk, false}, {env.temporal, true}} {
		out, err := exec.Command("go", "version", "-m", c.bin).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", c.bin, err)
		}
		if got := strings.Contains(string(out), "go.temporal.io/sdk"); got != c.want {
			t.Errorf("%s links go.temporal.io/sdk: %v, want %v", filepath.Base(c.bin), got, c.want)
		}
	}
}
