package trace

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
)

// TestLiveRun: a run begun is listed as running at once, its calls are
// there as they are appended, and Finish writes the finished run's row and
// the calls that were not appended, leaving those that were.
func TestLiveRun(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		w := NewWriter(s, nil)
		defer w.Close(0)
		id := NewID()
		start := time.Now()
		w.Begin(Run{ID: id, Kind: KindReAct, Name: "triage", Model: "m", Input: "why"})
		r := waitRun(t, s, id, func(r *Record) bool { return true })
		if r.Status != StatusRunning || r.Name != "triage" || r.Input != "why" {
			t.Fatalf("begun run = %+v", r.Run)
		}
		if l, err := s.List(ctx, Filter{Status: StatusRunning}); err != nil || len(l) != 1 || l[0].ID != id {
			t.Fatalf("running runs = %+v, %v", l, err)
		}
		w.Append(&Record{Run: Run{ID: id},
			ModelCalls: []ModelCall{{Text: "act", Usage: ptk.Usage{PromptTokens: 10}, Span: Span{Start: start}}},
			ToolCalls:  []ToolCall{{Tool: "classify", Args: json.RawMessage(`{}`), Outcome: OutcomeRan, Span: Span{Start: start}}},
		}, [3]int{})
		w.Append(&Record{Run: Run{ID: id},
			PtoolCalls: []PtoolCall{{Ptool: "classify", Input: json.RawMessage(`{"t":1}`), Output: json.RawMessage(`"a"`), Span: Span{Parent: SpanID(SpanTool, 0), Start: start}}},
			ModelCalls: []ModelCall{{Text: "attempt", Span: Span{Parent: SpanID(SpanPtool, 0)}}},
		}, [3]int{1, 1, 0})
		r = waitRun(t, s, id, func(r *Record) bool { return len(r.ModelCalls) == 2 })
		if r.Status != StatusRunning || len(r.ToolCalls) != 1 || len(r.PtoolCalls) != 1 {
			t.Fatalf("after Append: %+v", r)
		}
		if p := r.PtoolCalls[0]; p.Parent != "tool/0" || p.Start.UnixMicro() != start.UnixMicro() || r.ModelCalls[1].Parent != "ptool/0" {
			t.Errorf("spans = %+v, %+v", p.Span, r.ModelCalls[1].Span)
		}
		if r.Duration <= 0 {
			t.Errorf("a running run's duration is %v, want the time so far", r.Duration)
		}
		w.Finish(func() *Record {
			return &Record{Run: Run{ID: id, Kind: KindReAct, Name: "triage", Model: "m", Input: "why", Output: "because",
				StartedAt: start, Duration: Millis(time.Second), Usage: ptk.Usage{PromptTokens: 10}},
				ModelCalls: []ModelCall{{Text: "act", Usage: ptk.Usage{PromptTokens: 10}}, {Text: "attempt", Span: Span{Parent: "ptool/0"}}, {Text: "answer"}},
				ToolCalls:  []ToolCall{{Tool: "classify", Outcome: OutcomeRan}},
				PtoolCalls: []PtoolCall{{Ptool: "classify", Input: json.RawMessage(`{"t":1}`), Span: Span{Parent: "tool/0"}}}}
		})
		r = waitRun(t, s, id, func(r *Record) bool { return r.Status != StatusRunning })
		if r.Status != StatusOK || r.Output != "because" || len(r.ModelCalls) != 3 || r.ModelCalls[0].Text != "act" ||
			r.ModelCalls[0].Start.UnixMicro() != start.UnixMicro() || r.ModelCalls[2].Text != "answer" || time.Duration(r.Duration) != time.Second {
			t.Errorf("finished run = %+v", r)
		}
		var owner string
		s.db.QueryRow(s.q("SELECT owner FROM runs WHERE id = ?"), id).Scan(&owner)
		if owner != "" {
			t.Errorf("a finished run keeps its owner %q", owner)
		}
	})
}

// waitRun waits until the run is stored and ok says it is as wanted.
func waitRun(t *testing.T, s *Store, id string, ok func(*Record) bool) *Record {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := s.Get(context.Background(), id)
		if err == nil && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: %+v, %v", id, r, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKilledRun kills with SIGKILL a process in the middle of a run: the
// run was seen running, and the next Open marks it interrupted, keeping
// what it had done.
func TestKilledRun(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		cmd := helper(t, dsn, "begin", "PREFIX=killed-run")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() || sc.Text() != "begun" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("helper said %q", sc.Text())
		}
		if r, err := s.Get(ctx, "killed-run"); err != nil || r.Status != StatusRunning {
			t.Fatalf("while its process lives: %+v, %v", r, err)
		}
		// Another Open while it lives leaves it running.
		open(t, dsn).Close()
		if r, _ := s.Get(ctx, "killed-run"); r.Status != StatusRunning {
			t.Fatalf("Open while its process lives marked it %s", r.Status)
		}
		cmd.Process.Kill()
		cmd.Wait()
		s2 := open(t, dsn)
		r, err := s2.Get(ctx, "killed-run")
		if err != nil || r.Status != StatusInterrupted || !strings.Contains(r.ErrorMessage, "ended before the run did") ||
			len(r.ModelCalls) != 1 || r.ModelCalls[0].Text != "thinking" || len(r.ToolCalls) != 1 || r.ToolCalls[0].Tool != "read" {
			t.Fatalf("after the kill and an Open: %+v, %v", r, err)
		}
		if l, _ := s2.List(ctx, Filter{Status: StatusRunning}); len(l) != 0 {
			t.Errorf("still running: %+v", l)
		}
	})
}

// TestStaleRun: a running run of another host's process is taken for
// interrupted once its heartbeat is older than StaleAfter, by List at
// once and by Open in the store; a fresh one stays running.
func TestStaleRun(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		now := time.Now()
		for _, q := range []struct {
			id    string
			owner string
			hb    time.Time
		}{
			{"stale", "elsewhere/42/abcd", now.Add(-2 * StaleAfter)},
			{"fresh", "elsewhere/43/abcd", now},
			{"garbled", "not an owner", now.Add(-2 * StaleAfter)},
		} {
			if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO runs (id, kind, started_us, status, owner, heartbeat_us) VALUES (?, 'agent', ?, 'running', ?, ?)`),
				q.id, now.Add(-time.Hour).UnixMicro(), q.owner, q.hb.UnixMicro()); err != nil {
				t.Fatal(err)
			}
		}
		if r, _ := s.Get(ctx, "stale"); r.Status != StatusInterrupted || time.Duration(r.Duration) < 50*time.Minute {
			t.Errorf("a stale run reads as %s, %v", r.Status, r.Duration)
		}
		n, err := s.Reap(ctx)
		if err != nil || n != 2 {
			t.Errorf("Reap = %d, %v; want 2", n, err)
		}
		var status string
		for id, want := range map[string]string{"stale": "interrupted", "garbled": "interrupted", "fresh": "running"} {
			s.db.QueryRow(s.q("SELECT status FROM runs WHERE id = ?"), id).Scan(&status)
			if status != want {
				t.Errorf("%s: %s, want %s", id, status, want)
			}
		}
	})
}
