package celcheck_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/ptool/celcheck"
)

func eval(t *testing.T, expr string, vars map[string]any) (bool, error) {
	t.Helper()
	f, err := celcheck.Language{}.Compile(expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return f(context.Background(), vars)
}

func TestExpressions(t *testing.T) {
	vars := map[string]any{
		"input":  map[string]any{"text": "the printer is on fire", "options": []any{"urgent", "later"}},
		"output": map[string]any{"quote": "on fire", "start": 1.0, "end": 3.0, "items": []any{map[string]any{"qty": 2.0}}, "choice": "urgent"},
		"value":  "urgent",
	}
	for expr, want := range map[string]bool{
		"input.text.contains(output.quote)":     true,
		"output.start <= output.end":            true,
		"output.items.all(i, i.qty > 0)":        true,
		"output.items.all(i, i.qty > 2)":        false,
		"value in input.options":                true,
		"size(output.quote) < size(input.text)": true,
		"output.end == 3":                       true, // a JSON number is a double, equal to an int
		"has(output.missing)":                   false,
	} {
		if got, err := eval(t, expr, vars); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", expr, got, err, want)
		}
	}
	// a field that is not there is an error, which the check reports
	if _, err := eval(t, "output.missing == 1", vars); err == nil {
		t.Error("no error for a missing field")
	}
	for _, bad := range []string{"output.", "1 + 2", "'a'"} {
		if _, err := (celcheck.Language{}).Compile(bad); err == nil {
			t.Errorf("%q compiled", bad)
		}
	}
}

// TestHugeAnswer: a check over a long list is linear, and a quadratic one
// over a huge answer ends at the timeout, with an error.
func TestHugeAnswer(t *testing.T) {
	items := make([]any, 200_000)
	for i := range items {
		items[i] = float64(i)
	}
	// The linear check looks at 20,000 items: under the race detector on a
	// loaded machine 200,000 can take the whole timeout.
	start := time.Now()
	if ok, err := eval(t, "output.all(i, i >= 0)", map[string]any{"output": items[:20_000]}); !ok || err != nil || time.Since(start) > celcheck.Timeout {
		t.Errorf("a linear check: %v, %v after %v", ok, err, time.Since(start))
	}
	start = time.Now()
	_, err := eval(t, "output.all(i, output.exists(j, j == i))", map[string]any{"output": items})
	if err == nil || time.Since(start) > 3*celcheck.Timeout {
		t.Errorf("a quadratic check: err = %v after %v", err, time.Since(start))
	}
}

// TestFileChecks: an expression check of a ptools file that relates the
// output to the input asks the model again until it holds.
func TestFileChecks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(file, []byte(`{"ptools": [{"name": "quote", "doc": "Quote the sentence that says why.",
	  "input": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
	  "output": {"type": "object", "properties": {"quote": {"type": "string"}, "start": {"type": "integer"}, "end": {"type": "integer"}}},
	  "checks": [
	    {"expr": "input.text.contains(output.quote)", "message": "quote the text word for word"},
	    {"expr": "output.start <= output.end"}
	  ]}]}`), 0o644)
	m := llmtest.New(
		llmtest.Text(`<answer>{"quote": "the printer burns", "start": 5, "end": 2}</answer>`),
		llmtest.Text(`<answer>{"quote": "on fire", "start": 15, "end": 22}</answer>`))
	ps, err := ptool.Load(file, ptool.WithModel(m), ptool.WithLanguage(celcheck.Language{}))
	if err != nil {
		t.Fatal(err)
	}
	out, rec, err := ps[0].CallRecord(context.Background(), map[string]any{"text": "the printer is on fire"})
	if err != nil || out.(map[string]any)["quote"] != "on fire" {
		t.Fatalf("Call = %v, %v", out, err)
	}
	if p := strings.Join(rec.Attempts[0].Problems, "; "); p != "check: quote the text word for word; check: output.start <= output.end is false" {
		t.Errorf("problems = %q", p)
	}
	// a bad expression is an error when the file loads
	os.WriteFile(file, []byte(`{"ptools": [{"name": "q", "output": {"type": "object"}, "checks": [{"expr": "output.a >"}]}]}`), 0o644)
	if _, err := ptool.Load(file, ptool.WithLanguage(celcheck.Language{})); err == nil || !strings.Contains(err.Error(), "check 1: the expr") {
		t.Errorf("err = %v", err)
	}
}
