package record

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/react"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/workflow"
)

// Live is a Sink that shows runs as they happen: a run's row is written
// when it begins (status running), its calls as they finish, its record so
// far when a recorder has steps to show (Progress: the run still running),
// and the whole record when it ends. *trace.Writer is one. The recorders of
// this package use it when their sink is one, else they hand over the
// finished record.
type Live interface {
	Sink
	Begin(run trace.Run)
	Append(rec *trace.Record, from [3]int)
	Progress(build func() *trace.Record)
	Finish(build func() *trace.Record)
}

var _ Live = (*trace.Writer)(nil)

// span is the state a recorder keeps of one run it shows live: how many
// calls of each kind were appended, so that the next ones take the next
// seqs.
type span struct {
	live Live
	id   string
	n    [3]int // model, tool and ptool calls appended
}

// newSpan begins run on sink when it is Live (nil otherwise).
func newSpan(sink Sink, run trace.Run) *span {
	l, ok := sink.(Live)
	if !ok {
		return nil
	}
	l.Begin(run)
	return &span{live: l, id: run.ID}
}

// add appends calls to the run; their Parent names seqs that add gave
// before, or that it gives in this call (ptoolSpan, modelSpan).
func (s *span) add(m []trace.ModelCall, t []trace.ToolCall, p []trace.PtoolCall) {
	if s == nil || len(m)+len(t)+len(p) == 0 {
		return
	}
	s.live.Append(&trace.Record{Run: trace.Run{ID: s.id}, ModelCalls: m, ToolCalls: t, PtoolCalls: p}, s.n)
	s.n[0] += len(m)
	s.n[1] += len(t)
	s.n[2] += len(p)
}

// finish hands over the finished record: to Finish when live, else as a
// whole record.
func finish(sink Sink, s *span, build func() *trace.Record) {
	if s != nil {
		s.live.Finish(build)
		return
	}
	sink.RecordFunc(build)
}

// PtoolCall is a ptool call's Record as the trace store keeps it: the
// ptool call, with parent as its parent span, and its attempts as model
// calls under it (the ptool call's span is SpanID(SpanPtool, seq)).
func PtoolCall(r *ptool.Record, parent string, seq int) (trace.PtoolCall, []trace.ModelCall) {
	pc := trace.PtoolCall{Ptool: r.PTool, Input: r.Input, Output: r.Output, Source: string(r.Source),
		Fallback: r.FellBack, IsError: r.Err != "", Duration: trace.Millis(r.Latency), Usage: r.Usage, Cost: r.Cost,
		Span: trace.Span{Start: r.Start, Parent: parent}}
	var mcs []trace.ModelCall
	at := r.Start
	self := trace.SpanID(trace.SpanPtool, seq)
	for _, a := range r.Attempts {
		pc.Attempts = append(pc.Attempts, trace.Attempt{Output: a.Raw, Problems: a.Problems})
		pc.Repairs = append(pc.Repairs, a.Repairs...)
		text, _ := trace.Cap(a.Raw, trace.MaxResultBytes)
		mc := trace.ModelCall{Mode: string(a.Mode), Usage: a.Usage, Cost: a.Cost, Latency: trace.Millis(a.Latency), Text: text,
			Span: trace.Span{Start: at, Parent: self}}
		if len(a.Problems) > 0 {
			mc.Error = a.Problems[0]
		}
		if !at.IsZero() {
			at = at.Add(a.Latency)
		}
		mcs = append(mcs, mc)
	}
	return pc, mcs
}

