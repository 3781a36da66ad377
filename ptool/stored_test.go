package ptool_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace"
)

var _ ptool.ExampleStore = (*trace.Store)(nil)

type fakeStore struct {
	examples []ptool.Example
	err      error
	reads    int
}

func (s *fakeStore) PtoolExamples(_ context.Context, name string, n int) ([]ptool.Example, error) {
	s.reads++
	if s.err != nil {
		return nil, s.err
	}
	return s.examples[:min(n, len(s.examples))], nil
}

func ex(in, out string) ptool.Example {
	return ptool.Example{Input: json.RawMessage(in), Output: json.RawMessage(out)}
}

// system returns the system prompt of the model's i-th request.
func system(m *llmtest.Script, i int) string { return m.Requests()[i].Messages[0].Content }

func TestStoredExamples(t *testing.T) {
	store := &fakeStore{examples: []ptool.Example{
		ex(`{"text": "Broke after a day."}`, `{"sentiment": "negative", "confidence": 0.9}`), // WithExample's input
		ex(`{"text": "Meh."}`, `{"sentiment": "bored", "confidence": 0.5}`),                  // does not fit
		ex(`{"text": "Fine."}`, `{"sentiment": "neutral", "confidence": 0.6}`),
		ex(`{"text": "Love it."}`, `{"sentiment": "positive", "confidence": 0.9}`),
		ex(`{"text": "Awful."}`, `{"sentiment": "negative", "confidence": 1}`),
	}}
	answer := llmtest.Text(`<answer>{"sentiment": "positive", "confidence": 0.9}</answer>`)
	m := llmtest.New(answer, answer, answer)
	p := classifier(m, ptool.WithExample(review{"Broke after a day."}, sentiment{"negative", 0.95}), ptool.WithStoredExamples(store, 2))
	for _, text := range []string{"Great!", "Fine."} {
		if _, err := p.Call(context.Background(), review{Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	first, second := system(m, 0), system(m, 1)
	for _, want := range []string{`Input: {"text":"Broke after a day."}`, `Input: {"text":"Fine."}`, `Input: {"text":"Love it."}`} {
		if !strings.Contains(first, want) {
			t.Errorf("the prompt does not show %s:\n%s", want, first)
		}
	}
	if strings.Contains(first, "Meh.") || strings.Contains(first, "Awful.") || strings.Count(first, "Broke after a day.") != 1 {
		t.Errorf("the prompt shows an example it should not:\n%s", first)
	}
	if strings.Index(first, "Broke after a day.") > strings.Index(first, "Fine.") {
		t.Error("the stored examples come before WithExample's")
	}
	// a call's own input is never shown with its answer: the next one is
	if strings.Contains(second, `Input: {"text":"Fine."}`) || !strings.Contains(second, `Input: {"text":"Awful."}`) {
		t.Errorf("the call of Fine. is shown:\n%s", second)
	}
	if store.reads != 1 {
		t.Errorf("the store was read %d times", store.reads)
	}
	if p.Spec().Examples[0].Output == nil || len(p.Spec().Examples) != 1 {
		t.Errorf("Spec() changed: %+v", p.Spec().Examples)
	}

	// a store that fails: the call goes on without; the next tries again
	bad := &fakeStore{err: errors.New("locked")}
	m = llmtest.New(answer, answer)
	q := classifier(m, ptool.WithStoredExamples(bad, 2))
	for range 2 {
		if _, err := q.Call(context.Background(), review{Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if bad.reads != 2 || strings.Contains(system(m, 0), "Examples:") {
		t.Errorf("%d reads", bad.reads)
	}
}

// TestStoredExamplesFromTraceStore: the calls recorded in a SQLite trace
// store are the examples of the next calls; failed calls are not.
func TestStoredExamplesFromTraceStore(t *testing.T) {
	ctx := context.Background()
	s, err := trace.Open(ctx, filepath.Join(t.TempDir(), "traces.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, c := range []struct {
		in, out string
		err     bool
	}{{`{"text":"Love it."}`, `{"sentiment":"positive","confidence":0.9}`, false}, {`{"text":"Broken."}`, ``, true}} {
		pc := trace.PtoolCall{Ptool: "classify_sentiment", Input: json.RawMessage(c.in), Output: json.RawMessage(c.out), Source: "model", IsError: c.err}
		if c.out == "" {
			pc.Output = nil
		}
		if err := s.Write(ctx, &trace.Record{Run: trace.Run{ID: trace.NewID(), Kind: trace.KindPtool, Name: "classify_sentiment",
			StartedAt: time.Now().Add(time.Duration(i) * time.Second), Status: trace.StatusOK}, PtoolCalls: []trace.PtoolCall{pc}}); err != nil {
			t.Fatal(err)
		}
	}
	m := llmtest.New(llmtest.Text(`<answer>{"sentiment": "positive", "confidence": 0.8}</answer>`))
	if _, err := classifier(m, ptool.WithStoredExamples(s, 3)).Call(ctx, review{Text: "Great"}); err != nil {
		t.Fatal(err)
	}
	if sys := system(m, 0); !strings.Contains(sys, `Input: {"text":"Love it."}`) || strings.Contains(sys, "Broken.") {
		t.Errorf("the prompt:\n%s", sys)
	}
}
