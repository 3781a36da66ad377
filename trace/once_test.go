package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// countWrites makes the database note every row inserted into or updated in
// the calls tables, and refuse (as it would a value it cannot hold) a call
// whose text, tool or ptool is "refuse me"; writes returns the notes as
// "table seq" → times.
func countWrites(t *testing.T, s *Store) (writes func(run string) map[string]int) {
	t.Helper()
	ctx := context.Background()
	stmts := []string{"CREATE TABLE call_writes (tbl TEXT NOT NULL, run_id TEXT NOT NULL, seq INTEGER NOT NULL)"}
	refuse := map[string]string{"model_calls": "text", "tool_calls": "tool", "ptool_calls": "ptool"}
	for _, table := range []string{"model_calls", "tool_calls", "ptool_calls"} {
		if s.pg {
			stmts = append(stmts,
				`CREATE FUNCTION note_`+table+`() RETURNS trigger AS $$ BEGIN
					IF NEW.`+refuse[table]+` = 'refuse me' THEN RAISE EXCEPTION 'refused' USING ERRCODE = 'check_violation'; END IF;
					INSERT INTO call_writes VALUES ('`+table+`', NEW.run_id, NEW.seq); RETURN NEW; END $$ LANGUAGE plpgsql`,
				`CREATE TRIGGER note_`+table+` AFTER INSERT OR UPDATE ON `+table+` FOR EACH ROW EXECUTE FUNCTION note_`+table+`()`)
			continue
		}
		for _, op := range []string{"INSERT", "UPDATE"} {
			stmts = append(stmts, `CREATE TRIGGER note_`+table+`_`+op+` AFTER `+op+` ON `+table+` BEGIN
				SELECT RAISE(ABORT, 'refused') WHERE NEW.`+refuse[table]+` = 'refuse me';
				INSERT INTO call_writes VALUES ('`+table+`', NEW.run_id, NEW.seq); END`)
		}
	}
	for _, q := range stmts {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return func(run string) map[string]int {
		t.Helper()
		rows, err := s.db.QueryContext(ctx, s.q("SELECT tbl, seq, COUNT(*) FROM call_writes WHERE run_id = ? GROUP BY tbl, seq"), run)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]int{}
		for rows.Next() {
			var table string
			var seq, n int
			if err := rows.Scan(&table, &seq, &n); err != nil {
				t.Fatal(err)
			}
			got[fmt.Sprintf("%s %d", strings.TrimSuffix(table, "_calls"), seq)] = n
		}
		return got
	}
}

// liveCalls is a record of run id holding calls numbered from the seqs in
// from, n of each kind, their text marked with what.
func liveCalls(id string, from [3]int, n [3]int, what string) *Record {
	r := &Record{Run: Run{ID: id}}
	for i := range n[0] {
		r.ModelCalls = append(r.ModelCalls, ModelCall{Text: fmt.Sprintf("model %d %s", from[0]+i, what)})
	}
	for i := range n[1] {
		r.ToolCalls = append(r.ToolCalls, ToolCall{Tool: "read", Args: json.RawMessage(`{}`), Result: fmt.Sprintf("tool %d %s", from[1]+i, what)})
	}
	for i := range n[2] {
		r.PtoolCalls = append(r.PtoolCalls, PtoolCall{Ptool: "classify", Input: json.RawMessage(`{}`), Output: json.RawMessage(fmt.Sprintf(`"ptool %d %s"`, from[2]+i, what))})
	}
	return r
}

// finished is the finished record of run id: n calls of each kind, those
// before the seqs in appended marked "again" (as the recorder has them
// still), the rest "finish".
func finished(id string, appended, n [3]int) *Record {
	again := liveCalls(id, [3]int{}, appended, "again")
	rest := liveCalls(id, appended, [3]int{n[0] - appended[0], n[1] - appended[1], n[2] - appended[2]}, "finish")
	r := &Record{Run: Run{ID: id, Kind: KindAgent, Name: "once", Output: "done", Duration: Millis(time.Second)},
		ModelCalls: append(again.ModelCalls, rest.ModelCalls...), ToolCalls: append(again.ToolCalls, rest.ToolCalls...),
		PtoolCalls: append(again.PtoolCalls, rest.PtoolCalls...)}
	return r
}