// PtoolRun is one ptool call as a run of kind ptool: the ptool call, and
// its attempts as the run's model calls under it.
func PtoolRun(r *ptool.Record, parentID string) *trace.Record {
	pc, mcs := PtoolCall(r, "", 0)
	status := trace.StatusOK
	if r.Err != "" {
		status = trace.StatusError
	}
	return &trace.Record{Run: trace.Run{ID: trace.NewID(), ParentID: parentID, Kind: trace.KindPtool, Name: r.PTool, Model: r.Model, Provider: r.Provider,
		Mode: string(r.Mode), StartedAt: r.Start, Duration: trace.Millis(r.Latency), Status: status,
		ErrorMessage: r.Err, Usage: r.Usage, Cost: r.Cost, Iterations: len(r.Attempts),
		Input: string(r.Input), Output: string(r.Output)}, PtoolCalls: []trace.PtoolCall{pc}, ModelCalls: orEmpty(mcs), ToolCalls: []trace.ToolCall{}}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Ptool records each call of a ptool as a run of kind ptool, its attempts
// as model calls under the call: pass it to ptool.New (it is the ptool's
// observer, ptool.WithObserver).
func Ptool(sink Sink) ptool.Option {
	return ptool.WithObserver(func(r *ptool.Record) {
		sink.RecordFunc(func() *trace.Record { return PtoolRun(r, "") })
	})
}

// Failed marks a run that ended with err.
func Failed(r *trace.Run, err error) {
	if err == nil {
		return
	}
	r.Status, r.ErrorMessage = trace.StatusError, err.Error()
	r.ErrorCode = string(ptk.CodeOf(err))
}

// ReActRecorder records ReAct runs as they go: each run is a run of kind
// react, written when it starts; each step's model call and action (a
// tool call) as it is done, and a ptool action's call under its action
// with its attempts under it.
type ReActRecorder struct {
	sink Sink
	mu   sync.Mutex
	runs map[string]*reactRun // by trajectory id
}

type reactRun struct {
	id       string
	provider string
	span     *span
	model    []trace.ModelCall
	tools    []trace.ToolCall
	calls    []trace.PtoolCall
}

// ReAct returns a recorder of ReAct runs into sink; Options sets it on a
// run's options.
func ReAct(sink Sink) *ReActRecorder {
	return &ReActRecorder{sink: sink, runs: map[string]*reactRun{}}
}

// Options sets the recorder's hooks on opts (OnStart, OnStep, Observer),
// keeping any it had, and returns it. Runs are named by what they may call
// (their ptools and tools, sorted), so that runs of one agent group
// together whatever their goals.
func (r *ReActRecorder) Options(opts react.Options) react.Options {
	start, step, obs := opts.OnStart, opts.OnStep, opts.Observer
	var names []string
	if opts.PTools != nil {
		for _, t := range opts.PTools.Tools() {
			names = append(names, t.Info().Name)
		}
	}
	for _, t := range opts.Tools {
		names = append(names, t.Info().Name)
	}
	slices.Sort(names)
	name := strings.Join(names, ", ")
	provider := llm.ProviderOf(opts.Model)
	opts.OnStart = func(t *react.Trajectory) {
		r.start(t, name, provider)
		if start != nil {
			start(t)
		}
	}
	opts.OnStep = func(t *react.Trajectory, s react.Step) {
		r.step(t, s)
		if step != nil {
			step(t, s)
		}
	}
	opts.Observer = func(t *react.Trajectory) {
		r.done(t, name)
		if obs != nil {
			obs(t)
		}
	}
	return opts
}

// reactName is a run's name: what it may call, else its goal.
func reactName(name string, t *react.Trajectory) string {
	if name != "" {
		return name
	}
	return t.Goal
}

func (r *ReActRecorder) start(t *react.Trajectory, name, provider string) {
	run := &reactRun{id: trace.NewID(), provider: provider}
	run.span = newSpan(r.sink, trace.Run{ID: run.id, Kind: trace.KindReAct, Name: reactName(name, t), Model: t.Model, Provider: provider,
		Input: t.Goal, StartedAt: t.Start})
	r.mu.Lock()
	r.runs[t.ID] = run
	r.mu.Unlock()
}

func (r *ReActRecorder) get(t *react.Trajectory) *reactRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	run := r.runs[t.ID]
	if run == nil {
		run = &reactRun{id: trace.NewID()}
		r.runs[t.ID] = run
	}
	return run
}

// step records a step: its model call (on a call's first step), its action
// as a tool call, and a ptool action's call under the action.
func (r *ReActRecorder) step(t *react.Trajectory, s react.Step) {
	r.get(t).add(s)
}

func (run *reactRun) add(s react.Step) {
	var m []trace.ModelCall
	var tc []trace.ToolCall
	var pc []trace.PtoolCall
	if c := s.Call; c != nil {
		m = append(m, trace.ModelCall{Usage: c.Usage, Cost: c.Cost, Latency: trace.Millis(c.Latency), Span: trace.Span{Start: c.Start}})
		m[0].Text, _ = trace.Cap(s.Thought.Content, trace.MaxResultBytes)
	}
	if s.Action != nil {
		call := trace.ToolCall{Iteration: s.Thought.Step, Tool: s.Action.Name, Args: s.Action.Args, Outcome: trace.OutcomeRan}
		if o := s.Observation; o != nil {
			call.Result, call.Truncated = trace.Cap(o.Result, trace.MaxResultBytes)
			call.IsError = !o.Success
			if call.IsError {
				call.ErrorCode, call.Outcome = string(o.Code), outcomeOf(o.Code)
			}
		}
		if s.Record != nil {
			seq := len(run.calls) + len(pc)
			p, attempts := PtoolCall(s.Record, trace.SpanID(trace.SpanTool, len(run.tools)), seq)
			call.Start, call.Duration = s.Record.Start, trace.Millis(s.Record.Latency)
			pc = append(pc, p)
			m = append(m, attempts...)
		}
		tc = append(tc, call)
	}
	run.model = append(run.model, m...)
	run.tools = append(run.tools, tc...)
	run.calls = append(run.calls, pc...)
	run.span.add(m, tc, pc)
}

