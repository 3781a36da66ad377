package trace

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/ptkit/ptk"
)

// Stat sums the calls of one thing: runs of a kind and name, a tool, a
// model, a ptool.
type Stat struct {
	Kind        Kind    `json:"kind,omitempty"`
	Name        string  `json:"name"`
	Calls       int     `json:"calls"`
	Errors      int     `json:"errors"`
	SuccessRate float64 `json:"success_rate"`
	// P50 and P95 are the median and 95th percentile of the durations
	// (runs, tool calls) or latencies (a model's calls).
	P50   Millis    `json:"p50_ms"`
	P95   Millis    `json:"p95_ms"`
	Usage ptk.Usage `json:"usage"`
	Cost  float64   `json:"cost"`
	// Code counts the calls of a distilled function its code answered,
	// CodeErrors those where the code failed (its error, its panic, an
	// answer that does not fit), Fallbacks those where the code was unsure
	// and the model answered.
	Code         int     `json:"code,omitempty"`
	CodeErrors   int     `json:"code_errors,omitempty"`
	Fallbacks    int     `json:"fallbacks,omitempty"`
	FallbackRate float64 `json:"fallback_rate,omitempty"`
}

// Stats are the sums Stats returns, each list by calls, most first.
type Stats struct {
	Runs   []Stat `json:"runs"`   // by kind and name
	Tools  []Stat `json:"tools"`  // by tool
	Models []Stat `json:"models"` // by model: runs, tokens, cost, model-call latency
	Ptools []Stat `json:"ptools"` // by ptool, with distilled functions' code and fallbacks
}

