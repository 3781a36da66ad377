package trace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/ptkit/ptk"
)

// Filter selects runs. Zero fields select everything.
type Filter struct {
	Kind   Kind
	Name   string // a run's name: the ptool's, the workflow's; for agent runs, the conversation
	Tool   string // runs that called this tool
	Parent string // runs started by this run (a workflow's steps)
	Model  string
	Status Status
	Since  time.Time // started at or after
	Until  time.Time // started before
	// Text selects runs whose input, output, name or error contains it
	// (case-insensitive).
	Text string
	// Limit caps the runs returned (List's default 50); Offset skips the
	// newest ones, for pages.
	Limit, Offset int
}

func (s *Store) where(f Filter) (string, []any) {
	var conds []string
	var args []any
	add := func(c string, a ...any) { conds = append(conds, c); args = append(args, a...) }
	if f.Kind != "" {
		add("kind = ?", string(f.Kind))
	}
	if f.Name != "" {
		add("name = ?", f.Name)
	}
	if f.Parent != "" {
		add("parent_id = ?", f.Parent)
	}
	if f.Tool != "" {
		add("id IN (SELECT run_id FROM tool_calls WHERE tool = ?)", f.Tool)
	}
	if f.Model != "" {
		add("model = ?", f.Model)
	}
	if f.Status != "" {
		add("status = ?", string(f.Status))
	}
	if !f.Since.IsZero() {
		add("started_us >= ?", f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		add("started_us < ?", f.Until.UnixMicro())
	}
	if f.Text != "" {
		t := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(strings.ToLower(f.Text)) + "%"
		add(`(LOWER(input) LIKE ? ESCAPE '\' OR LOWER(output) LIKE ? ESCAPE '\' OR LOWER(name) LIKE ? ESCAPE '\' OR LOWER(error_message) LIKE ? ESCAPE '\')`, t, t, t, t)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

const runColumns = `id, parent_id, kind, name, model, mode, started_us, duration_us, status, error_code, error_message,
	prompt_tokens, completion_tokens, cost, iterations, tool_calls, input, output, heartbeat_us, provider`

func (s *Store) scanRun(sc scanner, r *Run, extra ...any) error {
	var started, dur, heartbeat int64
	var kind, status string
	err := s.scan(sc, append([]any{&r.ID, &r.ParentID, &kind, &r.Name, &r.Model, &r.Mode, &started, &dur, &status, &r.ErrorCode,
		&r.ErrorMessage, &r.Usage.PromptTokens, &r.Usage.CompletionTokens, &r.Cost, &r.Iterations, &r.NumToolCalls,
		&r.Input, &r.Output, &heartbeat, &r.Provider}, extra...)...)
	r.Kind, r.Status = Kind(kind), Status(status)
	r.StartedAt = time.UnixMicro(started)
	r.Duration = Millis(time.Duration(dur) * time.Microsecond)
	if r.Status == StatusRunning {
		// A running run lasts until now, unless its writer stopped
		// answering: then it is shown interrupted, as Open will mark it.
		now := time.Now()
		if hb := time.UnixMicro(heartbeat); now.Sub(hb) > StaleAfter {
			r.Status, r.ErrorCode = StatusInterrupted, "interrupted"
			r.ErrorMessage = "the process that ran it stopped answering"
			r.Duration = Millis(max(0, hb.Sub(r.StartedAt)))
		} else {
			r.Duration = Millis(now.Sub(r.StartedAt))
		}
	}
	return err
}

// List returns the runs f selects, newest first.
func (s *Store) List(ctx context.Context, f Filter) ([]Run, error) {
	where, args := s.where(f)
	if f.Limit <= 0 {
		f.Limit = 50
	}
	rows, err := s.db.QueryContext(ctx, s.q("SELECT "+runColumns+" FROM runs"+where+" ORDER BY started_us DESC, id DESC LIMIT ? OFFSET ?"),
		s.args(append(args, f.Limit, f.Offset))...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Run{}
	for rows.Next() {
		var r Run
		if err := s.scanRun(rows, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Count returns how many runs f selects (its Limit and Offset aside).
func (s *Store) Count(ctx context.Context, f Filter) (int, error) {
	where, args := s.where(f)
	var n int
	err := s.db.QueryRowContext(ctx, s.q("SELECT COUNT(*) FROM runs"+where), s.args(args)...).Scan(&n)
	return n, err
}

// Get returns the run of that id, or of the one id that starts with it,
// with everything it did; ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, id string) (*Record, error) {
	rec := &Record{}
	var detail string
	err := s.scanRun(s.db.QueryRowContext(ctx, s.q("SELECT "+runColumns+", detail FROM runs WHERE id = ?"), s.args([]any{id})...), &rec.Run, &detail)
	if errors.Is(err, sql.ErrNoRows) && len(id) >= 4 {
		var ids []string
		rows, qerr := s.db.QueryContext(ctx, s.q("SELECT id FROM runs WHERE id LIKE ? LIMIT 2"), s.args([]any{id + "%"})...)
		if qerr != nil {
			return nil, qerr
		}
		for rows.Next() {
			var x string
			s.scan(rows, &x)
			ids = append(ids, x)
		}
		rows.Close()
		if len(ids) == 1 {
			return s.Get(ctx, ids[0])
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if detail != "" {
		rec.Detail = json.RawMessage(detail)
	}
	rec.ModelCalls, rec.ToolCalls = []ModelCall{}, []ToolCall{}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT mode, prompt_tokens, completion_tokens, latency_us, cost, request_hash, text, calls, error,
		started_us, parent FROM model_calls WHERE run_id = ? ORDER BY seq`), s.args([]any{rec.ID})...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var mc ModelCall
		var lat, start int64
		var calls string
		if err := s.scan(rows, &mc.Mode, &mc.Usage.PromptTokens, &mc.Usage.CompletionTokens, &lat, &mc.Cost, &mc.RequestHash, &mc.Text, &calls, &mc.Error,
			&start, &mc.Parent); err != nil {
			rows.Close()
			return nil, err
		}
		mc.Latency = Millis(time.Duration(lat) * time.Microsecond)
		mc.Start = fromMicros(start)
		unjson(calls, &mc.Calls)
		rec.ModelCalls = append(rec.ModelCalls, mc)
	}
	rows.Close()
	rows, err = s.db.QueryContext(ctx, s.q(`SELECT iteration, call_id, tool, args, result, truncated, is_error, outcome, repairs, duration_us,
		started_us, parent, error_code FROM tool_calls WHERE run_id = ? ORDER BY seq`), s.args([]any{rec.ID})...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tc ToolCall
		var args, repairs string
		var trunc, iserr int
		var dur, start int64
		if err := s.scan(rows, &tc.Iteration, &tc.CallID, &tc.Tool, &args, &tc.Result, &trunc, &iserr, &tc.Outcome, &repairs, &dur,
			&start, &tc.Parent, &tc.ErrorCode); err != nil {
			rows.Close()
			return nil, err
		}
		tc.Args = rawJSON(args)
		tc.Truncated, tc.IsError = trunc != 0, iserr != 0
		unjson(repairs, &tc.Repairs)
		tc.Duration = Millis(time.Duration(dur) * time.Microsecond)
		tc.Start = fromMicros(start)
		rec.ToolCalls = append(rec.ToolCalls, tc)
	}
	rows.Close()
	if rec.PtoolCalls, err = s.ptoolCalls(ctx, "WHERE p.run_id = ? ORDER BY p.seq", -1, rec.ID); err != nil {
		return nil, err
	}
	if rec.Steps, err = s.steps(ctx, rec.ID); err != nil {
		return nil, err
	}
	labels, err := s.Labels(ctx, rec.ID)
	if err != nil {
		return nil, err
	}
	if len(labels) > 0 {
		rec.Labels = labels
	}
	return rec, nil
}

// steps returns a run's steps, nil when it has none.
func (s *Store) steps(ctx context.Context, run string) ([]Step, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT name, status, note, attrs, started_us, duration_us, parent FROM steps
		WHERE run_id = ? ORDER BY seq`), s.args([]any{run})...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Step
	for rows.Next() {
		var st Step
		var attrs string
		var start, dur int64
		if err := s.scan(rows, &st.Name, &st.Status, &st.Note, &attrs, &start, &dur, &st.Parent); err != nil {
			return nil, err
		}
		unjson(attrs, &st.Attrs)
		st.Start = fromMicros(start)
		st.Duration = Millis(time.Duration(dur) * time.Microsecond)
		out = append(out, st)
	}
	return out, rows.Err()
}

func (s *Store) ptoolCalls(ctx context.Context, where string, limit int, args ...any) ([]PtoolCall, error) {
	q := `SELECT p.ptool, p.input, p.output, p.attempts, p.repairs, p.source, p.fallback, p.is_error, p.duration_us,
		p.prompt_tokens, p.completion_tokens, p.cost, p.started_us, p.parent FROM ptool_calls p ` + where
	if limit >= 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q), s.args(args)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PtoolCall
	for rows.Next() {
		var pc PtoolCall
		var in, outp, attempts, repairs string
		var fb, iserr int
		var dur, pt, ct, start int64
		if err := s.scan(rows, &pc.Ptool, &in, &outp, &attempts, &repairs, &pc.Source, &fb, &iserr, &dur, &pt, &ct, &pc.Cost,
			&start, &pc.Parent); err != nil {
			return nil, err
		}
		pc.Input, pc.Output = rawJSON(in), rawJSON(outp)
		unjson(attempts, &pc.Attempts)
		unjson(repairs, &pc.Repairs)
		pc.Fallback, pc.IsError = fb != 0, iserr != 0
		pc.Duration = Millis(time.Duration(dur) * time.Microsecond)
		pc.Usage = ptk.Usage{PromptTokens: int(pt), CompletionTokens: int(ct)}
		pc.Start = fromMicros(start)
		out = append(out, pc)
	}
	return out, rows.Err()
}

// Examples returns up to n successful calls of a ptool, newest first: the
// few-shot examples of its prompt and what the distiller learns from. A
// call labelled bad, or whose run is, is left out.
func (s *Store) Examples(ctx context.Context, ptool string, n int) ([]PtoolCall, error) {
	return s.ptoolCalls(ctx, `JOIN runs ON runs.id = p.run_id WHERE p.ptool = ? AND p.is_error = 0`+notBad+`
		ORDER BY runs.started_us DESC`, n, ptool)
}

// fromMicros is microseconds since the epoch as a time, the zero time for 0.
func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us)
}

func rawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func unjson(s string, v any) {
	if s != "" {
		json.Unmarshal([]byte(s), v)
	}
}

// Prune deletes runs that started before before (unless it is zero) and
// then all but the newest keep runs (unless keep is 0), with what they
// did; it returns how many runs it deleted.
func (s *Store) Prune(ctx context.Context, before time.Time, keep int) (int, error) {
	if s.readOnly {
		return 0, ErrReadOnly
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var conds []string
	var args []any
	if !before.IsZero() {
		conds = append(conds, "started_us < ?")
		args = append(args, before.UnixMicro())
	}
	if keep > 0 {
		conds = append(conds, "id NOT IN (SELECT id FROM runs ORDER BY started_us DESC, id DESC LIMIT ?)")
		args = append(args, keep)
	}
	if len(conds) == 0 {
		return 0, nil
	}
	sel := "SELECT id FROM runs WHERE " + strings.Join(conds, " OR ")
	for _, t := range []string{"model_calls", "tool_calls", "ptool_calls", "steps", "labels"} {
		if _, err := tx.ExecContext(ctx, s.q("DELETE FROM "+t+" WHERE run_id IN ("+sel+")"), s.args(args)...); err != nil {
			return 0, err
		}
	}
	res, err := tx.ExecContext(ctx, s.q("DELETE FROM runs WHERE id IN ("+sel+")"), s.args(args)...)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), tx.Commit()
}

// Export writes the runs f selects (all of them when f.Limit is 0), oldest
// first, as JSON lines, one Record a line; it returns how many it wrote.
func (s *Store) Export(ctx context.Context, w io.Writer, f Filter) (int, error) {
	where, args := s.where(f)
	q := "SELECT id FROM runs" + where + " ORDER BY started_us, id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q), s.args(args)...)
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := s.scan(rows, &id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i, id := range ids {
		rec, err := s.Get(ctx, id)
		if err != nil {
			return i, err
		}
		if err := enc.Encode(rec); err != nil {
			return i, err
		}
	}
	return len(ids), nil
}