// TestLiveWritesEachCallOnce: a live run's calls are each written once —
// by Append as they finish, the rest by Finish — whether they reach the
// store in several transactions or in one, and a run Finish alone writes is
// whole; a call whose Append was lost is written by Finish; a Finish the
// database refuses costs only its own run. The database itself counts the
// rows written, on SQLite and PostgreSQL.
func TestLiveWritesEachCallOnce(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		writes := countWrites(t, s)
		w := NewWriter(s, nil)
		defer w.Close(0)
		stored := func(id string, n [3]int) *Record {
			t.Helper()
			return waitRun(t, s, id, func(r *Record) bool {
				return len(r.ModelCalls) == n[0] && len(r.ToolCalls) == n[1] && len(r.PtoolCalls) == n[2]
			})
		}
		once := func(id string, n [3]int, twice ...string) {
			t.Helper()
			want := map[string]int{}
			for k, kind := range []string{"model", "tool", "ptool"} {
				for seq := range n[k] {
					want[fmt.Sprintf("%s %d", kind, seq)] = 1
				}
			}
			for _, c := range twice {
				want[c] = 2
			}
			if got := writes(id); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("run %s: rows written %v, want %v", id, got, want)
			}
		}
		texts := func(r *Record) string {
			var b []string
			for _, m := range r.ModelCalls {
				b = append(b, m.Text)
			}
			for _, c := range r.ToolCalls {
				b = append(b, c.Result)
			}
			for _, p := range r.PtoolCalls {
				b = append(b, string(p.Output))
			}
			return strings.Join(b, "; ")
		}

		// Appends in transactions of their own, then Finish.
		w.Begin(Run{ID: "apart", Kind: KindAgent})
		w.Append(liveCalls("apart", [3]int{}, [3]int{1, 1, 0}, "live"), [3]int{})
		stored("apart", [3]int{1, 1, 0})
		w.Append(liveCalls("apart", [3]int{1, 1, 0}, [3]int{1, 0, 1}, "live"), [3]int{1, 1, 0})
		stored("apart", [3]int{2, 1, 1})
		w.Finish(func() *Record { return finished("apart", [3]int{2, 1, 1}, [3]int{3, 2, 1}) })
		r := waitRun(t, s, "apart", func(r *Record) bool { return r.Status == StatusOK })
		if got, want := texts(r), "model 0 live; model 1 live; model 2 finish; tool 0 live; tool 1 finish; \"ptool 0 live\""; got != want {
			t.Errorf("calls: %s\nwant %s", got, want)
		}
		once("apart", [3]int{3, 2, 1})

		// Begin, Appends and Finish in one transaction.
		w.Begin(Run{ID: "together", Kind: KindAgent})
		w.Append(liveCalls("together", [3]int{}, [3]int{1, 1, 0}, "live"), [3]int{})
		w.Append(liveCalls("together", [3]int{1, 1, 0}, [3]int{1, 1, 1}, "live"), [3]int{1, 1, 0})
		w.Finish(func() *Record { return finished("together", [3]int{2, 2, 1}, [3]int{3, 2, 1}) })
		r = waitRun(t, s, "together", func(r *Record) bool { return r.Status == StatusOK })
		if got, want := texts(r), "model 0 live; model 1 live; model 2 finish; tool 0 live; tool 1 live; \"ptool 0 live\""; got != want {
			t.Errorf("calls: %s\nwant %s", got, want)
		}
		once("together", [3]int{3, 2, 1})

		// Finish of a run that was not begun writes it whole.
		w.Finish(func() *Record { return finished("unbegun", [3]int{}, [3]int{2, 2, 1}) })
		r = waitRun(t, s, "unbegun", func(r *Record) bool { return r.Status == StatusOK })
		if got, want := texts(r), "model 0 finish; model 1 finish; tool 0 finish; tool 1 finish; \"ptool 0 finish\""; got != want {
			t.Errorf("calls: %s\nwant %s", got, want)
		}
		once("unbegun", [3]int{2, 2, 1})

		// An Append the database refuses is lost; Finish writes the calls
		// from it on (the one after it, written already, again).
		_, failed0, _ := w.Counts()
		w.Begin(Run{ID: "gap", Kind: KindAgent})
		w.Append(liveCalls("gap", [3]int{}, [3]int{1, 0, 0}, "live"), [3]int{})
		stored("gap", [3]int{1, 0, 0})
		lost := liveCalls("gap", [3]int{1, 0, 0}, [3]int{1, 0, 0}, "")
		lost.ModelCalls[0].Text = "refuse me"
		w.Append(lost, [3]int{1, 0, 0})
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, failed, _ := w.Counts(); failed == failed0+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the refused Append was not refused")
			}
		}
		w.Append(liveCalls("gap", [3]int{2, 0, 0}, [3]int{1, 0, 0}, "live"), [3]int{2, 0, 0})
		stored("gap", [3]int{2, 0, 0})
		w.Finish(func() *Record { return finished("gap", [3]int{1, 0, 0}, [3]int{4, 0, 0}) })
		r = waitRun(t, s, "gap", func(r *Record) bool { return r.Status == StatusOK })
		if got, want := texts(r), "model 0 live; model 1 finish; model 2 finish; model 3 finish"; got != want {
			t.Errorf("calls: %s\nwant %s", got, want)
		}
		once("gap", [3]int{4, 0, 0}, "model 2")

		// A batch of Finishes, one of which the database refuses: only that
		// run's finish is lost (its row and appended calls stay); the others
		// are written, each call once.
		w.Begin(Run{ID: "refused", Kind: KindAgent})
		w.Append(liveCalls("refused", [3]int{}, [3]int{1, 0, 0}, "live"), [3]int{})
		stored("refused", [3]int{1, 0, 0})
		w.Begin(Run{ID: "neighbour", Kind: KindAgent})
		w.Append(liveCalls("neighbour", [3]int{}, [3]int{1, 0, 0}, "live"), [3]int{})
		w.Finish(func() *Record {
			r := finished("refused", [3]int{1, 0, 0}, [3]int{2, 0, 0})
			r.ModelCalls[1].Text = "refuse me"
			return r
		})
		w.Finish(func() *Record { return finished("neighbour", [3]int{1, 0, 0}, [3]int{2, 1, 0}) })
		r = waitRun(t, s, "neighbour", func(r *Record) bool { return r.Status == StatusOK })
		if got, want := texts(r), "model 0 live; model 1 finish; tool 0 finish"; got != want {
			t.Errorf("calls: %s\nwant %s", got, want)
		}
		once("neighbour", [3]int{2, 1, 0})
		if r, err := s.Get(ctx, "refused"); err != nil || r.Status != StatusRunning || texts(r) != "model 0 live" {
			t.Errorf("the refused run: %+v, %v", r, err)
		}
		once("refused", [3]int{1, 0, 0})
		if err := w.Close(0); err != nil {
			t.Fatal(err)
		}
		if len(w.appended) != 0 {
			t.Errorf("the Writer still counts the calls of finished runs: %v", w.appended)
		}
	})
}