// Stats sums the runs f selects (its Limit and Offset aside) by kind and
// name, by tool, by model and by ptool. Percentiles are read through the
// indexes, a few rows each, so that stats stay fast on large stores.
func (s *Store) Stats(ctx context.Context, f Filter) (*Stats, error) {
	f.Limit, f.Offset = 0, 0
	where, args := s.where(f)
	st := &Stats{Runs: []Stat{}, Tools: []Stat{}, Models: []Stat{}, Ptools: []Stat{}}
	inRuns, inArgs := "", []any(nil)
	if where != "" {
		inRuns, inArgs = " AND run_id IN (SELECT id FROM runs"+where+")", args
	}
	and := func(w string) string {
		if w == "" {
			return " WHERE "
		}
		return w + " AND "
	}
	var err error
	st.Runs, err = s.group(ctx, `SELECT kind, name, COUNT(*), SUM(CASE WHEN status IN ('ok', 'running') THEN 0 ELSE 1 END),
		SUM(prompt_tokens), SUM(completion_tokens), SUM(cost), 0, 0, 0 FROM runs`+where+` GROUP BY kind, name`, args,
		"duration_us", "FROM runs"+and(where)+"kind = ? AND name = ?", args, true)
	if err != nil {
		return nil, err
	}
	st.Tools, err = s.group(ctx, `SELECT '', tool, COUNT(*), SUM(is_error), 0, 0, 0, 0, 0, 0 FROM tool_calls WHERE outcome <> 'duplicate'`+inRuns+` GROUP BY tool`, inArgs,
		"duration_us", "FROM tool_calls WHERE outcome <> 'duplicate'"+inRuns+" AND tool = ?", inArgs, false)
	if err != nil {
		return nil, err
	}
	st.Models, err = s.group(ctx, `SELECT '', model, COUNT(*), SUM(CASE WHEN status IN ('ok', 'running') THEN 0 ELSE 1 END),
		SUM(prompt_tokens), SUM(completion_tokens), SUM(cost), 0, 0, 0 FROM runs`+and(where)+`model <> '' GROUP BY model`, args,
		"latency_us", "FROM model_calls JOIN (SELECT id, model FROM runs"+where+") r ON r.id = model_calls.run_id WHERE r.model = ?", args, false)
	if err != nil {
		return nil, err
	}
	st.Ptools, err = s.group(ctx, `SELECT '', ptool, COUNT(*), SUM(is_error), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost),
		SUM(CASE WHEN source = 'code' AND is_error = 0 THEN 1 ELSE 0 END), SUM(fallback),
		SUM(CASE WHEN source = 'code' AND is_error <> 0 THEN 1 ELSE 0 END) FROM ptool_calls WHERE 1 = 1`+inRuns+` GROUP BY ptool`, inArgs,
		"duration_us", "FROM ptool_calls WHERE 1 = 1"+inRuns+" AND ptool = ?", inArgs, false)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// group runs an aggregate query and, for each row, reads the percentiles
// of col in pctFrom (a FROM and WHERE clause whose arguments are pctArgs,
// then the row's kind when withKind, then its name): it counts the rows,
// then reads the one at each rank, in order of col.
func (s *Store) group(ctx context.Context, query string, args []any, col, pctFrom string, pctArgs []any, withKind bool) ([]Stat, error) {
	rows, err := s.db.QueryContext(ctx, s.q(query), s.args(args)...)
	if err != nil {
		return nil, err
	}
	var out []Stat
	for rows.Next() {
		var st Stat
		var kind string
		var pt, ct, code, fb, codeErr int64
		var cost float64
		if err := s.scan(rows, &kind, &st.Name, &st.Calls, &st.Errors, &pt, &ct, &cost, &code, &fb, &codeErr); err != nil {
			rows.Close()
			return nil, err
		}
		st.Kind = Kind(kind)
		st.Usage = ptk.Usage{PromptTokens: int(pt), CompletionTokens: int(ct)}
		st.Cost, st.Code, st.Fallbacks, st.CodeErrors = cost, int(code), int(fb), int(codeErr)
		if st.Calls > 0 {
			st.SuccessRate = float64(st.Calls-st.Errors) / float64(st.Calls)
			st.FallbackRate = float64(st.Fallbacks) / float64(st.Calls)
		}
		out = append(out, st)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		a := append([]any{}, pctArgs...)
		if withKind {
			a = append(a, string(out[i].Kind))
		}
		a = append(a, out[i].Name)
		var n int
		if err := s.db.QueryRowContext(ctx, s.q("SELECT COUNT(*) "+pctFrom), s.args(a)...).Scan(&n); err != nil {
			return nil, err
		}
		if n == 0 {
			continue
		}
		for j, p := range []float64{0.5, 0.95} {
			rank := int(p * float64(n-1))
			var us int64
			if err := s.db.QueryRowContext(ctx, s.q("SELECT "+col+" "+pctFrom+" ORDER BY "+col+" LIMIT 1 OFFSET ?"), s.args(append(a, rank))...).Scan(&us); err != nil {
				return nil, err
			}
			d := Millis(time.Duration(us) * time.Microsecond)
			if j == 0 {
				out[i].P50 = d
			} else {
				out[i].P95 = d
			}
		}
	}
	sortStats(out)
	if out == nil {
		out = []Stat{}
	}
	return out, nil
}

func sortStats(st []Stat) {
	slices.SortFunc(st, func(a, b Stat) int {
		if c := cmp.Compare(b.Calls, a.Calls); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
}

// Bucket sums the runs that started in one span of time.
type Bucket struct {
	Start    time.Time `json:"start"`
	Runs     int       `json:"runs"`
	Errors   int       `json:"errors"`
	Duration Millis    `json:"avg_duration_ms"` // the mean
	Usage    ptk.Usage `json:"usage"`
	Cost     float64   `json:"cost"`
}

// Series sums the runs f selects (its Limit and Offset aside) in spans of
// width step, oldest first; spans without runs are left out.
func (s *Store) Series(ctx context.Context, f Filter, step time.Duration) ([]Bucket, error) {
	f.Limit, f.Offset = 0, 0
	if step < time.Second {
		step = time.Second
	}
	where, args := s.where(f)
	w := step.Microseconds()
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT started_us / ? AS b, COUNT(*), SUM(CASE WHEN status IN ('ok', 'running') THEN 0 ELSE 1 END),
		SUM(duration_us), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost) FROM runs`+where+` GROUP BY b ORDER BY b`),
		s.args(append([]any{w}, args...))...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Bucket{}
	for rows.Next() {
		var b Bucket
		var n, dur, pt, ct int64
		if err := rows.Scan(&n, &b.Runs, &b.Errors, &dur, &pt, &ct, &b.Cost); err != nil {
			return nil, err
		}
		b.Start = time.UnixMicro(n * w)
		if b.Runs > 0 {
			b.Duration = Millis(time.Duration(dur/int64(b.Runs)) * time.Microsecond)
		}
		b.Usage = ptk.Usage{PromptTokens: int(pt), CompletionTokens: int(ct)}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Mark says where the store is: how many runs it holds, when the newest
// started, how many are running and how many calls and steps those have,
// how long their steps took so far (a step that ends is rewritten with its
// time: a distill round), and how many labels there are. It changes when a
// run is written, goes on, ends or is pruned, or is labelled, which is how
// a dashboard notices what other processes record.
type Mark struct {
	Runs    int   `json:"runs"`
	Newest  int64 `json:"newest_us"`
	Running int   `json:"running"`
	Spans   int   `json:"spans"`
	Labels  int   `json:"labels"`
	StepsUS int64 `json:"steps_us"`
}

// Mark returns the store's Mark.
func (s *Store) Mark(ctx context.Context) (Mark, error) {
	var m Mark
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(started_us), 0),
		(SELECT COUNT(*) FROM runs WHERE status = 'running'),
		(SELECT COUNT(*) FROM model_calls WHERE run_id IN (SELECT id FROM runs WHERE status = 'running'))
		+ (SELECT COUNT(*) FROM tool_calls WHERE run_id IN (SELECT id FROM runs WHERE status = 'running'))
		+ (SELECT COUNT(*) FROM ptool_calls WHERE run_id IN (SELECT id FROM runs WHERE status = 'running'))
		+ (SELECT COUNT(*) FROM steps WHERE run_id IN (SELECT id FROM runs WHERE status = 'running')),
		(SELECT COUNT(*) FROM labels),
		(SELECT COALESCE(SUM(duration_us), 0) FROM steps WHERE run_id IN (SELECT id FROM runs WHERE status = 'running')) FROM runs`).Scan(
		&m.Runs, &m.Newest, &m.Running, &m.Spans, &m.Labels, &m.StepsUS)
	return m, err
}
