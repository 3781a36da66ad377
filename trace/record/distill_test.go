package record_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/distill"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// TestDistillRecordLeaksNoSealedInput: the record of a distillation whose
// sealed gate rejected a candidate, with the wrong sealed cases in its
// report, holds none of them (not in its detail, its output, a step's note
// or figures), while the report the user gets keeps them; its rounds,
// checks and the model calls that wrote each candidate form the span tree.
func TestDistillRecordLeaksNoSealedInput(t *testing.T) {
	at := time.Now().Add(-time.Minute)
	secret := json.RawMessage(`{"subject":"SEALED-INPUT-7f3a"}`)
	sealed := &distill.Score{Total: 14, Correct: 10, Wrong: 2, Abstained: 2, Coverage: 12.0 / 14, WrongRate: 2.0 / 14,
		WrongCases: []distill.Case{{Input: secret, Want: json.RawMessage(`"SEALED-WANT-7f3a"`), Got: json.RawMessage(`"x"`), Verdict: distill.Wrong, Error: "SEALED-ERR-7f3a"}}}
	rep := &distill.Report{Ptool: "route_ticket", Train: 30, Validation: 12, Sealed: 14,
		PatternCalls: []distill.ModelCall{{Start: at, Latency: time.Second, Usage: ptk.Usage{PromptTokens: 100, CompletionTokens: 10}}},
		Rounds: []distill.Round{
			{N: 1, Start: at.Add(time.Second), Duration: 5 * time.Second, Rejected: "wrong on 14.3% of the sealed inputs",
				Calls: []distill.ModelCall{{Start: at.Add(time.Second), Latency: 2 * time.Second, Usage: ptk.Usage{PromptTokens: 300, CompletionTokens: 50}, Cost: 0.01}},
				Checks: []distill.Check{
					{Name: "compile", Start: at.Add(3 * time.Second), Duration: time.Second, Passed: true},
					{Name: "sealed", Start: at.Add(5 * time.Second), Duration: time.Second, Passed: false, Note: "10/14 held-out calls equal", Figures: map[string]any{"total": 14}},
				},
				Sealed: sealed},
		}}
	rec := record.Distill(rep, "m", "ollama", at, distill.ErrRejected)
	b, _ := json.Marshal(rec)
	for _, leak := range []string{"SEALED-INPUT-7f3a", "SEALED-WANT-7f3a", "SEALED-ERR-7f3a"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("the record holds the sealed %s: %s", leak, b)
		}
	}
	if len(rep.Rounds[0].Sealed.WrongCases) != 1 {
		t.Error("the user's report lost its sealed cases")
	}
	if rec.Kind != trace.KindDistill || rec.Status != trace.StatusError || rec.ErrorCode != "REJECTED" || rec.Provider != "ollama" ||
		rec.Usage.PromptTokens != 400 || rec.Cost != 0.01 {
		t.Errorf("the run: %+v", rec.Run)
	}
	want := []struct{ name, status, parent string }{{"round 1", trace.StepFailed, ""}, {"compile", trace.StepOK, "step/0"}, {"sealed", trace.StepFailed, "step/0"}}
	if len(rec.Steps) != len(want) {
		t.Fatalf("steps: %+v", rec.Steps)
	}
	for i, w := range want {
		if st := rec.Steps[i]; st.Name != w.name || st.Status != w.status || st.Parent != w.parent {
			t.Errorf("step %d: %+v, want %+v", i, st, w)
		}
	}
	if len(rec.ModelCalls) != 2 || rec.ModelCalls[0].Parent != "" || rec.ModelCalls[1].Parent != "step/0" || rec.ModelCalls[1].Usage.PromptTokens != 300 {
		t.Errorf("model calls: %+v", rec.ModelCalls)
	}
}

// provided is a scripted model that names its provider.
type provided struct{ llm.Model }

func (provided) ProviderName() string { return "anthropic" }

// TestPtoolRunProvider: a ptool call's run keeps the provider of the
// model that answered it, found through the ptool's model.
func TestPtoolRunProvider(t *testing.T) {
	var got *trace.Record
	p := ptool.New[struct {
		Text string `json:"text"`
	}, string]("echo", "Say the text.", ptool.WithModel(provided{llmtest.New(llmtest.Text(`<answer>"hi"</answer>`))}),
		ptool.WithObserver(func(r *ptool.Record) { got = record.PtoolRun(r, "") }))
	if _, err := p.Call(context.Background(), struct {
		Text string `json:"text"`
	}{"hi"}); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Provider != "anthropic" {
		t.Errorf("the ptool run: %+v", got)
	}
}
