package ptool_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
)

// TestCheckTwiceThenPasses: a validator that fails twice is fed back with
// its message each time, recorded in the attempts, and the third answer
// passes.
func TestCheckTwiceThenPasses(t *testing.T) {
	m := llmtest.New(
		llmtest.Text(`<answer>{"sentiment": "negative", "confidence": 0.9}</answer>`),
		llmtest.Text(`<answer>{"sentiment": "neutral", "confidence": 0.9}</answer>`),
		llmtest.Text(`<answer>{"sentiment": "positive", "confidence": 0.9}</answer>`))
	calls := 0
	p := classifier(m, ptool.WithCheck(func(_ context.Context, in review, out sentiment) error {
		calls++
		if strings.Contains(in.Text, "love") && out.Sentiment != "positive" {
			return errors.New(`a review that says "love" is positive`)
		}
		return nil
	}))
	got, rec, err := p.CallRecord(context.Background(), review{Text: "I love it"})
	if err != nil || got.Sentiment != "positive" || calls != 3 {
		t.Fatalf("Call = %+v, %v after %d checks", got, err, calls)
	}
	if len(rec.Attempts) != 3 || rec.Attempts[2].Problems != nil {
		t.Fatalf("attempts = %+v", rec.Attempts)
	}
	for i := range 2 {
		if p := rec.Attempts[i].Problems; len(p) != 1 || p[0] != `check: a review that says "love" is positive` {
			t.Errorf("attempt %d's problems = %q", i+1, p)
		}
		msgs := m.Requests()[i+1].Messages
		if fb := msgs[len(msgs)-1].Content; !strings.Contains(fb, "does not pass the function's checks:\n- a review that says \"love\" is positive") ||
			strings.Contains(fb, "schema") {
			t.Errorf("feedback %d = %q", i+1, fb)
		}
	}
}

// TestCheckRetryAndStop: Retry asks again with a hint; Stop ends the call
// with the check's error; a check of other types is a program mistake.
func TestCheckRetryAndStop(t *testing.T) {
	m := llmtest.New(
		llmtest.Text(`<answer>{"sentiment": "positive", "confidence": 1}</answer>`),
		llmtest.Text(`<answer>{"sentiment": "positive", "confidence": 0.8}</answer>`))
	p := classifier(m, ptool.WithCheck(func(_ context.Context, _ review, out sentiment) error {
		if out.Confidence == 1 {
			return ptool.Retry("nobody is fully sure: give a confidence below 1")
		}
		return nil
	}))
	got, rec, err := p.CallRecord(context.Background(), review{Text: "fine"})
	if err != nil || got.Confidence != 0.8 || rec.Attempts[0].Problems[0] != "try again: nobody is fully sure: give a confidence below 1" {
		t.Fatalf("Call = %+v, %v, %+v", got, err, rec)
	}
	msgs := m.Requests()[1].Messages
	if fb := msgs[len(msgs)-1].Content; !strings.Contains(fb, "Try again:\n- nobody is fully sure") {
		t.Errorf("feedback = %q", fb)
	}
	if !errors.Is(ptool.Retry("x"), ptool.ErrRetry) {
		t.Error("Retry does not match ErrRetry")
	}

	down := errors.New("the stock database is down")
	m = llmtest.New(llmtest.Text(`<answer>{"sentiment": "positive", "confidence": 1}</answer>`))
	p = classifier(m, ptool.WithCheck(func(context.Context, review, sentiment) error { return ptool.Stop(down) }))
	_, rec, err = p.CallRecord(context.Background(), review{Text: "fine"})
	if !errors.Is(err, down) || len(m.Requests()) != 1 || len(rec.Attempts) != 1 || rec.Err == "" {
		t.Errorf("Stop: err %v, %d requests, %+v", err, len(m.Requests()), rec)
	}

	defer func() {
		if recover() == nil {
			t.Error("a check of other types did not panic")
		}
	}()
	classifier(m, ptool.WithCheck(func(context.Context, review, string) error { return nil }))
}