// outcomeOf is the outcome of a tool call that failed with code: not run
// when the model's call could not run or was denied, run otherwise.
func outcomeOf(code ptk.Code) string {
	switch code {
	case ptk.InvalidToolCall, ptk.ToolNotFound, ptk.ParseError:
		return trace.OutcomeInvalid
	case ptk.ToolCallDenied:
		return trace.OutcomeDenied
	case ptk.DuplicateToolCall:
		return trace.OutcomeDuplicate
	}
	return trace.OutcomeRan
}

func (r *ReActRecorder) done(t *react.Trajectory, name string) {
	r.mu.Lock()
	run := r.runs[t.ID]
	delete(r.runs, t.ID)
	r.mu.Unlock()
	if run == nil {
		run = &reactRun{id: trace.NewID()}
	}
	rec := run.record(t, name, nil)
	finish(r.sink, run.span, func() *trace.Record { return rec })
}

// ReActRecord is the record of a finished ReAct run, its steps as spans,
// for a recorder that saw none of it as it went (ptk-temporal's, which
// records a run once its workflow ends); runErr is the run's error.
func ReActRecord(t *react.Trajectory, runErr error) *trace.Record {
	return (&reactRun{id: trace.NewID()}).record(t, "", runErr)
}

// record is the run's record once t is done.
func (run *reactRun) record(t *react.Trajectory, name string, runErr error) *trace.Record {
	rec := &trace.Record{Run: trace.Run{ID: run.id, Kind: trace.KindReAct, Name: reactName(name, t), Model: t.Model, Provider: run.provider,
		Input: t.Goal, Output: t.FinalAnswer, StartedAt: t.Start, Duration: trace.Millis(t.Duration),
		Usage: t.Usage, Cost: t.Cost, Status: trace.StatusOK},
		ModelCalls: orEmpty(run.model), ToolCalls: orEmpty(run.tools), PtoolCalls: run.calls}
	if run.span == nil && len(run.model) == 0 && len(t.Steps) > 0 {
		// no OnStep (a trajectory from elsewhere): its steps now
		for _, s := range t.Steps {
			run.add(s)
		}
		rec.ModelCalls, rec.ToolCalls, rec.PtoolCalls = orEmpty(run.model), orEmpty(run.tools), run.calls
	}
	rec.Iterations = 0
	for _, m := range rec.ModelCalls {
		if m.Parent == "" {
			rec.Iterations++ // the run's own model calls, not its ptools'
		}
	}
	rec.NumToolCalls = len(rec.ToolCalls)
	if runErr == nil && !t.Success {
		runErr = errors.New("no answer: " + t.Stopped)
	}
	Failed(&rec.Run, runErr)
	if t.Code != "" && rec.Status == trace.StatusError {
		rec.ErrorCode = string(t.Code)
	}
	// The trajectory with its Program Trace Prompting text, which the
	// dashboard shows as it is.
	rec.Detail, _ = json.Marshal(struct {
		*react.Trajectory
		PTP string `json:"ptp"`
	}{t, t.PTP()})
	return rec
}

// WorkflowRecorder records one workflow run from its stream's events: a run
// of kind workflow, written when it starts, each step's ptool call as the
// step ends (in the order they end), and each call's attempts as model
// calls under it.
//
//	rec := record.NewWorkflow(w, t)
//	for e, err := range workflow.Stream(ctx, t, opts) {
//		rec.Event(e, err)
//		...
//	}
type WorkflowRecorder struct {
	sink  Sink
	id    string
	span  *span
	model []trace.ModelCall
	calls []trace.PtoolCall
	done  bool
}

// NewWorkflow begins recording a run of t.
func NewWorkflow(sink Sink, t *workflow.Trace) *WorkflowRecorder {
	r := &WorkflowRecorder{sink: sink, id: trace.NewID()}
	r.span = newSpan(sink, trace.Run{ID: r.id, Kind: trace.KindWorkflow, Name: workflowName(t), Input: t.Goal, StartedAt: time.Now()})
	return r
}

