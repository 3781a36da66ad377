package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ptkit/ptk"
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
// NewDistill records the same run live, as it goes.
func Distill(rep *distill.Report, model, provider string, start time.Time, runErr error) *trace.Record {
	return distillRecord(distillRun(trace.Run{ID: trace.NewID(), Name: rep.Ptool, Model: model, Provider: provider, StartedAt: start}), rep, runErr)
}

// distillRun is run as a distill run's row.
func distillRun(run trace.Run) trace.Run {
	run.Kind = trace.KindDistill
	if run.ID == "" {
		run.ID = trace.NewID()
	}
	if run.StartedAt.IsZero() {
		run.StartedAt = time.Now()
	}
	return run
}

// distillRecord is the finished record of run, from its report.
func distillRecord(run trace.Run, rep *distill.Report, runErr error) *trace.Record {
	r := &trace.Record{Run: run, ModelCalls: []trace.ModelCall{}, ToolCalls: []trace.ToolCall{}}
	r.Duration, r.Status = trace.Millis(time.Since(run.StartedAt)), trace.StatusOK
	r.Usage, r.Cost = ptk.Usage{}, 0 // summed from the report's calls
	r.Input = fmt.Sprintf("%d training, %d validation, %d sealed examples", rep.Train, rep.Validation, rep.Sealed)
	r.Iterations = len(rep.Rounds)
	if runErr != nil {
		r.Status, r.ErrorMessage = trace.StatusError, runErr.Error()
		if errors.Is(runErr, distill.ErrRejected) {
			r.ErrorCode = "REJECTED"
		}
	}
	calls := func(cs []distill.ModelCall, parent string) {
		for _, c := range cs {
			r.ModelCalls = append(r.ModelCalls, distillCall(c, parent))
			r.Usage = r.Usage.Add(c.Usage)
			r.Cost += c.Cost
		}
	}
	calls(rep.PatternCalls, "")
	for _, rd := range rep.Rounds {
		round := trace.SpanID(trace.SpanStep, len(r.Steps))
		r.Steps = append(r.Steps, roundStep(rd.N, rd.Start, rd.Duration, true, rd.Accepted, rd.Rejected))
		calls(rd.Calls, round)
		for _, c := range rd.Checks {
			r.Steps = append(r.Steps, checkStep(c, round))
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

// distillCall is a model call of a distillation under parent: the
// patterns' ("") or a round's, which wrote its candidate.
func distillCall(c distill.ModelCall, parent string) trace.ModelCall {
	mode := "code"
	if parent == "" {
		mode = "patterns"
	}
	return trace.ModelCall{Mode: mode, Usage: c.Usage, Cost: c.Cost, Latency: trace.Millis(c.Latency), Error: c.Error,
		Span: trace.Span{Start: c.Start, Parent: parent}}
}

// roundStep is round n's step: running until it ended (its duration the
// time it has gone on, at each checkpoint), then accepted or rejected and
// why.
func roundStep(n int, start time.Time, d time.Duration, ended, accepted bool, rejected string) trace.Step {
	st := trace.Step{Name: fmt.Sprintf("round %d", n), Status: trace.StepOK, Note: "accepted", Duration: trace.Millis(d),
		Attrs: map[string]any{"round": n, "accepted": accepted}, Span: trace.Span{Start: start}}
	switch {
	case !ended:
		st.Status, st.Note = "", "running"
	case !accepted:
		st.Status, st.Note = trace.StepFailed, "rejected: "+rejected
	}
	return st
}

// checkStep is a check of a round's candidate, under the round's step.
func checkStep(c distill.Check, round string) trace.Step {
	st := trace.Step{Name: c.Name, Status: trace.StepOK, Note: c.Note, Attrs: c.Figures, Duration: trace.Millis(c.Duration),
		Span: trace.Span{Start: c.Start, Parent: round}}
	if !c.Passed {
		st.Status = trace.StepFailed
	}
	return st
}

// DistillRecorder records a distillation as it goes, from its events
// (distill.Options.Observe): the run's row when it begins, status running;
// each model call as it ends; each round as it begins and ends and each
// check of its candidate as it ends, with their times, verdicts and counts
// (the same span tree as Distill's, which Done writes at the end). The
// events hold no held-out input, and neither does the record.
//
//	rec := record.NewDistill(w, trace.Run{Name: ptool, Model: name, Provider: llm.ProviderOf(m)})
//	rep, err := distill.Run(ctx, t, splits, distill.Options{Model: m, Observe: rec.Observe})
//	rec.Done(rep, err)
//
// A Live sink's steps are written as a checkpoint of the run, its record
// so far handed to the sink's Progress: a sink that also sends spans
// (otlp's) sends the run once, when it is done.
type DistillRecorder struct {
	sink Sink
	span *span // when the sink is Live

	mu    sync.Mutex
	run   trace.Run
	calls []trace.ModelCall
	steps []trace.Step
	round int // the step of the round going on
	done  bool
}

// NewDistill begins recording a distillation into sink. run says what the
// caller knows: Name (the ptool), Model, Provider; ID and StartedAt are
// set when unset.
func NewDistill(sink Sink, run trace.Run) *DistillRecorder {
	run = distillRun(run)
	return &DistillRecorder{sink: sink, run: run, span: newSpan(sink, run), round: -1}
}

// ID is the run's id in the store.
func (d *DistillRecorder) ID() string { return d.run.ID }

// Observe takes the distillation's next event (it is a
// distill.Options.Observe).
func (d *DistillRecorder) Observe(e distill.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	switch e.Kind {
	case distill.EventCall:
		parent := ""
		if e.Round > 0 && d.round >= 0 {
			parent = trace.SpanID(trace.SpanStep, d.round)
		}
		n := len(d.calls)
		for _, c := range e.Calls {
			d.calls = append(d.calls, distillCall(c, parent))
			d.run.Usage = d.run.Usage.Add(c.Usage)
			d.run.Cost += c.Cost
		}
		d.span.add(d.calls[n:len(d.calls):len(d.calls)], nil, nil)
		return
	case distill.EventRound:
		if e.Start.IsZero() {
			e.Start = time.Now()
		}
		d.round = len(d.steps)
		d.run.Iterations = e.Round
		d.steps = append(d.steps, roundStep(e.Round, e.Start, 0, false, false, ""))
	case distill.EventCheck:
		if d.round < 0 || e.Check == nil {
			return
		}
		d.steps = append(d.steps, checkStep(*e.Check, trace.SpanID(trace.SpanStep, d.round)))
	case distill.EventRoundEnd:
		if d.round < 0 {
			return
		}
		st := &d.steps[d.round]
		*st = roundStep(e.Round, st.Start, e.Duration, true, e.Accepted, e.Rejected)
	default:
		return
	}
	d.checkpoint()
}

// checkpoint writes the run's steps so far: its record so far ended and
// the run begun again, on the store alone. The caller holds mu.
func (d *DistillRecorder) checkpoint() {
	if d.span == nil {
		return
	}
	run := d.run
	run.Duration = trace.Millis(time.Since(run.StartedAt))
	if d.round >= 0 && d.steps[d.round].Status == "" {
		// the round going on, as long as it has gone on
		d.steps[d.round].Duration = trace.Millis(max(0, time.Since(d.steps[d.round].Start)))
	}
	rec := &trace.Record{Run: run, ModelCalls: slices.Clone(d.calls), ToolCalls: []trace.ToolCall{}, Steps: slices.Clone(d.steps)}
	if rec.ModelCalls == nil {
		rec.ModelCalls = []trace.ModelCall{}
	}
	d.span.live.Progress(func() *trace.Record { return rec })
}

// Done records the distillation's end: rep is distill.Run's report (nil
// when it stopped before it had one) and runErr its error. The record is
// Distill's, under the run's id.
func (d *DistillRecorder) Done(rep *distill.Report, runErr error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	d.done = true
	var rec *trace.Record
	if rep != nil {
		rec = distillRecord(d.run, rep, runErr)
	} else {
		rec = &trace.Record{Run: d.run, ModelCalls: orEmpty(d.calls), ToolCalls: []trace.ToolCall{}, Steps: d.steps}
		rec.Duration, rec.Status = trace.Millis(time.Since(d.run.StartedAt)), trace.StatusOK
		Failed(&rec.Run, runErr)
	}
	finish(d.sink, d.span, func() *trace.Record { return rec })
}
