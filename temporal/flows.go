package temporal

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/react"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
	"github.com/ptkit/ptk/turn"
	ptkworkflow "github.com/ptkit/ptk/workflow"
)

// ReActInput is a ReAct run (react.Options that a run can carry).
type ReActInput struct {
	Goal  string `json:"goal"`
	Model string `json:"model,omitempty"`
	// Tools names the worker's tools; PTools its ptools (none: all of
	// them; "-" alone: none).
	Tools        []string            `json:"tools,omitempty"`
	PTools       []string            `json:"ptools,omitempty"`
	MaxSteps     int                 `json:"max_steps,omitempty"`
	Mode         turn.Mode           `json:"mode,omitempty"`
	Instructions string              `json:"instructions,omitempty"`
	Examples     []*react.Trajectory `json:"examples,omitempty"`
	ToolTimeout  time.Duration       `json:"tool_timeout,omitempty"`
	ModelTimeout time.Duration       `json:"model_timeout,omitempty"`
}

// ReActOutput is what a ReAct run did.
type ReActOutput struct {
	Answer     string            `json:"answer"`
	Success    bool              `json:"success"`
	Trajectory *react.Trajectory `json:"trajectory"`
	Error      string            `json:"error,omitempty"`
}

// reactWorkflow is a ReAct run: react.Run, with each model call and each
// action an activity; an action of a tool that is not read-only is
// approved as in an agent run (the policy, the preset, a signal).
func (w *Worker) reactWorkflow(ctx workflow.Context, in ReActInput) (*ReActOutput, error) {
	st := newState(ctx)
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, st.progress); err != nil {
		return nil, err
	}
	b := newBridge(ctx, 0)
	tools := in.Tools
	if len(tools) == 1 && tools[0] == "-" {
		tools = nil
	} else if len(tools) == 0 {
		tools = w.toolNames()
	}
	s := w.setup(ctx, in.Model, tools)
	rt := &runtime{w: w, b: b, timeout: orDefault(in.ToolTimeout, DefaultToolTimeout)}
	ap := &approver{w: w, b: b, st: st, preset: w.preset()}
	info := workflow.GetInfo(ctx)
	opts := react.Options{
		Model:    &remoteModel{w: w, b: b, name: in.Model, timeout: orDefault(in.ModelTimeout, DefaultModelTimeout)},
		MaxSteps: in.MaxSteps, Mode: in.Mode, Examples: in.Examples, Instructions: in.Instructions,
		ID: info.WorkflowExecution.ID, Now: rt.Now, Approver: ap,
	}
	if len(in.Tools) != 1 || in.Tools[0] != "-" {
		for _, d := range s.Tools {
			opts.Tools = append(opts.Tools, &actionTool{desc: d, rt: rt, st: st})
		}
	}
	if w.PTools != nil && (len(in.PTools) != 1 || in.PTools[0] != "-") {
		reg := ptool.NewRegistry()
		for _, spec := range w.PTools.List() {
			if len(in.PTools) > 0 && !contains(in.PTools, spec.Name) {
				continue
			}
			f, _ := w.PTools.Lookup(spec.Name)
			info := f.Info()
			_ = reg.Register(&actionPTool{Func: f, actionTool: actionTool{desc: ToolDesc{Info: info, ReadOnly: info.ReadOnly}, rt: rt, st: st}})
		}
		opts.PTools = reg
	}
	var res *react.Result
	var err error
	if s.Error != "" || s.Model.Error != "" {
		err = ptk.NewError(ptk.InvalidConfig, s.Error+s.Model.Error, nil)
		res = &react.Result{Trajectory: &react.Trajectory{ID: info.WorkflowExecution.ID, Goal: in.Goal, Steps: []react.Step{}, Stopped: "error: " + err.Error()}}
	} else {
		res, err = react.Run(b.std, in.Goal, opts)
	}
	out := &ReActOutput{Answer: res.Answer, Success: res.Success, Trajectory: res.Trajectory}
	if err != nil {
		out.Error = err.Error()
	}
	st.finish(res.Answer, err)
	traj := res.Trajectory
	w.record(ctx, func() *trace.Record {
		rec := record.ReActRecord(traj, err)
		rec.ID, rec.Provider = info.WorkflowExecution.ID, s.Model.Provider
		return rec
	})
	if b.canceled() {
		return out, temporal.NewCanceledError(out)
	}
	return out, nil
}

