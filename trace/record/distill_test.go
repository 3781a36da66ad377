package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// TestDistillLive: a distillation recorded as it goes into a real store
// (a SQLite file, a PostgreSQL schema): the run is running from its start,
// with the patterns' model call, then each round (running until it ends)
// and each check under it as they end; its end is Distill's record of the
// report, under the same id. The sealed cases' inputs, answers and errors,
// which the report keeps, are not in the record, nor anywhere in the SQLite
// store's files, while the run goes on or after.
func TestDistillLive(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { distillLive(t, filepath.Join(t.TempDir(), "traces.db")) })
	t.Run("postgres", func(t *testing.T) { distillLive(t, benchPG(t)) })
}

func distillLive(t *testing.T, db string) {
	ctx := context.Background()
	s, err := trace.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := trace.NewWriter(s, nil)
	at := time.Now()
	rec := record.NewDistill(w, trace.Run{Name: "route_ticket", Model: "m", Provider: "ollama", Input: "30 training, 12 validation, 14 sealed examples"})
	// get waits for the run's steps to be want and ok to hold of it (Get
	// reads the run's row, calls and steps one after the other: a write
	// may come between)
	get := func(want string, ok func(*trace.Record) bool) *trace.Record {
		t.Helper()
		var r *trace.Record
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if r, err = s.Get(ctx, rec.ID()); err == nil && steps(r) == want && ok(r) {
				return r
			}
		}
		t.Fatalf("the run in the store: %v, steps %q, want %q; %+v", err, steps(r), want, r)
		return nil
	}
	secret := json.RawMessage(`{"subject":"SEALED-INPUT-7f3a"}`)
	patterns := []distill.ModelCall{{Start: at, Latency: time.Second, Usage: ptk.Usage{PromptTokens: 100, CompletionTokens: 10}}}
	code := []distill.ModelCall{{Start: at.Add(time.Second), Latency: 2 * time.Second, Usage: ptk.Usage{PromptTokens: 300, CompletionTokens: 50}, Cost: 0.01}}
	checks := []distill.Check{
		{Name: "compile", Start: at.Add(3 * time.Second), Duration: time.Second, Passed: true, Note: "go vet and go test -c passed"},
		{Name: "sealed", Start: at.Add(5 * time.Second), Duration: time.Second, Passed: false, Note: "10/14 held-out calls equal, 2 wrong, 2 left to the model", Figures: map[string]any{"total": 14}},
	}

	rec.Observe(distill.Event{Kind: distill.EventCall, Calls: patterns})
	rec.Observe(distill.Event{Kind: distill.EventRound, Round: 1, Start: at.Add(time.Second)})
	get("round 1::", func(r *trace.Record) bool {
		return r.Status == trace.StatusRunning && r.Kind == trace.KindDistill && r.Provider == "ollama" && len(r.ModelCalls) == 1 && r.Steps[0].Note == "running"
	})
	rec.Observe(distill.Event{Kind: distill.EventCall, Round: 1, Calls: code})
	rec.Observe(distill.Event{Kind: distill.EventCheck, Round: 1, Check: &checks[0]})
	get("round 1:: compile:ok:step/0", func(r *trace.Record) bool {
		return r.Status == trace.StatusRunning && len(r.ModelCalls) == 2 && r.ModelCalls[1].Parent == "step/0" && r.Usage.PromptTokens == 400
	})
	rec.Observe(distill.Event{Kind: distill.EventCheck, Round: 1, Check: &checks[1]})
	rec.Observe(distill.Event{Kind: distill.EventRoundEnd, Round: 1, Duration: 5 * time.Second, Rejected: "wrong on 14.3% of the sealed inputs"})
	get("round 1:failed: compile:ok:step/0 sealed:failed:step/0", func(r *trace.Record) bool {
		return r.Status == trace.StatusRunning && r.Steps[0].Note == "rejected: wrong on 14.3% of the sealed inputs"
	})

	rep := &distill.Report{Ptool: "route_ticket", Train: 30, Validation: 12, Sealed: 14, PatternCalls: patterns,
		Rounds: []distill.Round{{N: 1, Start: at.Add(time.Second), Duration: 5 * time.Second, Rejected: "wrong on 14.3% of the sealed inputs",
			Calls: code, Checks: checks,
			Sealed: &distill.Score{Total: 14, Correct: 10, Wrong: 2, Abstained: 2, Coverage: 12.0 / 14, WrongRate: 2.0 / 14,
				WrongCases: []distill.Case{{Input: secret, Want: json.RawMessage(`"SEALED-WANT-7f3a"`), Got: json.RawMessage(`"x"`), Verdict: distill.Wrong, Error: "SEALED-ERR-7f3a"}}}}}}
	rec.Done(rep, distill.ErrRejected)
	rec.Observe(distill.Event{Kind: distill.EventRound, Round: 2}) // after the end: nothing
	if err := w.Close(0); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, rec.ID())
	if err != nil {
		t.Fatal(err)
	}
	whole := record.Distill(rep, "m", "ollama", at, distill.ErrRejected)
	if r.Status != trace.StatusError || r.ErrorCode != "REJECTED" || steps(r) != steps(whole) || len(r.ModelCalls) != len(whole.ModelCalls) ||
		r.Usage != whole.Usage || r.Cost != whole.Cost || r.Output != whole.Output || r.Iterations != 1 {
		t.Errorf("the finished run: %+v\nwant as Distill's: %+v", r, whole)
	}
	if len(rep.Rounds[0].Sealed.WrongCases) != 1 {
		t.Error("the user's report lost its sealed cases")
	}
	b, _ := json.Marshal(r)
	if bytes.Contains(b, []byte("7f3a")) {
		t.Errorf("the record holds a sealed case: %s", b)
	}
	s.Close()
	files, _ := filepath.Glob(db + "*") // none for PostgreSQL
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, leak := range []string{"SEALED-INPUT-7f3a", "SEALED-WANT-7f3a", "SEALED-ERR-7f3a"} {
			if bytes.Contains(b, []byte(leak)) {
				t.Errorf("%s holds the sealed %s", filepath.Base(f), leak)
			}
		}
	}
}

