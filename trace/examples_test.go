package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestGoodCalls: a ptool's good calls are those a model answered without
// an error, one per input (the newest), newest first, within the time and
// the limit asked.
func TestGoodCalls(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		add := func(id string, at time.Duration, in, out, source string, isErr bool) {
			pc := PtoolCall{Ptool: "route", Input: json.RawMessage(in), Output: json.RawMessage(out), Source: source, IsError: isErr}
			if out == "" {
				pc.Output = nil
			}
			if err := s.Write(ctx, &Record{Run: Run{ID: id, Kind: KindPtool, Name: "route", StartedAt: t0.Add(at), Status: StatusOK},
				PtoolCalls: []PtoolCall{pc}}); err != nil {
				t.Fatal(err)
			}
		}
		add("a", 1*time.Minute, `{"t":1}`, `"old"`, "model", false)
		add("b", 2*time.Minute, `{"t":2}`, `"two"`, "model", false)
		add("c", 3*time.Minute, `{"t":1}`, `"new"`, "model", false) // the same input, newer
		add("d", 4*time.Minute, `{"t":3}`, "", "model", true)       // failed
		add("e", 5*time.Minute, `{"t":4}`, `"code"`, "code", false) // the code's answer
		add("f", 6*time.Minute, `{"t":5}`, `"five"`, "model", false)
		got := func(f GoodFilter) string {
			calls, err := s.GoodCalls(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var out string
			for _, c := range calls {
				out += fmt.Sprintf("%s=%s ", c.Input, c.Output)
			}
			return out
		}
		if g := got(GoodFilter{Ptool: "route"}); g != `{"t":5}="five" {"t":1}="new" {"t":2}="two" ` {
			t.Errorf("good calls: %s", g)
		}
		if g := got(GoodFilter{Ptool: "route", Limit: 2}); g != `{"t":5}="five" {"t":1}="new" ` {
			t.Errorf("the first two: %s", g)
		}
		if g := got(GoodFilter{Ptool: "route", Since: t0.Add(90 * time.Second), Until: t0.Add(5 * time.Minute)}); g != `{"t":1}="new" {"t":2}="two" ` {
			t.Errorf("between 1.5 and 5 minutes: %s", g)
		}
		ex, err := s.PtoolExamples(ctx, "route", 1)
		if err != nil || len(ex) != 1 || string(ex[0].Output) != `"five"` {
			t.Errorf("PtoolExamples = %+v, %v", ex, err)
		}
		if g := got(GoodFilter{Ptool: "other"}); g != "" {
			t.Errorf("another ptool: %s", g)
		}
	})
}
