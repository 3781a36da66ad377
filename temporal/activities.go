package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/workflow"
)

// ModelInput is a model call: the model's name at the worker and the
// request.
type ModelInput struct {
	Model   string      `json:"model"`
	Request llm.Request `json:"request"`
}

// The error types of failed model calls, one per llm error kind, so that a
// workflow reads back the kind an activity failed with.
var modelKinds = []struct {
	name string
	kind error
}{
	{"llm.auth", llm.ErrAuth},
	{"llm.model_not_found", llm.ErrModelNotFound},
	{"llm.tools_unsupported", llm.ErrToolsUnsupported},
	{"llm.rate_limited", llm.ErrRateLimited},
	{"llm.server", llm.ErrServer},
	{"llm.connection", llm.ErrConnection},
	{"llm.bad_request", llm.ErrBadRequest},
	{"llm.bad_response", llm.ErrBadResponse},
}

// modelActivity makes one model call. A provider's failure that is worth
// trying again (rate limits, server errors, broken connections) is retried
// by Temporal, after the pause the provider asked for when it did; any
// other failure is not, and goes back to the loop with its kind.
func (w *Worker) modelActivity(ctx context.Context, in ModelInput) (*llm.Response, error) {
	if w.Model == nil {
		return nil, temporal.NewNonRetryableApplicationError(errNoModels.Error(), "ptk.config", nil)
	}
	m, err := w.Model(in.Model)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "ptk.config", nil)
	}
	stop := w.beat(ctx, "model")
	resp, err := m.Generate(ctx, in.Request)
	stop()
	if err != nil {
		return nil, modelFailure(err)
	}
	if resp == nil {
		return nil, modelFailure(&llm.Error{Kind: llm.ErrBadResponse, Message: "the model returned no response"})
	}
	return resp, nil
}

// modelFailure is a failed model call as an activity's error.
func modelFailure(err error) error {
	typ := "llm.error"
	for _, k := range modelKinds {
		if errors.Is(err, k.kind) {
			typ = k.name
			break
		}
	}
	opts := temporal.ApplicationErrorOptions{NonRetryable: !llm.Retryable(err)}
	var le *llm.Error
	if errors.As(err, &le) && le.RetryAfter > 0 {
		opts.NextRetryDelay = le.RetryAfter
	}
	msg := err.Error()
	if le != nil {
		msg = le.Message
	}
	return temporal.NewApplicationErrorWithOptions(msg, typ, opts)
}

// modelError is an activity's failure read back as the model's error: an
// *llm.Error of the kind the activity failed with.
func modelError(err error) error {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		return &llm.Error{Kind: llm.ErrConnection, Message: err.Error(), Err: err}
	}
	for _, k := range modelKinds {
		if ae.Type() == k.name {
			return &llm.Error{Kind: k.kind, Message: ae.Message(), Err: err}
		}
	}
	return &llm.Error{Kind: llm.ErrBadResponse, Message: ae.Message(), Err: err}
}

// ToolInput is a tool call.
type ToolInput struct {
	Call ptk.Call `json:"call"`
	// Key is the call's key in the ledger: the run's ids and the call's
	// place in the run, the same for every try of the call.
	Key string `json:"key"`
	// MaxResultBytes and MaxResultLines cap the result (tool.Limit).
	MaxResultBytes int `json:"max_result_bytes,omitempty"`
	MaxResultLines int `json:"max_result_lines,omitempty"`
}

// ToolOutput is what a tool call did.
type ToolOutput struct {
	Result ptk.Result `json:"result"`
	// Err is the error the tool returned, which the model is told of.
	Err      string        `json:"error,omitempty"`
	Attempt  int           `json:"attempt"`
	Duration time.Duration `json:"duration_ns"`
	// Replayed: the ledger answered, the tool did not run again.
	Replayed bool `json:"replayed,omitempty"`
	// Record is a ptool's record of its call (its attempts, tokens and
	// cost), each attempt's text capped at trace.MaxResultBytes.
	Record *ptool.Record `json:"record,omitempty"`
}

// errTypeTool is the type of a tool's retryable failure.
const errTypeTool = "ptk.tool"