// workflowName is what runs of a workflow are grouped by: its goal.
func workflowName(t *workflow.Trace) string {
	if t.Goal != "" {
		return t.Goal
	}
	return t.ID
}

// ID is the run's id in the store.
func (r *WorkflowRecorder) ID() string { return r.id }

// Event takes the run's next event and its error.
func (r *WorkflowRecorder) Event(e workflow.Event, err error) {
	if r.done {
		return
	}
	switch e.Kind {
	case workflow.EventStepEnd:
		if e.Step == nil || e.Step.Status == workflow.StatusSkipped {
			return
		}
		pc, m := r.stepCall(e.Step)
		r.calls = append(r.calls, pc)
		r.model = append(r.model, m...)
		r.span.add(m, nil, []trace.PtoolCall{pc})
	case workflow.EventDone:
		r.done = true
		if e.Trace != nil {
			finish(r.sink, r.span, func() *trace.Record { return r.record(e.Trace, err) })
		}
	}
}

// stepCall is a step's ptool call (a plain tool's step too, without
// attempts), as the next ptool call of the run.
func (r *WorkflowRecorder) stepCall(s *workflow.Step) (trace.PtoolCall, []trace.ModelCall) {
	if s.Record != nil {
		return PtoolCall(s.Record, "", len(r.calls))
	}
	pc := trace.PtoolCall{Ptool: s.PTool, Input: s.Input, Output: s.Result, Source: "tool", IsError: s.Status == workflow.StatusFailed,
		Duration: trace.Millis(s.Duration), Usage: s.Usage, Cost: s.Cost}
	return pc, nil
}

func (r *WorkflowRecorder) record(t *workflow.Trace, runErr error) *trace.Record {
	rec := &trace.Record{Run: trace.Run{ID: r.id, Kind: trace.KindWorkflow, Name: workflowName(t), Input: t.Goal,
		StartedAt: t.Start, Duration: trace.Millis(t.Duration), Status: trace.StatusOK},
		ModelCalls: orEmpty(r.model), ToolCalls: []trace.ToolCall{}, PtoolCalls: r.calls}
	if r.span == nil && len(r.calls) == 0 {
		// not given its events: the steps now
		for i := range t.Steps {
			if s := &t.Steps[i]; s.Status != workflow.StatusSkipped && s.Status != "" {
				pc, m := r.stepCall(s)
				r.calls = append(r.calls, pc)
				r.model = append(r.model, m...)
			}
		}
		rec.ModelCalls, rec.PtoolCalls = orEmpty(r.model), r.calls
	}
	for _, s := range t.Steps {
		rec.Usage = rec.Usage.Add(s.Usage)
		rec.Cost += s.Cost
	}
	rec.Model, rec.Provider = stepsModel(t.Steps)
	if n := len(t.Steps); n > 0 && runErr == nil {
		rec.Output = string(t.Steps[n-1].Result)
	}
	rec.Iterations = len(t.Steps)
	Failed(&rec.Run, runErr)
	rec.Detail, _ = json.Marshal(t)
	return rec
}

// stepsModel is the model and the provider that answered a workflow's
// ptool steps, each "" when its steps do not agree on one (a plain tool's
// step, without a record, has neither).
func stepsModel(steps []workflow.Step) (model, provider string) {
	first := true
	for _, s := range steps {
		if s.Record == nil || len(s.Record.Attempts) == 0 {
			continue
		}
		if first {
			model, provider, first = s.Record.Model, s.Record.Provider, false
			continue
		}
		if s.Record.Model != model {
			model = ""
		}
		if s.Record.Provider != provider {
			provider = ""
		}
	}
	return model, provider
}

// WorkflowRecord is the record of a finished workflow run, for a recorder
// that saw none of its events (ptk-temporal's); runErr is the run's error.
func WorkflowRecord(t *workflow.Trace, runErr error) *trace.Record {
	return (&WorkflowRecorder{id: trace.NewID(), done: true}).record(t, runErr)
}

// Workflow records runs of workflow.Run, each when it is done: set it as
// workflow.Options.Observer (a run through workflow.Stream is seen live
// through NewWorkflow instead).
func Workflow(sink Sink) func(*workflow.Trace) {
	return func(t *workflow.Trace) {
		r := &WorkflowRecorder{sink: sink, id: trace.NewID(), done: true}
		var err error
		for _, s := range t.Steps {
			if s.Status == workflow.StatusFailed {
				err = errors.New("workflow: step " + s.PTool + " failed: " + s.Error)
				break
			}
		}
		sink.RecordFunc(func() *trace.Record { return r.record(t, err) })
	}
}