func (w *Worker) toolNames() []string {
	names := make([]string, 0, len(w.Tools))
	for _, t := range w.Tools {
		names = append(names, t.Info().Name)
	}
	return names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// actionTool is a tool of a ReAct run: its run is an activity (react.Run
// has asked the approver first).
type actionTool struct {
	desc ToolDesc
	rt   *runtime
	st   *state
}

func (t *actionTool) Info() ptk.ToolInfo { return t.desc.info() }

func (t *actionTool) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	r, _, err := t.run(ctx, args)
	return r, err
}

// run runs the action as a tool activity, and returns the ptool record the
// activity brought back (a ptool's; nil for a tool, or from a worker that
// brings none).
func (t *actionTool) run(ctx context.Context, args json.RawMessage) (ptk.Result, *ptool.Record, error) {
	t.rt.n++
	c := ptk.Call{ID: "action_" + itoa(t.rt.n), Tool: t.desc.Info.Name, Args: args}
	t.st.add(Event{Kind: "tool", Call: &c})
	run := &agent.ToolRun{Call: c}
	t.rt.RunTools(ctx, []*agent.ToolRun{run})
	rec := t.rt.records[c.ID]
	delete(t.rt.records, c.ID)
	if run.Err != nil {
		if ctx.Err() != nil {
			return ptk.Result{}, rec, ctx.Err()
		}
		return ptk.Result{Content: run.Err.Error(), IsError: true}, rec, nil
	}
	t.st.add(Event{Kind: "result", Call: &c, Text: run.Result.Content, IsError: run.Result.IsError})
	return run.Result, rec, nil
}

// actionPTool is a ptool of a ReAct run: the worker's ptool (its spec),
// run as an activity.
type actionPTool struct {
	ptool.Func
	actionTool
}

func (p *actionPTool) Info() ptk.ToolInfo { return p.actionTool.Info() }

func (p *actionPTool) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	return p.actionTool.Run(ctx, args)
}

// RunRecord runs the ptool as a tool activity and gives the record of its
// call the activity brought back, so that the run's record has the ptool's
// call and its attempts under the action, as a ReAct run's in process.
func (p *actionPTool) RunRecord(ctx context.Context, args json.RawMessage) (ptk.Result, *ptool.Record, error) {
	return p.actionTool.run(ctx, args)
}

var (
	_ ptk.Tool           = (*actionTool)(nil)
	_ ptool.Func         = (*actionPTool)(nil)
	_ ptool.RecordRunner = (*actionPTool)(nil)
	_ llm.Model          = (*remoteModel)(nil)
)

// PlanInput is a run of a workflow of ptools (package workflow's Trace).
type PlanInput struct {
	Trace           *ptkworkflow.Trace `json:"trace"`
	Concurrency     int                `json:"concurrency,omitempty"`
	ContinueOnError bool               `json:"continue_on_error,omitempty"`
	// StepTimeout bounds each step's call (DefaultModelTimeout when 0).
	StepTimeout time.Duration `json:"step_timeout,omitempty"`
}

// PlanOutput is the finished trace, and the run's error.
type PlanOutput struct {
	Trace *ptkworkflow.Trace `json:"trace"`
	Error string             `json:"error,omitempty"`
}

