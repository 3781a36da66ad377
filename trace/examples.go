package trace

import (
	"context"
	"time"

	"github.com/ptkit/ptk"
)

// GoodFilter selects the recorded calls of a ptool that make examples
// (shown to a model) or test cases (of 'ptk ptool eval').
type GoodFilter struct {
	Ptool        string
	Since, Until time.Time // the calls' runs started in [Since, Until)
	// Limit caps the calls returned (0: all).
	Limit int
}

// GoodCalls returns the good recorded calls of a ptool, newest first: the
// calls a model answered without an error (a distilled function's code
// answers are its own, not examples of the function), one per distinct
// input (the newest). A call labelled bad, or whose run is, is never one
// (SetLabel).
func (s *Store) GoodCalls(ctx context.Context, f GoodFilter) ([]PtoolCall, error) {
	where := `JOIN runs ON runs.id = p.run_id WHERE p.ptool = ? AND p.is_error = 0 AND p.source <> 'code' AND p.output <> ''` + notBad
	args := []any{f.Ptool}
	if !f.Since.IsZero() {
		where += " AND runs.started_us >= ?"
		args = append(args, f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		where += " AND runs.started_us < ?"
		args = append(args, f.Until.UnixMicro())
	}
	where += " ORDER BY runs.started_us DESC, p.run_id DESC, p.seq DESC"
	// distinct inputs are kept in Go: read in pages until Limit are found
	var out []PtoolCall
	seen := map[string]bool{}
	const page = 500
	for offset := 0; ; offset += page {
		calls, err := s.ptoolCalls(ctx, where+" LIMIT ? OFFSET ?", -1, append(args, page, offset)...)
		if err != nil {
			return nil, err
		}
		for _, c := range calls {
			if seen[string(c.Input)] {
				continue
			}
			seen[string(c.Input)] = true
			out = append(out, c)
			if f.Limit > 0 && len(out) == f.Limit {
				return out, nil
			}
		}
		if len(calls) < page {
			return out, nil
		}
	}
}

// PtoolExamples returns up to n good recorded calls of the ptool name
// (GoodCalls) as examples, newest first: what ptool.WithStoredExamples
// shows the model.
func (s *Store) PtoolExamples(ctx context.Context, name string, n int) ([]ptk.Example, error) {
	calls, err := s.GoodCalls(ctx, GoodFilter{Ptool: name, Limit: n})
	if err != nil {
		return nil, err
	}
	out := make([]ptk.Example, len(calls))
	for i, c := range calls {
		out[i] = ptk.Example{Input: c.Input, Output: c.Output}
	}
	return out, nil
}
