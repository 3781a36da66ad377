package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/trace"
)

// The workflow logic in the SDK's test environment: no server, time that
// skips ahead while the workflow waits.

func suiteEnv(t *testing.T, w *Worker) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quiet())
	env := s.NewTestWorkflowEnvironment()
	w.Register(env)
	return env
}

func progressOf(t *testing.T, env *testsuite.TestWorkflowEnvironment) Progress {
	t.Helper()
	v, err := env.QueryWorkflow(ProgressQuery, 0)
	if err != nil {
		t.Fatal(err)
	}
	var p Progress
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSuiteApprovalWaitsForTheSignal: the run waits (a day, at no cost)
// until the decision about its call comes; a decision about another call
// does not let it go.
func TestSuiteApprovalWaitsForTheSignal(t *testing.T) {
	dir := t.TempDir()
	env := suiteEnv(t, testWorker(t, dir, ""))
	env.RegisterDelayedCallback(func() {
		p := progressOf(t, env)
		if p.State != StateWaiting || len(p.Waiting) != 1 || p.Waiting[0].Tool != "write_note" {
			t.Errorf("after an hour: %+v", p)
		}
		env.SignalWorkflow(ApprovalSignal, Decision{CallID: "call_1_9", Allow: true})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		if p := progressOf(t, env); p.State != StateWaiting {
			t.Errorf("a decision about another call let the run go: %+v", p)
		}
		env.SignalWorkflow(ApprovalSignal, Decision{CallID: "call_1_1", Allow: true})
	}, 24*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, AgentInput{Messages: agent.Prompt("approve x"), Mode: agent.ModeNative})
	var out AgentOutput
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Content != "note: noted x" || out.Duration < 24*time.Hour {
		t.Errorf("answer %q after %v", out.Content, out.Duration)
	}
}

// TestSuiteTimeout: the run's timeout is a workflow timer: a run that
// waits past it ends with TIMEOUT, its call unanswered by the user
// answered for the model.
func TestSuiteTimeout(t *testing.T) {
	env := suiteEnv(t, testWorker(t, t.TempDir(), ""))
	env.ExecuteWorkflow(AgentWorkflow, AgentInput{Messages: agent.Prompt("approve x"), Mode: agent.ModeNative, Timeout: 10 * time.Minute})
	var out AgentOutput
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error == nil || out.Error.Code != ptk.Timeout || out.Success {
		t.Fatalf("error %+v", out.Error)
	}
	last := out.Messages[len(out.Messages)-1]
	if last.Role != ptk.RoleTool || !last.IsError {
		t.Errorf("the waiting call has no answer: %+v", last)
	}
}

// TestSuitePresetAndPolicy: the preset and the policy decide before
// anyone is asked: plan refuses, yolo runs, a policy rule wins over both.
func TestSuitePresetAndPolicy(t *testing.T) {
	for _, c := range []struct {
		preset tool.Preset
		policy *tool.Policy
		want   string
	}{
		{tool.PresetPlan, nil, "Denied: the session is in plan-only mode"},
		{tool.PresetYolo, nil, "note: noted x"},
		{tool.PresetYolo, &tool.Policy{Rules: []tool.Rule{{Tool: "write_note", Action: tool.Deny}}}, "Denied: rule 1 of the workers' policy does not allow this call"},
		{tool.PresetPlan, &tool.Policy{Rules: []tool.Rule{{Tool: "write_*", Action: tool.Allow}}}, "note: noted x"},
	} {
		w := testWorker(t, t.TempDir(), "")
		w.Policy = c.policy
		env := suiteEnv(t, w)
		env.ExecuteWorkflow(AgentWorkflow, AgentInput{Messages: agent.Prompt("approve x"), Mode: agent.ModeNative, Preset: c.preset})
		var out AgentOutput
		if err := env.GetWorkflowResult(&out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.Content, c.want) {
			t.Errorf("%s %v: %q, want %q…", c.preset, c.policy != nil, out.Content, c.want)
		}
	}
}

// flaky is a model that is rate limited twice, then answers; and rejects
// native tools, which the loop must see as llm.ErrToolsUnsupported.
type flaky struct{ calls atomic.Int32 }

func (f *flaky) Generate(_ context.Context, req llm.Request) (*llm.Response, error) {
	n := f.calls.Add(1)
	switch {
	case n <= 2:
		return nil, &llm.Error{Kind: llm.ErrRateLimited, Status: 429, Message: "slow down", RetryAfter: time.Millisecond}
	case len(req.Tools) > 0:
		return nil, &llm.Error{Kind: llm.ErrToolsUnsupported, Status: 400, Message: "does not support tools"}
	}
	return &llm.Response{Content: "fine"}, nil
}

// TestSuiteModelErrorClasses: a provider's failure worth trying again is
// retried by Temporal; one that is not comes back to the loop with its
// kind (here native tools refused: the loop switches to the protocol); a
// bad request ends the run at once.
func TestSuiteModelErrorClasses(t *testing.T) {
	w := testWorker(t, t.TempDir(), "")
	m := &flaky{}
	w.Model = func(string) (llm.Model, error) { return m, nil }
	env := suiteEnv(t, w)
	env.ExecuteWorkflow(AgentWorkflow, AgentInput{Messages: agent.Prompt("hi")})
	var out AgentOutput
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if !out.Success || out.Content != "fine" || out.Mode != agent.ModePTK || m.calls.Load() != 4 {
		t.Errorf("success %v %q, mode %s, %d model calls (want 2 rate limited, 1 refused, 1 answer)", out.Success, out.Content, out.Mode, m.calls.Load())
	}

	var bad atomic.Int32
	w.Model = func(string) (llm.Model, error) {
		return llmFunc(func(context.Context, llm.Request) (*llm.Response, error) {
			bad.Add(1)
			return nil, &llm.Error{Kind: llm.ErrAuth, Status: 401, Message: "no key"}
		}), nil
	}
	env = suiteEnv(t, w)
	env.ExecuteWorkflow(AgentWorkflow, AgentInput{Messages: agent.Prompt("hi")})
	out = AgentOutput{}
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error == nil || out.Error.Code != ptk.LLMCallFailed || !strings.Contains(out.Error.Message, "no key") || bad.Load() != 1 {
		t.Errorf("error %+v after %d calls", out.Error, bad.Load())
	}
}

type llmFunc func(context.Context, llm.Request) (*llm.Response, error)

func (f llmFunc) Generate(ctx context.Context, r llm.Request) (*llm.Response, error) {
	return f(ctx, r)
}

// TestSuiteUnknownToolOrModel: a run that names a tool the worker does not
// have fails before any call, with INVALID_CONFIG; so does a model that
// cannot be had.
func TestSuiteUnknownToolOrModel(t *testing.T) {
	w := testWorker(t, t.TempDir(), "")
	env := suiteEnv(t, w)
	env.ExecuteWorkflow(AgentWorkflow, AgentInput{Messages: agent.Prompt("hi"), Tools: []string{"echo", "rm_rf"}})
	var out AgentOutput
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error == nil || out.Error.Code != ptk.InvalidConfig || !strings.Contains(out.Error.Message, `"rm_rf"`) {
		t.Errorf("error %+v", out.Error)
	}
	w.Model = func(name string) (llm.Model, error) { return nil, errors.New("no model " + name) }
	env = suiteEnv(t, w)
	env.ExecuteWorkflow(AgentWorkflow, AgentInput{Messages: agent.Prompt("hi"), Model: "gpt-9"})
	out = AgentOutput{}
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error == nil || out.Error.Code != ptk.InvalidConfig || !strings.Contains(out.Error.Message, "no model gpt-9") {
		t.Errorf("error %+v", out.Error)
	}
}

// TestSuiteRecordsTheRun: a worker with a store records the run under the
// run's id, with its model's provider, its model and tool calls and the
// workflow's times.
func TestSuiteRecordsTheRun(t *testing.T) {
	ctx := context.Background()
	store, err := trace.Open(ctx, filepath.Join(t.TempDir(), "traces.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	w := testWorker(t, t.TempDir(), "")
	w.Store = store
	model := w.Model
	w.Model = func(name string) (llm.Model, error) {
		m, err := model(name)
		return &served{m, "anthropic"}, err
	}
	env := suiteEnv(t, w)
	env.ExecuteWorkflow(AgentWorkflow, AgentInput{Messages: agent.Prompt("echo hi"), Mode: agent.ModeNative, Name: "greeting"})
	if err := env.GetWorkflowResult(nil); err != nil {
		t.Fatal(err)
	}
	runs, err := store.List(ctx, trace.Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	rec, err := store.Get(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Name != "greeting" || rec.Provider != "anthropic" || rec.Output != "echo hi" || len(rec.ModelCalls) != 2 || len(rec.ToolCalls) != 1 || rec.ToolCalls[0].Tool != "echo" {
		t.Errorf("record %+v", rec)
	}
}

// TestToolActivityRunsAMutatingCallOnce: the tool activity of a call that
// changes something, run again for the same call (a retry after the
// worker died), answers from the ledger; a call whose first run never
// finished is not run again, and the model is told.
func TestToolActivityRunsAMutatingCallOnce(t *testing.T) {
	dir := t.TempDir()
	w := testWorker(t, dir, filepath.Join(dir, "ledger.db"))
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quiet())
	env := s.NewTestActivityEnvironment()
	w.RegisterActivities(env)
	in := ToolInput{Call: ptk.Call{ID: "call_1_1", Tool: "write_note", Args: json.RawMessage(`{"text": "a"}`)}, Key: "run/1/tool/1/call_1_1"}
	var outs []ToolOutput
	for range 2 {
		v, err := env.ExecuteActivity(ToolActivity, in)
		if err != nil {
			t.Fatal(err)
		}
		var o ToolOutput
		if err := v.Get(&o); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
	}
	if got := effects(t, dir); len(got) != 1 {
		t.Errorf("effects %q, want one", got)
	}
	if outs[0].Replayed || !outs[1].Replayed || outs[1].Result.Content != outs[0].Result.Content {
		t.Errorf("outputs %+v", outs)
	}

	// a first run that never finished: its entry begun, no result
	key := "run/1/tool/2/call_2_1"
	if _, err := w.Ledger.Begin(context.Background(), key, "write_note", "dead-worker"); err != nil {
		t.Fatal(err)
	}
	e, err := w.Ledger.Get(context.Background(), key)
	if err != nil || e == nil || e.Done {
		t.Fatalf("entry %+v, %v", e, err)
	}
	r := e.answer(ptk.Call{ID: "c", Tool: "write_note"})
	if !r.IsError || !strings.Contains(r.Content, "dead-worker") || !strings.Contains(r.Content, "may or may not have taken effect") {
		t.Errorf("answer %+v", r)
	}

	// a read-only tool is not entered: it runs every time
	for range 2 {
		if _, err := env.ExecuteActivity(ToolActivity, ToolInput{Call: ptk.Call{ID: "call_3_1", Tool: "echo", Args: json.RawMessage(`{"text": "b"}`)}, Key: "run/1/tool/3/call_3_1"}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := w.Ledger.Count(context.Background(), "run/1/"); err != nil || n != 2 {
		t.Errorf("ledger entries %d, %v; want the write and the interrupted one", n, err)
	}
}

// TestToolActivityRetryableError: a tool error marked retryable fails the
// activity (Temporal retries it) and leaves no ledger entry, so the retry
// may run; any other error is the call's answer.
func TestToolActivityRetryableError(t *testing.T) {
	dir := t.TempDir()
	w := testWorker(t, dir, filepath.Join(dir, "ledger.db"))
	w.Tools = append(w.Tools,
		tool.New("busy", "Busy.", func(context.Context, struct{}) (string, error) {
			return "", ptk.Retryable(errors.New("the disk is busy"))
		}),
		tool.New("broken", "Broken.", func(context.Context, struct{}) (string, error) {
			return "", errors.New("no such thing")
		}))
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quiet())
	env := s.NewTestActivityEnvironment()
	w.RegisterActivities(env)
	_, err := env.ExecuteActivity(ToolActivity, ToolInput{Call: ptk.Call{ID: "c1", Tool: "busy", Args: json.RawMessage(`{}`)}})
	if err == nil || !strings.Contains(err.Error(), "the disk is busy") {
		t.Errorf("retryable: %v", err)
	}
	if n, _ := w.Ledger.Count(context.Background(), ""); n != 0 {
		t.Errorf("%d ledger entries after a retryable failure", n)
	}
	v, err := env.ExecuteActivity(ToolActivity, ToolInput{Call: ptk.Call{ID: "c2", Tool: "broken", Args: json.RawMessage(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	var o ToolOutput
	v.Get(&o)
	if o.Err != "no such thing" {
		t.Errorf("output %+v", o)
	}
}