// planWorkflow runs a workflow of ptools: workflow.Run, each step's call
// an activity.
func (w *Worker) planWorkflow(ctx workflow.Context, in PlanInput) (*PlanOutput, error) {
	st := newState(ctx)
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, st.progress); err != nil {
		return nil, err
	}
	b := newBridge(ctx, 0)
	info := workflow.GetInfo(ctx)
	reg := w.PTools
	if reg == nil {
		reg = ptool.NewRegistry()
	}
	tr := in.Trace
	if tr == nil {
		tr = &ptkworkflow.Trace{}
	}
	tr = tr.Clone()
	if tr.ID == "" {
		tr.ID = info.WorkflowExecution.ID
	}
	rt := &planRuntime{w: w, b: b, timeout: orDefault(in.StepTimeout, DefaultModelTimeout)}
	var done *ptkworkflow.Trace
	var runErr error
	for e, err := range ptkworkflow.Stream(b.std, tr, ptkworkflow.Options{Registry: reg, Concurrency: in.Concurrency,
		ContinueOnError: in.ContinueOnError, Runtime: rt}) {
		switch e.Kind {
		case ptkworkflow.EventStepStart:
			st.p.Iteration++
			st.add(Event{Kind: "step", Iteration: e.Index + 1, Text: e.Step.PTool + " " + string(e.Step.Input)})
		case ptkworkflow.EventStepEnd:
			st.p.ToolCalls++
			text := string(e.Step.Result)
			if e.Step.Error != "" {
				text = e.Step.Error
			}
			st.add(Event{Kind: "result", Iteration: e.Index + 1, Text: text, IsError: e.Step.Status != ptkworkflow.StatusCompleted})
		case ptkworkflow.EventDone:
			done, runErr = e.Trace, err
		}
	}
	if done == nil { // a stream always ends with EventDone; a workflow must never panic
		done = tr
	}
	out := &PlanOutput{Trace: done}
	answer := ""
	if n := len(done.Steps); n > 0 && runErr == nil {
		answer = string(done.Steps[n-1].Result)
	}
	if runErr != nil {
		out.Error = runErr.Error()
	}
	st.finish(answer, runErr)
	w.record(ctx, func() *trace.Record {
		rec := record.WorkflowRecord(done, runErr)
		rec.ID = info.WorkflowExecution.ID
		return rec
	})
	if b.canceled() {
		return out, temporal.NewCanceledError(out)
	}
	return out, nil
}

// planRuntime is a workflow's workflow.Runtime in a Temporal workflow:
// the workflow's clock, and each step's call an activity.
type planRuntime struct {
	w       *Worker
	b       *bridge
	timeout time.Duration
	pending []pendingStep
}

type pendingStep struct {
	i    int
	s    ptkworkflow.Step
	f    workflow.Future
	done bool
}

var _ ptkworkflow.Runtime = (*planRuntime)(nil)

func (r *planRuntime) Now() time.Time { return workflow.Now(r.b.wctx) }

func (r *planRuntime) Start(_ context.Context, i int, s ptkworkflow.Step) {
	ctx := workflow.WithActivityOptions(r.b.wctx, workflow.ActivityOptions{
		ActivityID:          "step/" + itoa(i),
		StartToCloseTimeout: r.timeout,
		HeartbeatTimeout:    r.w.heartbeat(),
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: DefaultModelTries},
	})
	r.pending = append(r.pending, pendingStep{i: i, s: s, f: workflow.ExecuteActivity(ctx, StepActivity, s)})
}

// Next waits for the first step whose call ends, in the order the
// history has them.
func (r *planRuntime) Next(context.Context) (int, ptkworkflow.Step) {
	sel := workflow.NewSelector(r.b.wctx)
	pick := -1
	for k := range r.pending {
		sel.AddFuture(r.pending[k].f, func(workflow.Future) {
			if pick < 0 {
				pick = k
			}
		})
	}
	sel.Select(r.b.wctx)
	r.b.sync()
	p := r.pending[pick]
	r.pending = append(r.pending[:pick:pick], r.pending[pick+1:]...)
	var s ptkworkflow.Step
	if err := p.f.Get(r.b.wctx, &s); err != nil {
		s = p.s
		s.Status, s.Error = ptkworkflow.StatusFailed, activityError(err).Error()
	}
	return p.i, s
}

func itoa(n int) string { return strconv.Itoa(n) }