// toolActivity runs one tool call. An error the tool marks retryable is
// the activity's failure, which Temporal retries; any other error is the
// call's answer. A tool that is not read-only is entered in the ledger
// first, and a retry of a call the ledger has is not run again.
func (w *Worker) toolActivity(ctx context.Context, in ToolInput) (*ToolOutput, error) {
	start := time.Now()
	info := activity.GetInfo(ctx)
	out := &ToolOutput{Attempt: int(info.Attempt)}
	t, ok := w.tool(in.Call.Tool)
	if !ok {
		// another worker may have it (an MCP server that did not start here)
		return nil, temporal.NewApplicationError("this worker ("+w.identity()+") has no tool "+in.Call.Tool, errTypeTool)
	}
	if f, ok := t.(ptool.Func); ok {
		t = &recordingPTool{Func: f, rec: &out.Record}
	}
	t = tool.Wrap(t, tool.Limit(max(in.MaxResultBytes, 0), max(in.MaxResultLines, 0)))
	readOnly := t.Info().ReadOnly
	key := in.Key
	if key == "" {
		key = info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID + "/" + info.ActivityID
	}
	if !readOnly && w.Ledger != nil {
		prior, err := w.Ledger.Begin(ctx, key, in.Call.Tool, w.identity())
		if err != nil {
			// the tool does not run without its entry
			return nil, temporal.NewApplicationError("the ledger: "+err.Error(), "ptk.ledger")
		}
		if prior != nil {
			out.Result, out.Replayed = prior.answer(in.Call), true
			out.Duration = time.Since(start)
			return out, nil
		}
	}
	stop := w.beat(ctx, in.Call.ID)
	res, err := runTool(ctx, t, in.Call.Args)
	stop()
	out.Duration = time.Since(start)
	if err != nil && ptk.IsRetryable(err) && ctx.Err() == nil {
		if !readOnly && w.Ledger != nil {
			w.Ledger.Forget(context.WithoutCancel(ctx), key) // it did not take effect: it may run again
		}
		return nil, temporal.NewApplicationError(err.Error(), errTypeTool)
	}
	out.Result = res
	if err != nil {
		out.Err = err.Error()
	}
	if !readOnly && w.Ledger != nil {
		if lerr := w.Ledger.Finish(context.WithoutCancel(ctx), key, out.Result, out.Err); lerr != nil {
			activity.GetLogger(ctx).Warn("the ledger did not take a call's result", "call", in.Call.ID, "error", lerr)
		}
	}
	return out, nil
}

// recordingPTool runs a ptool as a tool and keeps the Record of its call
// (ptool.RunRecord), its attempts' text capped as the trace store caps it,
// so that the activity's output stays small.
type recordingPTool struct {
	ptool.Func
	rec **ptool.Record
}

func (p *recordingPTool) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	r, rec, err := ptool.RunRecord(ctx, p.Func, args)
	if rec != nil {
		c := *rec
		c.Attempts = slices.Clone(c.Attempts)
		for i := range c.Attempts {
			c.Attempts[i].Raw, _ = trace.Cap(c.Attempts[i].Raw, trace.MaxResultBytes)
		}
		*p.rec = &c
	}
	return r, err
}

// runTool runs t, turning a panic into an error.
func runTool(ctx context.Context, t ptk.Tool, args json.RawMessage) (res ptk.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the tool panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return t.Run(ctx, args)
}

// stepActivity runs one step of a workflow of ptools.
func (w *Worker) stepActivity(ctx context.Context, s workflow.Step) (*workflow.Step, error) {
	if w.PTools == nil {
		return nil, temporal.NewNonRetryableApplicationError("the worker has no ptools", "ptk.config", nil)
	}
	stop := w.beat(ctx, s.PTool)
	workflow.RunStep(ctx, w.PTools, &s)
	stop()
	return &s, nil
}

// recordActivity writes a run's record to the store. Writing a record
// whose id is stored already does nothing, so a retry is harmless.
func (w *Worker) recordActivity(ctx context.Context, rec *trace.Record) error {
	if w.Store == nil || rec == nil {
		return nil
	}
	return w.Store.Write(ctx, rec)
}
