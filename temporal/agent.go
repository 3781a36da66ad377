package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/internal/durable"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// AgentInput is an agent run: the conversation and the options of
// agent.Options that a run can carry (the model, the tools and the
// approver are the worker's).
type AgentInput struct {
	// Messages is the conversation; its last turn is what the model
	// answers (agent.Prompt makes one from a prompt).
	Messages []ptk.Message `json:"messages"`
	// Model names the model at the worker; "" is the worker's default.
	Model string `json:"model,omitempty"`
	// Tools names the worker's tools the model may call; none is all.
	Tools []string `json:"tools,omitempty"`
	// Instructions replace the worker's.
	Instructions string     `json:"instructions,omitempty"`
	Mode         agent.Mode `json:"mode,omitempty"`
	// Preset replaces the worker's approval preset.
	Preset tool.Preset `json:"preset,omitempty"`

	MaxIterations   int           `json:"max_iterations,omitempty"`
	MaxToolCalls    int           `json:"max_tool_calls,omitempty"`
	MaxCost         float64       `json:"max_cost,omitempty"`
	MaxTokens       int           `json:"max_tokens,omitempty"`
	MaxOutputTokens int           `json:"max_output_tokens,omitempty"`
	Temperature     *float64      `json:"temperature,omitempty"`
	AnswerAtLimit   bool          `json:"answer_at_limit,omitempty"`
	Strict          bool          `json:"strict,omitempty"`
	AllowDuplicates bool          `json:"allow_duplicates,omitempty"`
	MaxResultBytes  int           `json:"max_result_bytes,omitempty"`
	MaxResultLines  int           `json:"max_result_lines,omitempty"`
	MaxParallel     int           `json:"max_parallel,omitempty"`
	MaxToolRetries  int           `json:"max_tool_retries,omitempty"`
	ToolRetryDelay  time.Duration `json:"tool_retry_delay,omitempty"`
	// Timeout bounds the whole run (a workflow timer), ToolTimeout each
	// tool call and ModelTimeout each model call (the activities' start to
	// close timeouts; DefaultToolTimeout and DefaultModelTimeout when 0).
	Timeout      time.Duration `json:"timeout,omitempty"`
	ToolTimeout  time.Duration `json:"tool_timeout,omitempty"`
	ModelTimeout time.Duration `json:"model_timeout,omitempty"`
	// ModelTries caps the tries of one model call that fails in a way
	// worth trying again (DefaultModelTries when 0).
	ModelTries int `json:"model_tries,omitempty"`
	// Name names the run in the trace store.
	Name string `json:"name,omitempty"`
}

// AgentOutput is what an agent run did: agent.Result, as JSON (its
// Result method gives the agent.Result back). It is the shape ptk and
// ptk-temporal share (internal/durable).
type AgentOutput = durable.Output

// ToolCall is one call answered in a run.
type ToolCall = durable.ToolCall

// RunError is a failed run's ptk.Error.
type RunError = durable.RunError

func output(res *agent.Result) *AgentOutput { return durable.NewOutput(res) }

// runSetup is what a run learns when it starts, recorded in its history
// (a side effect): its tools and what its model can do, as the worker
// that started it had them.
type runSetup struct {
	Tools        []ToolDesc `json:"tools"`
	Model        ModelDesc  `json:"model"`
	Instructions string     `json:"instructions"`
	Error        string     `json:"error,omitempty"`
}

func (w *Worker) setup(ctx workflow.Context, model string, tools []string) runSetup {
	var s runSetup
	v := workflow.SideEffect(ctx, func(workflow.Context) any {
		s := runSetup{Model: w.describeModel(model), Instructions: w.Instructions}
		ts, err := w.tools(tools)
		if err != nil {
			s.Error = err.Error()
		}
		s.Tools = ts
		return s
	})
	if err := v.Get(&s); err != nil {
		s.Error = err.Error()
	}
	return s
}

