package trace

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ptkit/ptk"
)

// TestPtoolStats: a ptool's stats sum its calls' own tokens and cost (a
// workflow's steps each have theirs), and a distilled function's code
// answered only the calls it answered without an error.
func TestPtoolStats(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		call := func(source string, fallback, isErr bool, prompt int, cost float64) PtoolCall {
			return PtoolCall{Ptool: "route", Input: json.RawMessage(`{}`), Output: json.RawMessage(`"x"`), Source: source, Fallback: fallback,
				IsError: isErr, Usage: ptk.Usage{PromptTokens: prompt, CompletionTokens: prompt / 10}, Cost: cost}
		}
		recs := []*Record{
			{Run: Run{ID: "w1", Kind: KindWorkflow, StartedAt: t0, Status: StatusOK, Usage: ptk.Usage{PromptTokens: 300}, Cost: 0.03},
				PtoolCalls: []PtoolCall{call("model", false, false, 100, 0.01), call("model", true, false, 200, 0.02)}},
			{Run: Run{ID: "p1", Kind: KindPtool, StartedAt: t0, Status: StatusOK}, PtoolCalls: []PtoolCall{call("code", false, false, 0, 0)}},
			{Run: Run{ID: "p2", Kind: KindPtool, StartedAt: t0, Status: StatusError}, PtoolCalls: []PtoolCall{call("code", false, true, 0, 0)}},
		}
		if err := s.Write(ctx, recs...); err != nil {
			t.Fatal(err)
		}
		st, err := s.Stats(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Ptools) != 1 {
			t.Fatalf("ptools = %+v", st.Ptools)
		}
		r := st.Ptools[0]
		if r.Calls != 4 || r.Usage.PromptTokens != 300 || r.Usage.CompletionTokens != 30 || r.Cost < 0.0299 || r.Cost > 0.0301 {
			t.Errorf("tokens and cost = %+v", r)
		}
		if r.Code != 1 || r.CodeErrors != 1 || r.Fallbacks != 1 || r.Errors != 1 {
			t.Errorf("code %d, code errors %d, fallbacks %d, errors %d", r.Code, r.CodeErrors, r.Fallbacks, r.Errors)
		}
		got, err := s.Get(ctx, "w1")
		if err != nil || got.PtoolCalls[1].Usage.PromptTokens != 200 || got.PtoolCalls[1].Cost != 0.02 {
			t.Errorf("Get = %+v, %v", got, err)
		}
	})
}
