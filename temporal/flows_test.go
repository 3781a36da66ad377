package temporal

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace"
	ptkworkflow "github.com/ptkit/ptk/workflow"
)

type order struct {
	Text string `json:"text"`
}

type items struct {
	Items []string `json:"items"`
}

// fixed is a model that always answers text, served by "ollama".
func fixed(text string) llm.Model {
	return &served{llmFunc(func(context.Context, llm.Request) (*llm.Response, error) {
		return &llm.Response{Content: text, Usage: ptk.Usage{PromptTokens: 10, CompletionTokens: 5}}, nil
	}), "ollama"}
}

// served is a model that names its provider, as a client does (a pointer:
// a ptool keys its caches by its model).
type served struct {
	llm.Model
	provider string
}

func (s *served) ProviderName() string { return s.provider }

var _ llm.ProviderNamer = (*served)(nil)

// shop is the ptools of the tests of ReAct and workflows: extract_items
// and count_items, each answering from a fixed model (so any worker, any
// retry, answers the same).
func shop(t *testing.T) *ptool.Registry {
	t.Helper()
	reg := ptool.NewRegistry()
	for _, f := range []ptool.Func{
		ptool.New[order, items]("extract_items", "List the food items ordered.", ptool.WithModel(fixed(`<answer>{"items": ["pizza", "salad"]}</answer>`))),
		ptool.New[items, int]("count_items", "Count the items.", ptool.WithModel(fixed(`<answer>2</answer>`))),
	} {
		if err := reg.Register(f); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// reactModel is a ReAct run's model, by how far the run is: a ptool
// action, then a tool action, then the answer.
func reactModel(_ context.Context, req llm.Request) (*llm.Response, error) {
	n := 0
	for _, m := range req.Messages {
		if m.Role == ptk.RoleAssistant {
			n++
		}
	}
	call := func(tool, args string) string {
		return "\n<PTK_CALL>\n{\"tool\": \"" + tool + "\", \"args\": " + args + "}\n</PTK_CALL>"
	}
	if goal(req) == "note" {
		if n == 0 {
			return &llm.Response{Content: "A note." + call("write_note", `{"text": "react"}`)}, nil
		}
		return &llm.Response{Content: "<answer>written</answer>"}, nil
	}
	text := "The items first." + call("extract_items", `{"text": "a pizza and a salad"}`)
	switch n {
	case 1:
		text = "Echo the first." + call("echo", `{"text": "pizza"}`)
	case 2:
		text = "Done.\n<answer>pizza</answer>"
	}
	return &llm.Response{Content: text, Usage: ptk.Usage{PromptTokens: 10, CompletionTokens: 5}}, nil
}

// goal is "note" when a ReAct run's goal asks for one.
func goal(req llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == ptk.RoleUser && strings.Contains(m.Content, "Write a note") {
			return "note"
		}
	}
	return ""
}

// TestReActApproval: a ReAct action of a tool that changes something
// waits for the approval signal, as an agent run's call does, and runs
// once it comes.
func TestReActApproval(t *testing.T) {
	c := dial(t)
	dir := t.TempDir()
	q := queue(t)
	startWorker(t, c, q, &Worker{
		Model: func(string) (llm.Model, error) { return llmFunc(reactModel), nil },
		Tools: testTools(dir), Heartbeat: 5 * time.Second,
	})
	ctx := context.Background()
	run, err := StartReAct(ctx, c, ReActInput{Goal: "Write a note."}, StartOptions{TaskQueue: q})
	if err != nil {
		t.Fatal(err)
	}
	var p *Progress
	waitFor(t, 30*time.Second, "the run waiting", func() bool {
		p, err = Status(ctx, c, run.GetID(), 0)
		return err == nil && p.State == StateWaiting
	})
	if len(p.Waiting) != 1 || p.Waiting[0].Tool != "write_note" || len(effects(t, dir)) != 0 {
		t.Fatalf("waiting %+v, effects %q", p.Waiting, effects(t, dir))
	}
	if err := Approve(ctx, c, run.GetID(), Decision{CallID: p.Waiting[0].CallID, Allow: true}); err != nil {
		t.Fatal(err)
	}
	gctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var ro ReActOutput
	if err := run.Get(gctx, &ro); err != nil {
		t.Fatal(err)
	}
	if !ro.Success || ro.Answer != "written" || strings.Join(effects(t, dir), " ") != "write_note_react" {
		t.Errorf("answer %q (success %v), effects %q", ro.Answer, ro.Success, effects(t, dir))
	}
}

// TestReActAndWorkflowRuns: a ReAct run (a ptool action, a tool action,
// an answer) and a workflow of two ptools, the second taking the first's
// result, run on the real server, each call an activity; their progress
// shows their steps, and their histories replay with the SDK's
// determinism check.
func TestReActAndWorkflowRuns(t *testing.T) {
	c := dial(t)
	dir := t.TempDir()
	q := queue(t)
	ctx := context.Background()
	store, err := trace.Open(ctx, filepath.Join(dir, "traces.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	w := &Worker{
		Model:     func(string) (llm.Model, error) { return &served{llmFunc(reactModel), "anthropic"}, nil },
		Tools:     testTools(dir),
		PTools:    shop(t),
		Heartbeat: 5 * time.Second,
		Store:     store,
	}
	startWorker(t, c, q, w)
	gctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	run, err := StartReAct(ctx, c, ReActInput{Goal: "What is the first item of 'a pizza and a salad'?"}, StartOptions{TaskQueue: q})
	if err != nil {
		t.Fatal(err)
	}
	var ro ReActOutput
	if err := run.Get(gctx, &ro); err != nil {
		t.Fatal(err)
	}
	if !ro.Success || ro.Answer != "pizza" || len(ro.Trajectory.Steps) != 3 {
		t.Fatalf("react: %+v", ro)
	}
	if s := ro.Trajectory.Steps; !s[0].Action.PTool || s[0].Observation.Result != `{"items":["pizza","salad"]}` ||
		s[1].Action.PTool || s[1].Observation.Result != "pizza" {
		t.Errorf("trajectory: %+v / %+v", s[0], s[1])
	}
	if ro.Trajectory.ID != run.GetID() {
		t.Errorf("trajectory id %q, run %q", ro.Trajectory.ID, run.GetID())
	}
	p, err := Status(ctx, c, run.GetID(), 0)
	if err != nil || p.State != StateDone || p.Answer != "pizza" {
		t.Errorf("react progress %+v, %v", p, err)
	}
	reactHistory := history(t, c, run.GetID())
	// The run's record says who served its model, and has its ptool
	// action's own call under the action, with the ptool's attempt (its
	// model call) under that: the tool activity brought the ptool's record
	// back with the result.
	if rec, err := store.Get(ctx, run.GetID()); err != nil {
		t.Errorf("the ReAct run's record: %v", err)
	} else if rec.Kind != trace.KindReAct || rec.Provider != "anthropic" || len(rec.ModelCalls) != 4 || len(rec.ToolCalls) != 2 || len(rec.PtoolCalls) != 1 {
		t.Errorf("the ReAct run's record: kind %s, provider %q, %d model calls, %d tool calls, %d ptool calls", rec.Kind, rec.Provider, len(rec.ModelCalls), len(rec.ToolCalls), len(rec.PtoolCalls))
	} else if pc := rec.PtoolCalls[0]; pc.Ptool != "extract_items" || string(pc.Output) != `{"items":["pizza","salad"]}` || len(pc.Attempts) != 1 {
		t.Errorf("the ptool action's call: %+v", pc)
	} else if under := trace.SpanID(trace.SpanPtool, 0); !slices.ContainsFunc(rec.ModelCalls, func(m trace.ModelCall) bool { return m.Parent == under }) {
		t.Errorf("no model call under the ptool call %s: %+v", under, rec.ModelCalls)
	}

	tr := &ptkworkflow.Trace{Goal: "count an order", Steps: []ptkworkflow.Step{
		{PTool: "extract_items", Args: ptkworkflow.Args(order{"a pizza and a salad"})},
		{PTool: "count_items", Args: ptkworkflow.Args(map[string]any{"items": ptkworkflow.Ref("step_0", "/items")})},
	}}
	run, err = StartPlan(ctx, c, PlanInput{Trace: tr}, StartOptions{TaskQueue: q})
	if err != nil {
		t.Fatal(err)
	}
	var po PlanOutput
	if err := run.Get(gctx, &po); err != nil {
		t.Fatal(err)
	}
	if po.Error != "" || len(po.Trace.Steps) != 2 || string(po.Trace.Steps[1].Result) != "2" ||
		string(po.Trace.Steps[1].Input) != `{"items":["pizza","salad"]}` {
		b, _ := json.Marshal(po)
		t.Fatalf("workflow: %s", b)
	}
	p, err = Status(ctx, c, run.GetID(), 0)
	var steps []string
	for _, e := range p.Events {
		if e.Kind == "step" {
			steps = append(steps, strings.Fields(e.Text)[0])
		}
	}
	if err != nil || p.State != StateDone || strings.Join(steps, " ") != "extract_items count_items" {
		t.Errorf("workflow progress %+v, %v", p, err)
	}
	planHistory := history(t, c, run.GetID())
	// A workflow's record: the provider of the model its ptools' steps
	// asked (not the worker's default model's).
	if rec, err := store.Get(ctx, run.GetID()); err != nil {
		t.Errorf("the workflow's record: %v", err)
	} else if rec.Kind != trace.KindWorkflow || rec.Provider != "ollama" || len(rec.PtoolCalls) != 2 || len(rec.ModelCalls) != 2 {
		t.Errorf("the workflow's record: kind %s, provider %q, %d ptool calls, %d model calls", rec.Kind, rec.Provider, len(rec.PtoolCalls), len(rec.ModelCalls))
	}

	replayer := worker.NewWorkflowReplayer()
	w.RegisterWorkflows(replayer)
	if err := replayer.ReplayWorkflowHistory(quiet(), reactHistory); err != nil {
		t.Errorf("the ReAct run's history does not replay: %v", err)
	}
	if err := replayer.ReplayWorkflowHistory(quiet(), planHistory); err != nil {
		t.Errorf("the workflow's history does not replay: %v", err)
	}
}
