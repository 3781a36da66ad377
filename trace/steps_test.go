package trace

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
)

// distillFixture is a distill run as ptk distill records it: two rounds,
// each with its checks as steps under it, and the model calls that wrote
// each candidate under its round.
func distillFixture(id string) *Record {
	return &Record{
		Run: Run{ID: id, Kind: KindDistill, Name: "route_ticket", Model: "qwen3:8b", Provider: "ollama", StartedAt: t0,
			Duration: ms(9000), Status: StatusOK, Usage: ptk.Usage{PromptTokens: 900, CompletionTokens: 300}, Cost: 0.01, Iterations: 2},
		ModelCalls: []ModelCall{
			{Mode: "patterns", Usage: ptk.Usage{PromptTokens: 300, CompletionTokens: 100}, Latency: ms(800), Span: Span{Start: t0}},
			{Mode: "code", Usage: ptk.Usage{PromptTokens: 300, CompletionTokens: 100}, Latency: ms(900), Span: Span{Start: t0.Add(time.Second), Parent: "step/0"}},
			{Mode: "code", Usage: ptk.Usage{PromptTokens: 300, CompletionTokens: 100}, Latency: ms(900), Span: Span{Start: t0.Add(5 * time.Second), Parent: "step/3"}},
		},
		ToolCalls: []ToolCall{},
		Steps: []Step{
			{Name: "round 1", Status: StepFailed, Note: "its tests fail", Attrs: map[string]any{"round": 1.0}, Duration: ms(4000), Span: Span{Start: t0.Add(time.Second)}},
			{Name: "compile", Status: StepOK, Duration: ms(2000), Span: Span{Start: t0.Add(2 * time.Second), Parent: "step/0"}},
			{Name: "tests", Status: StepFailed, Note: "2 tests failed", Duration: ms(1000), Span: Span{Start: t0.Add(4 * time.Second), Parent: "step/0"}},
			{Name: "round 2", Status: StepOK, Note: "accepted", Duration: ms(4000), Span: Span{Start: t0.Add(5 * time.Second)}},
			{Name: "sealed", Status: StepOK, Note: "12/14 held-out calls equal", Attrs: map[string]any{"total": 14.0, "correct": 12.0, "accepted": true},
				Duration: ms(500), Span: Span{Start: t0.Add(8 * time.Second), Parent: "step/3"}},
		},
	}
}

// TestSteps writes a run's steps, whole and as a live run's end, and reads
// them back with their parents, on SQLite and PostgreSQL; Prune takes them
// with their run.
func TestSteps(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		want := distillFixture("run-distill")
		if err := s.Write(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Get (-want +got):\n%s", diff)
		}

		// A live run: its row first, then the finished record with its
		// steps; writing the end again replaces them.
		w := NewWriter(s, testOut{t})
		live := distillFixture("run-live")
		w.Begin(live.Run)
		w.Finish(func() *Record { return live })
		if err := w.Close(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		w = NewWriter(s, testOut{t})
		again := distillFixture("run-live")
		again.Steps = again.Steps[:1]
		again.Steps[0].Note = "rewritten"
		w.Begin(again.Run)
		w.Finish(func() *Record { return again })
		w.Finish(func() *Record { return again }) // twice in one batch
		if err := w.Close(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		got, err = s.Get(ctx, "run-live")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Steps) != len(live.Steps) || got.Steps[0].Note != "rewritten" || got.Steps[4].Note != "12/14 held-out calls equal" {
			t.Errorf("a live run's steps after two ends: %+v", got.Steps)
		}
		if got.Provider != "ollama" {
			t.Errorf("a live run's provider = %q", got.Provider)
		}
		b, _ := json.Marshal(got)
		var back Record
		if err := json.Unmarshal(b, &back); err != nil || len(back.Steps) != 5 {
			t.Errorf("a record with steps through JSON: %v, %+v", err, back.Steps)
		}

		if n, err := s.Prune(ctx, time.Time{}, 1); err != nil || n != 1 {
			t.Fatalf("Prune = %d, %v", n, err)
		}
		var left int
		if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM steps").Scan(&left); err != nil || left != 5 {
			t.Errorf("steps left after pruning one of two runs: %d, %v", left, err)
		}
	})
}

// testOut is a Writer's error output that fails the test.
type testOut struct{ t *testing.T }

func (o testOut) Write(b []byte) (int, error) {
	o.t.Errorf("%s", b)
	return len(b), nil
}
