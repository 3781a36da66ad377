package trace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The labels a run or a call can have.
const (
	LabelGood = "good"
	LabelBad  = "bad"
)

// MaxNoteBytes caps a label's note.
const MaxNoteBytes = 4 << 10

// ErrBadLabel is the error of a label that is not good or bad, a span that
// names no call of the run, or a note too long.
var ErrBadLabel = errors.New("bad label")

// Label is feedback on a run, or on one of its calls.
type Label struct {
	RunID string `json:"run_id"`
	// Span is "" for the run itself, else a call of it: SpanID(kind, seq).
	Span  string    `json:"span,omitempty"`
	Label string    `json:"label"` // LabelGood or LabelBad
	Note  string    `json:"note,omitempty"`
	At    time.Time `json:"at"`
}

// notBad is a condition on ptool_calls p that leaves out the calls labelled
// bad, and those of runs labelled bad: they are never examples or training
// data.
const notBad = ` AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.run_id = p.run_id AND l.label = 'bad'
	AND (l.span = '' OR l.span = 'ptool/' || CAST(p.seq AS TEXT)))`

// SetLabel labels a run or one of its calls, replacing the span's label
// before. The run (an id or its unique prefix) and the call must exist:
// ErrNotFound otherwise; a label other than good or bad, a span that is not
// "kind/seq", or a note over MaxNoteBytes or not UTF-8 is ErrBadLabel.
func (s *Store) SetLabel(ctx context.Context, l Label) (Label, error) {
	if s.readOnly {
		return l, ErrReadOnly
	}
	if l.Label != LabelGood && l.Label != LabelBad {
		return l, fmt.Errorf("%w: %q is neither %s nor %s", ErrBadLabel, l.Label, LabelGood, LabelBad)
	}
	if len(l.Note) > MaxNoteBytes || !utf8.ValidString(l.Note) {
		return l, fmt.Errorf("%w: a note is UTF-8 text of at most %d bytes", ErrBadLabel, MaxNoteBytes)
	}
	r, err := s.Get(ctx, l.RunID)
	if err != nil {
		return l, fmt.Errorf("run %s: %w", l.RunID, err)
	}
	l.RunID = r.ID
	if l.Span != "" {
		kind, seqText, ok := strings.Cut(l.Span, "/")
		seq, err := strconv.Atoi(seqText)
		if !ok || err != nil || seq < 0 || strconv.Itoa(seq) != seqText {
			return l, fmt.Errorf("%w: span %q is not kind/seq (ptool/0, tool/2, model/1)", ErrBadLabel, l.Span)
		}
		n := map[string]int{SpanModel: len(r.ModelCalls), SpanTool: len(r.ToolCalls), SpanPtool: len(r.PtoolCalls)}
		count, known := n[kind]
		if !known {
			return l, fmt.Errorf("%w: span %q: the kinds are %s, %s and %s", ErrBadLabel, l.Span, SpanModel, SpanTool, SpanPtool)
		}
		if seq >= count {
			return l, fmt.Errorf("run %s has no call %s (%d %s calls): %w", r.ID, l.Span, count, kind, ErrNotFound)
		}
	}
	if l.At.IsZero() {
		l.At = time.Now()
	}
	_, err = s.db.ExecContext(ctx, s.q(`INSERT INTO labels (run_id, span, label, note, created_us) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (run_id, span) DO UPDATE SET label = excluded.label, note = excluded.note, created_us = excluded.created_us`),
		s.args([]any{l.RunID, l.Span, l.Label, l.Note, l.At.UnixMicro()})...)
	return l, err
}

// Labels returns a run's labels, the run's own first, then by span.
func (s *Store) Labels(ctx context.Context, runID string) ([]Label, error) {
	rows, err := s.db.QueryContext(ctx, s.q("SELECT run_id, span, label, note, created_us FROM labels WHERE run_id = ? ORDER BY span"), s.args([]any{runID})...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Label{}
	for rows.Next() {
		var l Label
		var at int64
		if err := s.scan(rows, &l.RunID, &l.Span, &l.Label, &l.Note, &at); err != nil {
			return nil, err
		}
		l.At = time.UnixMicro(at)
		out = append(out, l)
	}
	return out, rows.Err()
}
