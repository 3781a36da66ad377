package trace

import (
	"testing"
	"time"

	"github.com/ptkit/ptk"
)

// TestProgress: a run's record so far is written with the run still
// running — its owner and heartbeat kept, its figures and steps so far, the
// calls Append did not store — and Finish then ends it as ever, its steps
// replacing those so far.
func TestProgress(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		w := NewWriter(s, nil)
		defer w.Close(0)
		id := NewID()
		start := time.Now()
		run := Run{ID: id, Kind: KindDistill, Name: "classify", Model: "m", StartedAt: start}
		w.Begin(run)
		w.Append(&Record{Run: Run{ID: id}, ModelCalls: []ModelCall{{Text: "first"}}}, [3]int{})
		soFar := run
		soFar.Usage, soFar.Duration = ptk.Usage{PromptTokens: 30, CompletionTokens: 4}, Millis(1500*time.Millisecond)
		w.Progress(func() *Record {
			return &Record{Run: soFar, ModelCalls: []ModelCall{{Text: "first"}, {Text: "second"}},
				Steps: []Step{{Name: "round 0", Note: "running", Span: Span{Start: start}}}}
		})
		r := waitRun(t, s, id, func(r *Record) bool { return len(r.Steps) == 1 })
		if r.Status != StatusRunning || r.Usage.PromptTokens != 30 || len(r.ModelCalls) != 2 ||
			r.ModelCalls[0].Text != "first" || r.ModelCalls[1].Text != "second" || r.Steps[0].Note != "running" {
			t.Fatalf("run in progress = %+v", r)
		}
		var owner string
		var hb int64
		s.db.QueryRow(s.q("SELECT owner, heartbeat_us FROM runs WHERE id = ?"), id).Scan(&owner, &hb)
		if owner != w.owner || hb == 0 {
			t.Errorf("a run in progress has owner %q and heartbeat %d, want its writer's and a heartbeat", owner, hb)
		}
		// A call appended after the progress takes the next seq.
		w.Append(&Record{Run: Run{ID: id}, ModelCalls: []ModelCall{{Text: "third"}}}, [3]int{2, 0, 0})
		w.Finish(func() *Record {
			done := soFar
			done.Duration, done.Output = Millis(2*time.Second), "done"
			return &Record{Run: done, ModelCalls: []ModelCall{{Text: "first"}, {Text: "second"}, {Text: "third"}},
				Steps: []Step{{Name: "round 0", Status: StepOK, Note: "accepted", Span: Span{Start: start}}, {Name: "round 1", Status: StepFailed, Note: "rejected"}}}
		})
		r = waitRun(t, s, id, func(r *Record) bool { return r.Status != StatusRunning })
		if r.Status != StatusOK || r.Output != "done" || len(r.ModelCalls) != 3 || r.ModelCalls[2].Text != "third" ||
			len(r.Steps) != 2 || r.Steps[0].Note != "accepted" || r.Steps[1].Status != StepFailed {
			t.Fatalf("finished run = %+v", r)
		}
		if written, failed, dropped := w.Counts(); failed+dropped != 0 || written != 5 {
			t.Errorf("written %d, failed %d, dropped %d", written, failed, dropped)
		}
	})
}
