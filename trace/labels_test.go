package trace

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestLabels: a run and a ptool call labelled, the label replaced, bad
// input refused with a clear error, and a call labelled bad (or in a run
// labelled bad) never an example or a good call.
func TestLabels(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		call := func(in string) PtoolCall {
			return PtoolCall{Ptool: "classify", Input: json.RawMessage(in), Output: json.RawMessage(`"urgent"`), Source: "model"}
		}
		now := time.Now()
		recs := []*Record{
			{Run: Run{ID: "r1", Kind: KindPtool, Name: "classify", StartedAt: now.Add(-3 * time.Second)}, PtoolCalls: []PtoolCall{call(`{"t":1}`), call(`{"t":2}`)}},
			{Run: Run{ID: "r2", Kind: KindPtool, Name: "classify", StartedAt: now.Add(-2 * time.Second)}, PtoolCalls: []PtoolCall{call(`{"t":3}`)}},
			{Run: Run{ID: "r3", Kind: KindPtool, Name: "classify", StartedAt: now.Add(-time.Second)}, PtoolCalls: []PtoolCall{call(`{"t":4}`)}},
		}
		if err := s.Write(ctx, recs...); err != nil {
			t.Fatal(err)
		}
		for _, l := range []Label{
			{RunID: "r1", Span: "ptool/1", Label: LabelGood},
			{RunID: "r1", Span: "ptool/1", Label: LabelBad, Note: "wrong: it is not urgent"}, // replaces the first
			{RunID: "r2", Label: LabelBad, Note: "the whole run"},
			{RunID: "r3", Label: LabelGood, Note: "nice"},
		} {
			if _, err := s.SetLabel(ctx, l); err != nil {
				t.Fatalf("SetLabel(%+v): %v", l, err)
			}
		}
		r, err := s.Get(ctx, "r1")
		if err != nil || len(r.Labels) != 1 || r.Labels[0].Label != LabelBad || r.Labels[0].Note != "wrong: it is not urgent" {
			t.Fatalf("r1's labels: %+v, %v", r.Labels, err)
		}
		good, err := s.GoodCalls(ctx, GoodFilter{Ptool: "classify"})
		if err != nil {
			t.Fatal(err)
		}
		var ins []string
		for _, c := range good {
			ins = append(ins, string(c.Input))
		}
		if strings.Join(ins, " ") != `{"t":4} {"t":1}` {
			t.Errorf("good calls: %v, want t=4 and t=1 (t=2 labelled bad, t=3 in a run labelled bad)", ins)
		}
		ex, err := s.Examples(ctx, "classify", -1)
		if err != nil || len(ex) != 2 {
			t.Errorf("examples for distillation: %d, %v", len(ex), err)
		}
		for _, bad := range []struct {
			l    Label
			want error
		}{
			{Label{RunID: "r1", Label: "meh"}, ErrBadLabel},
			{Label{RunID: "r1", Span: "ptool/9", Label: LabelBad}, ErrNotFound},
			{Label{RunID: "r1", Span: "ptool/-1", Label: LabelBad}, ErrBadLabel},
			{Label{RunID: "r1", Span: "ptool/01", Label: LabelBad}, ErrBadLabel},
			{Label{RunID: "r1", Span: "run/0", Label: LabelBad}, ErrBadLabel},
			{Label{RunID: "r1", Span: "'; DROP TABLE runs; --", Label: LabelBad}, ErrBadLabel},
			{Label{RunID: "nope", Label: LabelBad}, ErrNotFound},
			{Label{RunID: "r1", Label: LabelBad, Note: strings.Repeat("x", MaxNoteBytes+1)}, ErrBadLabel},
			{Label{RunID: "r1", Label: LabelBad, Note: "\xff\xfe"}, ErrBadLabel},
		} {
			if _, err := s.SetLabel(ctx, bad.l); !errors.Is(err, bad.want) {
				t.Errorf("SetLabel(%q, %q, %q): %v, want %v", bad.l.RunID, bad.l.Span, bad.l.Label, err, bad.want)
			}
		}
		if n, _ := s.Count(ctx, Filter{}); n != 3 {
			t.Errorf("%d runs after the attempts", n)
		}
		// Pruning a run takes its labels.
		if _, err := s.Prune(ctx, now.Add(-1500*time.Millisecond), 0); err != nil {
			t.Fatal(err)
		}
		if ls, _ := s.Labels(ctx, "r1"); len(ls) != 0 {
			t.Errorf("labels of a pruned run: %+v", ls)
		}
	})
}