// agentWorkflow is an agent run: agent.Run, with the model and tool calls
// as activities, the clock of the workflow, and approvals as signals.
func (w *Worker) agentWorkflow(ctx workflow.Context, in AgentInput) (*AgentOutput, error) {
	st := newState(ctx)
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, st.progress); err != nil {
		return nil, err
	}
	b := newBridge(ctx, in.Timeout)
	s := w.setup(ctx, in.Model, in.Tools)
	var tools []ptk.Tool
	for _, d := range s.Tools {
		tools = append(tools, remoteTool{d.info()})
	}
	instructions := in.Instructions
	if instructions == "" {
		instructions = s.Instructions
	}
	rt := &runtime{w: w, b: b, maxBytes: in.MaxResultBytes, maxLines: in.MaxResultLines,
		timeout: orDefault(in.ToolTimeout, DefaultToolTimeout), retries: in.MaxToolRetries, delay: in.ToolRetryDelay}
	var m llm.Model = &remoteModel{w: w, b: b, name: in.Model, timeout: orDefault(in.ModelTimeout, DefaultModelTimeout), tries: in.ModelTries}
	if s.Model.TextCompleter {
		m = remoteTextModel{m.(*remoteModel)}
	}
	preset := in.Preset
	if preset == "" {
		preset = w.preset()
	}
	opts := agent.Options{
		Model: m, ModelName: in.Model, Temperature: in.Temperature, MaxOutputTokens: in.MaxOutputTokens,
		Instructions: instructions, Tools: tools, Mode: in.Mode,
		MaxIterations: in.MaxIterations, MaxToolCalls: in.MaxToolCalls, MaxCost: in.MaxCost, MaxTokens: in.MaxTokens,
		Price: s.Model.Price, AnswerAtLimit: in.AnswerAtLimit, Strict: in.Strict, AllowDuplicates: in.AllowDuplicates,
		MaxToolRetries: in.MaxToolRetries, Approver: &approver{w: w, b: b, st: st, preset: preset},
		MaxResultBytes: in.MaxResultBytes, MaxResultLines: in.MaxResultLines, MaxParallel: in.MaxParallel,
		Runtime: rt,
	}
	info := workflow.GetInfo(ctx)
	sink := &recordSink{}
	rec := record.NewAgentClock(sink, trace.Run{ID: info.WorkflowExecution.ID, Name: in.Name, Model: in.Model, Provider: s.Model.Provider,
		Mode: string(orMode(in.Mode)), Input: lastUser(in.Messages)}, rt.Now)

	var res *agent.Result
	var runErr error
	if s.Error == "" && s.Model.Error != "" {
		s.Error = "the model " + strconv.Quote(in.Model) + ": " + s.Model.Error
	}
	if s.Error != "" {
		res = &agent.Result{Messages: in.Messages, Error: ptk.NewError(ptk.InvalidConfig, s.Error, nil)}
		runErr = res.Error
		rec.Event(agent.Event{Kind: agent.EventDone, Run: res}, runErr)
	} else {
		for e, err := range agent.Stream(b.std, in.Messages, opts) {
			st.event(e)
			rec.Event(e, err)
			if e.Kind == agent.EventDone {
				res, runErr = e.Run, err
			}
		}
	}
	out := output(res)
	st.finish(out.Content, runErr)
	w.record(ctx, sink.build)
	if b.canceled() {
		return out, temporal.NewCanceledError(out)
	}
	return out, nil
}

// record writes the run's record, also when the run was canceled.
func (w *Worker) record(ctx workflow.Context, build func() *trace.Record) {
	if w.Store == nil || build == nil {
		return
	}
	rec := build()
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 10, MaximumInterval: 30 * time.Second}})
	if err := workflow.ExecuteActivity(dctx, RecordActivity, rec).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("the run was not recorded", "error", err)
	}
}

// recordSink keeps the record record.Agent hands over.
type recordSink struct{ build func() *trace.Record }

func (s *recordSink) RecordFunc(build func() *trace.Record) { s.build = build }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func orMode(m agent.Mode) agent.Mode {
	if m == "" {
		return agent.ModeAuto
	}
	return m
}

