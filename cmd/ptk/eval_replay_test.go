package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalReplay replays recorded replies to the in-repo BFCL sample: the
// tables, the differing replies, and the JSON.
func TestEvalReplay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "replies.jsonl")
	lines := `{"model": "m1", "family": "F", "category": "simple_python", "id": "simple_python_0", "raw": "[calculate_triangle_area(base=10, height=5)]", "bfcl_correct": false}
{"model": "m1", "category": "irrelevance", "id": "irrelevance_0", "raw": "No function fits.", "bfcl_correct": true}
{"model": "m2", "id": "simple_python_0", "raw": "calculate_triangle_area(base=10)", "bfcl_correct": true}
`
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runPTK(t, "", "eval", "replay", "--data", evalData, file)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"| m1 | F | 2 | 100.0 | 50.0 | +50.0 | 1 | 0 |",
		"| m2 |  | 1 | 0.0 | 100.0 | -100.0 | 0 | 1 |",
		"| **all** | | 3 | 66.7 | 66.7 | +0.0 | 1 | 1 |",
		"| simple_python | 2 | 50.0 |",
		"| m1 | 100.0 (0.0) | 100.0 (100.0) |",
		"- m1 simple_python_0: recorded wrong, ptk right",
		"- m2 simple_python_0: recorded right, ptk wrong (simple_function_checker:missing_required)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runPTK(t, "", "eval", "replay", "--data", evalData, "--models", "m2", "--diffs", "gained", file)
	if code != 0 || strings.Contains(out, "| m1 ") || !strings.Contains(out, "No reply's verdict differs") {
		t.Errorf("--models m2 --diffs gained: exit %d\n%s", code, out)
	}

	code, out, _ = runPTK(t, "", "eval", "replay", "--data", evalData, "--json", file)
	var got struct {
		Report struct {
			All struct{ Outputs, Correct int }
		}
		Replies []struct {
			Model   string
			ID      string
			Correct bool
		}
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Report.All.Outputs != 3 || got.Report.All.Correct != 2 || len(got.Replies) != 3 || got.Replies[2].Model != "m2" {
		t.Errorf("--json: exit %d, %v: %+v", code, err, got)
	}
}

func TestEvalReplayUsageErrors(t *testing.T) {
	t.Setenv("PTK_BFCL_DATA", "")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	os.WriteFile(good, []byte(`{"model": "m", "id": "simple_python_0", "raw": "x"}`+"\n"), 0o644)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"model": "m", "id": "simple_python_0"}`+"\n"), 0o644)
	unknown := filepath.Join(dir, "unknown.jsonl")
	os.WriteFile(unknown, []byte(`{"model": "m", "id": "simple_python_99999", "raw": "x"}`+"\n"), 0o644)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"eval", "replay"}, "one file"},
		{[]string{"eval", "replay", good}, "--data"},
		{[]string{"eval", "replay", "--data", evalData, filepath.Join(dir, "none.jsonl")}, "no such file"},
		{[]string{"eval", "replay", "--data", evalData, bad}, `line 1: no "raw"`},
		{[]string{"eval", "replay", "--data", evalData, unknown}, "simple_python_99999"},
		{[]string{"eval", "replay", "--data", evalData, "--models", "other", good}, `no reply of "other"`},
		{[]string{"eval", "replay", "--data", evalData, "--diffs", "some", good}, "--diffs"},
		{[]string{"eval", "replay", "--data", evalData, "--categories", "nope", good}, "unknown category"},
	} {
		code, _, stderr := runPTK(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.msg)
		}
	}
}