// TestCheckDistilled: the code's answer is checked too; one that fails is
// the code's error, not hidden.
func TestCheckDistilled(t *testing.T) {
	m := llmtest.New()
	d := ptool.Distill(func(_ context.Context, in review) (sentiment, error) {
		return sentiment{"negative", 0.9}, nil
	}, classifier(m, ptool.WithCheck(func(_ context.Context, in review, out sentiment) error {
		if strings.Contains(in.Text, "love") && out.Sentiment != "positive" {
			return errors.New("love is positive")
		}
		return nil
	})))
	if _, err := d.Call(context.Background(), review{Text: "I love it"}); err == nil || !strings.Contains(err.Error(), "fails its checks: love is positive") {
		t.Errorf("err = %v", err)
	}
	if got, err := d.Call(context.Background(), review{Text: "bad"}); err != nil || got.Sentiment != "negative" {
		t.Errorf("a passing answer: %+v, %v", got, err)
	}
	if s := d.Stats(); s.Failed != 1 || s.Code != 1 {
		t.Errorf("stats = %+v", s)
	}
}

// TestDeclarativeChecks: the checks of a ptools file, each kind, with a
// path into every item, and a message of the file's own.
func TestDeclarativeChecks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.json")
	os.WriteFile(file, []byte(`{"ptools": [{"name": "order", "doc": "Read the order.",
	  "input": {"type": "object", "properties": {"text": {"type": "string"}}},
	  "output": {"type": "object", "properties": {
	    "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}},
	    "currency": {"type": "string"}, "note": {"type": "string"}}},
	  "checks": [
	    {"path": "/items/*/sku", "pattern": "^[A-Z]{3}-[0-9]+$"},
	    {"path": "/items/*/qty", "min": 1, "max": 10},
	    {"path": "/currency", "enum": ["EUR", "USD"]},
	    {"path": "/note", "max_length": 10, "message": "keep the note short"},
	    {"path": "/items", "min_length": 1}
	  ]}]}`), 0o644)
	m := llmtest.New(
		llmtest.Text(`<answer>{"items": [{"sku": "ABC-1", "qty": 2}, {"sku": "abc", "qty": 0}], "currency": "GBP", "note": "a very long note indeed"}</answer>`),
		llmtest.Text(`<answer>{"items": [], "currency": "EUR"}</answer>`),
		llmtest.Text(`<answer>{"items": [{"sku": "ABC-1", "qty": 2}], "currency": "EUR"}</answer>`))
	ps, err := ptool.Load(file, ptool.WithModel(m))
	if err != nil {
		t.Fatal(err)
	}
	_, rec, err := ps[0].CallRecord(context.Background(), map[string]any{"text": "two ABC-1"})
	if err != nil || len(rec.Attempts) != 3 {
		t.Fatalf("err %v, record %+v", err, rec)
	}
	want := []string{
		`check: /items/1/sku: "abc" does not match ^[A-Z]{3}-[0-9]+$`,
		`check: /items/1/qty: 0 is below the minimum 1`,
		`check: /currency: "GBP" is not one of "EUR", "USD"`,
		`check: /note: keep the note short`,
	}
	if got := rec.Attempts[0].Problems; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("first attempt's problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := rec.Attempts[1].Problems; len(got) != 1 || got[0] != "check: /items: 0 items, fewer than 1" {
		t.Errorf("second attempt's problems: %q", got)
	}

	for name, check := range map[string]string{
		"nothing":    `{"path": "/a"}`,
		"bad path":   `{"path": "a", "min": 1}`,
		"bad regexp": `{"pattern": "("}`,
		"expr":       `{"expr": "output.a > 1"}`, // no language given
	} {
		os.WriteFile(file, []byte(`{"ptools": [{"name": "f", "output": {"type": "object"}, "checks": [`+check+`]}]}`), 0o644)
		if _, err := ptool.Load(file); err == nil || !strings.Contains(err.Error(), "check 1") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
