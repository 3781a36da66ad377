package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ptkit/ptk/eval"
)

const evalData = "../../eval/testdata/bfcl"

// bfclReference answers the simple_python and irrelevance questions of the
// eval package's sample over the Chat Completions wire format: natively
// when the request has tools, in the PTK protocol otherwise, with the first
// acceptable value of each parameter; prose to irrelevance questions.
func bfclReference(t *testing.T) (*httptest.Server, *atomic.Int64) {
	qs, err := eval.Load(evalData, []string{"simple_python", "irrelevance"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var req struct {
			Messages []struct{ Role, Content string }
			Tools    []json.RawMessage
		}
		json.NewDecoder(r.Body).Decode(&req)
		user := req.Messages[len(req.Messages)-1].Content
		msg := map[string]any{"role": "assistant", "content": "No function answers that."}
		for _, q := range qs {
			if q.Messages[len(q.Messages)-1].Content != user || q.Answer == nil {
				continue
			}
			e := q.Answer[0]
			args := map[string]any{}
			for _, p := range e.Params {
				for _, a := range p.Acceptable {
					if a != "" {
						args[p.Name] = a
						break
					}
				}
			}
			b, _ := json.Marshal(args)
			if len(req.Tools) > 0 {
				msg = map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
					"function": map[string]any{"name": strings.ReplaceAll(e.Name, ".", "_"), "arguments": string(b)}}}}
			} else {
				msg["content"] = fmt.Sprintf("<PTK_CALL>{\"tool\": %q, \"args\": %s}</PTK_CALL>", e.Name, b)
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": msg, "finish_reason": "stop"}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5}})
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func TestEvalCommand(t *testing.T) {
	srv, requests := bfclReference(t)
	out := filepath.Join(t.TempDir(), "run.json")
	args := []string{"eval", "--data", evalData, "--categories", "simple_python,irrelevance", "--base-url", srv.URL + "/v1",
		"--model", "reference", "--out", out, "--concurrency", "2"}
	code, stdout, stderr := runPTK(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, row := range []string{"| simple_python | ptk/ptk | 4 | 100.0% | 100.0% |", "| simple_python | native | 4 | 100.0% | 100.0% |",
		"| irrelevance | ptk/ptk | 4 | 100.0% |", "| **all** | native | 8 | 100.0% |"} {
		if !strings.Contains(stdout, row) {
			t.Errorf("no row %q in\n%s", row, stdout)
		}
	}
	if !strings.Contains(stderr, "eval: 16/16 answered") {
		t.Errorf("stderr %q shows no progress", stderr)
	}
	f, err := eval.ReadFile(out)
	if err != nil || len(f.Results) != 16 || f.Model != "reference" {
		t.Fatalf("--out: %v, %d results", err, len(f.Results))
	}
	if requests.Load() != 16 {
		t.Errorf("%d requests, want 16", requests.Load())
	}
	// Run again: everything is answered already.
	if code, _, stderr := runPTK(t, "", args...); code != 0 || requests.Load() != 16 {
		t.Errorf("resumed run: exit %d (%s), %d requests, want none more", code, stderr, requests.Load())
	}
	code, stdout, stderr = runPTK(t, "", "eval", "compare", out, out)
	if code != 0 || !strings.Contains(stdout, "No question changed verdict.") || !strings.Contains(stdout, "| simple_python | native | 4 | 100.0% | 100.0% | +0.0 |") {
		t.Errorf("compare: exit %d, %s%s", code, stdout, stderr)
	}
}

func TestEvalCompareChanges(t *testing.T) {
	dir := t.TempDir()
	a := &eval.File{Model: "m", Results: []eval.Result{{ID: "simple_python_0", Category: "simple_python", Mode: "ptk", Prompt: "ptk", Correct: true, Verdict: eval.Verdict{Correct: true}}}}
	b := &eval.File{Model: "m", Results: []eval.Result{{ID: "simple_python_0", Category: "simple_python", Mode: "ptk", Prompt: "ptk", Verdict: eval.Verdict{ErrorType: "value_error:string"}}}}
	pa, pb := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := eval.WriteFile(pa, a); err != nil {
		t.Fatal(err)
	}
	if err := eval.WriteFile(pb, b); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runPTK(t, "", "eval", "compare", pa, pb)
	if code != 0 || !strings.Contains(stdout, "- simple_python_0 (ptk/ptk): correct → value_error:string") || !strings.Contains(stdout, "| 100.0% | 0.0% | -100.0 |") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

func TestEvalUsageErrors(t *testing.T) {
	t.Setenv("PTK_BFCL_DATA", "")
	for _, args := range [][]string{
		{"eval"},
		{"eval", "--data", evalData, "--categories", "nope"},
		{"eval", "--data", evalData, "--mode", "telepathy"},
		{"eval", "--data", evalData, "--prompt", "klingon"},
		{"eval", "compare", "one.json"},
	} {
		if code, _, stderr := runPTK(t, "", args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
}