// steps is a run's steps as "name:status:parent".
func steps(r *trace.Record) string {
	if r == nil {
		return ""
	}
	var out []string
	for _, st := range r.Steps {
		out = append(out, st.Name+":"+st.Status+":"+st.Parent)
	}
	return strings.Join(out, " ")
}

// countingLive is a store's Writer that counts the run ends and progress
// records it is given.
type countingLive struct {
	*trace.Writer
	mu                   sync.Mutex
	finishes, progresses int
}

func (c *countingLive) Finish(build func() *trace.Record) {
	c.mu.Lock()
	c.finishes++
	c.mu.Unlock()
	c.Writer.Finish(build)
}

func (c *countingLive) Progress(build func() *trace.Record) {
	c.mu.Lock()
	c.progresses++
	c.mu.Unlock()
	c.Writer.Progress(build)
}

// TestDistillCheckpointKeepsRunning: on a store that writes a run's
// progress, a distillation's checkpoints never end its run (its row never
// reads finished before it is): the run ends once, at Done.
func TestDistillCheckpointKeepsRunning(t *testing.T) {
	s, w := store(t)
	c := &countingLive{Writer: w}
	rec := record.NewDistill(c, trace.Run{Name: "route_ticket", Model: "m"})
	at := time.Now()
	rec.Observe(distill.Event{Kind: distill.EventCall, Calls: []distill.ModelCall{{Start: at, Latency: time.Second}}})
	rec.Observe(distill.Event{Kind: distill.EventRound, Round: 1, Start: at})
	rec.Observe(distill.Event{Kind: distill.EventCheck, Round: 1, Check: &distill.Check{Name: "compile", Start: at, Passed: true}})
	rec.Observe(distill.Event{Kind: distill.EventRoundEnd, Round: 1, Duration: time.Second})
	c.mu.Lock()
	finishes, progresses := c.finishes, c.progresses
	c.mu.Unlock()
	if finishes != 0 || progresses < 3 {
		t.Fatalf("while the run went on: %d ends and %d progress records, want none and one a checkpoint", finishes, progresses)
	}
	rec.Done(nil, errors.New("stopped"))
	if err := w.Close(0); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(context.Background(), rec.ID())
	if err != nil || r.Status != trace.StatusError || c.finishes != 1 {
		t.Fatalf("the finished run: %+v, %v; %d ends", r, err, c.finishes)
	}
}