func lastUser(msgs []ptk.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == ptk.RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// bridge is a run's two contexts: the workflow's, which its activities,
// timers and waits use, and the context.Context the loop is given. A
// cancel request or the run's timeout cancels both, with the cause the loop
// reads (context.Canceled or context.DeadlineExceeded).
type bridge struct {
	wctx     workflow.Context
	cancelW  workflow.CancelFunc
	std      context.Context
	cancelS  context.CancelCauseFunc
	timedOut bool
}

func newBridge(ctx workflow.Context, timeout time.Duration) *bridge {
	b := &bridge{}
	b.wctx, b.cancelW = workflow.WithCancel(ctx)
	b.std, b.cancelS = context.WithCancelCause(context.Background())
	if timeout > 0 {
		workflow.Go(b.wctx, func(c workflow.Context) {
			if err := workflow.NewTimer(c, timeout).Get(c, nil); err == nil {
				b.timedOut = true
				b.cancelW()
				b.sync()
			}
		})
	}
	return b
}

// sync cancels the loop's context once the workflow's is: called after
// each wait on the workflow's context.
func (b *bridge) sync() {
	if b.wctx.Err() != nil && b.std.Err() == nil {
		cause := context.Canceled
		if b.timedOut {
			cause = context.DeadlineExceeded
		}
		b.cancelS(cause)
	}
}

// canceled reports a run stopped by a cancel request (not its timeout).
func (b *bridge) canceled() bool { return b.wctx.Err() != nil && !b.timedOut }

// remoteModel is the run's model: each call an activity.
type remoteModel struct {
	w       *Worker
	b       *bridge
	name    string
	timeout time.Duration
	tries   int
	n       int
}

var _ llm.Model = (*remoteModel)(nil)

func (m *remoteModel) Generate(_ context.Context, req llm.Request) (*llm.Response, error) {
	m.n++
	tries := m.tries
	if tries <= 0 {
		tries = DefaultModelTries
	}
	ctx := workflow.WithActivityOptions(m.b.wctx, workflow.ActivityOptions{
		ActivityID:          "model/" + strconv.Itoa(m.n),
		StartToCloseTimeout: m.timeout,
		HeartbeatTimeout:    m.w.heartbeat(),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, MaximumAttempts: int32(tries)},
	})
	var resp llm.Response
	err := workflow.ExecuteActivity(ctx, ModelActivity, ModelInput{Model: m.name, Request: req}).Get(ctx, &resp)
	m.b.sync()
	if err != nil {
		return nil, modelError(err)
	}
	return &resp, nil
}

// remoteTextModel is the run's model when the worker's is a
// llm.TextCompleter, so that the loop sets the request's prompt.
type remoteTextModel struct{ *remoteModel }

func (remoteTextModel) CompletesText() {}

var _ llm.TextCompleter = remoteTextModel{}

// remoteTool is one of the run's tools as the loop sees it: its info. It
// never runs in the workflow: the runtime runs it as an activity.
type remoteTool struct{ info ptk.ToolInfo }

func (t remoteTool) Info() ptk.ToolInfo { return t.info }

func (t remoteTool) Run(context.Context, json.RawMessage) (ptk.Result, error) {
	return ptk.Result{}, errors.New("tool " + t.info.Name + " runs only as an activity")
}

// runtime is the loop's agent.Runtime in a workflow: the workflow's clock,
// and each tool call an activity.
type runtime struct {
	w                  *Worker
	b                  *bridge
	maxBytes, maxLines int
	timeout            time.Duration
	retries            int
	delay              time.Duration
	n                  int
	// records holds the ptool records the tool activities brought back,
	// by call id, until the ptool action that asked takes its own.
	records map[string]*ptool.Record
}

var _ agent.Runtime = (*runtime)(nil)

func (r *runtime) Now() time.Time { return workflow.Now(r.b.wctx) }

