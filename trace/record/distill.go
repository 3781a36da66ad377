package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ptkit/ptk/distill"
	"github.com/ptkit/ptk/trace"
)

// Distill is the record of a distillation (distill.Run's report) as a run
// of kind distill: each round a step, each check of its candidate a step
// under it with its time, verdict and counts ("12/14 held-out calls
// equal"), the model calls that wrote the candidate under the round and
// those that described the patterns under the run; runErr is Run's error.
// The held-out (sealed) inputs are never in it: the report kept as the
// run's detail has its sealed cases' contents left out, and the run's
// output is the verdict without them (the report itself keeps them, for
// the user: ptk distill prints it, and writes it with --report).
func Distill(rep *distill.Report, model, provider string, start time.Time, runErr error) *trace.Record {
	r := &trace.Record{Run: trace.Run{ID: trace.NewID(), Kind: trace.KindDistill, Name: rep.Ptool, Model: model, Provider: provider,
		StartedAt: start, Duration: trace.Millis(time.Since(start)), Status: trace.StatusOK,
		Input:      fmt.Sprintf("%d training, %d validation, %d sealed examples", rep.Train, rep.Validation, rep.Sealed),
		Iterations: len(rep.Rounds)}, ModelCalls: []trace.ModelCall{}, ToolCalls: []trace.ToolCall{}}
	if runErr != nil {
		r.Status, r.ErrorMessage = trace.StatusError, runErr.Error()
		if errors.Is(runErr, distill.ErrRejected) {
			r.ErrorCode = "REJECTED"
		}
	}
	calls := func(cs []distill.ModelCall, mode, parent string) {
		for _, c := range cs {
			r.ModelCalls = append(r.ModelCalls, trace.ModelCall{Mode: mode, Usage: c.Usage, Cost: c.Cost, Latency: trace.Millis(c.Latency),
				Error: c.Error, Span: trace.Span{Start: c.Start, Parent: parent}})
			r.Usage = r.Usage.Add(c.Usage)
			r.Cost += c.Cost
		}
	}
	calls(rep.PatternCalls, "patterns", "")
	for _, rd := range rep.Rounds {
		round := trace.SpanID(trace.SpanStep, len(r.Steps))
		st := trace.Step{Name: fmt.Sprintf("round %d", rd.N), Status: trace.StepOK, Note: "accepted", Duration: trace.Millis(rd.Duration),
			Attrs: map[string]any{"round": rd.N, "accepted": rd.Accepted}, Span: trace.Span{Start: rd.Start}}
		if !rd.Accepted {
			st.Status, st.Note = trace.StepFailed, "rejected: "+rd.Rejected
		}
		r.Steps = append(r.Steps, st)
		calls(rd.Calls, "code", round)
		for _, c := range rd.Checks {
			cs := trace.Step{Name: c.Name, Status: trace.StepOK, Note: c.Note, Attrs: c.Figures, Duration: trace.Millis(c.Duration),
				Span: trace.Span{Start: c.Start, Parent: round}}
			if !c.Passed {
				cs.Status = trace.StepFailed
			}
			r.Steps = append(r.Steps, cs)
		}
	}
	verdict := fmt.Sprintf("no candidate passed in %d round(s)", len(rep.Rounds))
	if rep.Accepted {
		verdict = fmt.Sprintf("accepted after %d round(s)", len(rep.Rounds))
	}
	if f := rep.Final(); f != nil && f.Sealed != nil {
		verdict += fmt.Sprintf("; held-out: %d/%d calls equal, %d wrong, %d left to the model", f.Sealed.Correct, f.Sealed.Total, f.Sealed.Wrong, f.Sealed.Abstained)
	}
	r.Output = verdict
	// the report, with no sealed case's input, answer or error
	kept := *rep
	kept.Rounds = make([]distill.Round, len(rep.Rounds))
	for i, rd := range rep.Rounds {
		if rd.Sealed != nil {
			sealed := *rd.Sealed
			sealed.WrongCases = nil
			rd.Sealed = &sealed
		}
		kept.Rounds[i] = rd
	}
	r.Detail, _ = json.Marshal(&kept)
	return r
}