// RunTools starts an activity for each call (at once: they are read-only
// when there are several) and waits for them all. A tool's error marked
// retryable is retried by Temporal, MaxToolRetries times.
func (r *runtime) RunTools(_ context.Context, calls []*agent.ToolRun) {
	retries := r.retries
	switch {
	case retries == 0:
		retries = agent.DefaultMaxToolRetries
	case retries < 0:
		retries = 0
	}
	delay := r.delay
	if delay <= 0 {
		delay = 200 * time.Millisecond
	}
	futures := make([]workflow.Future, len(calls))
	run := workflow.GetInfo(r.b.wctx).WorkflowExecution
	for i, c := range calls {
		r.n++
		id := "tool/" + strconv.Itoa(r.n) + "/" + c.Call.ID
		ctx := workflow.WithActivityOptions(r.b.wctx, workflow.ActivityOptions{
			ActivityID:          id,
			StartToCloseTimeout: r.timeout,
			HeartbeatTimeout:    r.w.heartbeat(),
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: delay, BackoffCoefficient: 2,
				MaximumAttempts: int32(retries + 1)},
		})
		futures[i] = workflow.ExecuteActivity(ctx, ToolActivity, ToolInput{Call: c.Call, Key: run.ID + "/" + run.RunID + "/" + id,
			MaxResultBytes: r.maxBytes, MaxResultLines: r.maxLines})
	}
	for i, c := range calls {
		start := workflow.Now(r.b.wctx)
		var out ToolOutput
		err := futures[i].Get(r.b.wctx, &out)
		r.b.sync()
		switch {
		case err != nil:
			c.Err, c.Tries = activityError(err), retries+1
			c.Duration = workflow.Now(r.b.wctx).Sub(start)
		default:
			c.Result, c.Tries, c.Duration = out.Result, max(out.Attempt, 1), out.Duration
			if out.Err != "" {
				c.Err = errors.New(out.Err)
			}
			if out.Record != nil {
				if r.records == nil {
					r.records = map[string]*ptool.Record{}
				}
				r.records[c.Call.ID] = out.Record
			}
		}
	}
}

// activityError is a failed tool activity's error as the model reads it.
func activityError(err error) error {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return errors.New(ae.Message())
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return fmt.Errorf("the call timed out (%s)", te.TimeoutType())
	}
	if temporal.IsCanceledError(err) {
		return context.Canceled
	}
	return err
}

// Decision is an approval signal's payload: whether the call CallID may
// run, and, when not, why (the model reads it).
type Decision struct {
	CallID string `json:"call_id"`
	Allow  bool   `json:"allow"`
	Reason string `json:"reason,omitempty"`
}

// approver asks the worker's policy and preset (once, recorded), and waits
// for an ApprovalSignal about the calls they leave to a person.
type approver struct {
	w       *Worker
	b       *bridge
	st      *state
	preset  tool.Preset
	decided map[string]Decision
}

var _ tool.Approver = (*approver)(nil)

func (a *approver) Approve(_ context.Context, call ptk.Call, info ptk.ToolInfo) (tool.Verdict, error) {
	// what the policy and the preset say, decided once: a worker whose
	// policy file changed does not change a run's past
	var d struct {
		Action string `json:"action"`
		Rule   int    `json:"rule,omitempty"`
	}
	v := workflow.SideEffect(a.b.wctx, func(workflow.Context) any {
		t, _ := a.w.tool(call.Tool)
		d := d
		if d.Action, d.Rule = a.w.Policy.Decide(t, call); d.Action != "" {
			return d
		}
		var subject tool.Subject
		if t != nil {
			subject = tool.SubjectOf(t, call.Args)
		}
		d.Action = a.preset.Decide(subject)
		return d
	})
	if err := v.Get(&d); err != nil {
		return tool.Verdict{}, err
	}
	switch {
	case d.Action == tool.Allow:
		return tool.Verdict{Allow: true}, nil
	case d.Action == tool.Deny && d.Rule > 0:
		return tool.Verdict{Reason: "rule " + strconv.Itoa(d.Rule) + " of the workers' policy does not allow this call"}, nil
	case d.Action == tool.Deny:
		return tool.Verdict{Reason: a.preset.DenyReason()}, nil
	}
	a.st.wait(call)
	defer a.st.done(call.ID)
	if a.decided == nil {
		a.decided = map[string]Decision{}
	}
	ch := workflow.GetSignalChannel(a.b.wctx, ApprovalSignal)
	for {
		if d, ok := a.decided[call.ID]; ok {
			delete(a.decided, call.ID)
			reason := d.Reason
			if !d.Allow && reason == "" {
				reason = "the user did not approve the call"
			}
			return tool.Verdict{Allow: d.Allow, Reason: reason}, nil
		}
		var d Decision
		sel := workflow.NewSelector(a.b.wctx)
		sel.AddReceive(ch, func(c workflow.ReceiveChannel, _ bool) { c.Receive(a.b.wctx, &d) })
		sel.AddReceive(a.b.wctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(a.b.wctx)
		a.b.sync()
		if a.b.wctx.Err() != nil {
			return tool.Verdict{}, a.b.std.Err()
		}
		if d.CallID != "" {
			a.decided[d.CallID] = d
		}
	}
}
