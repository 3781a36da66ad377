package react

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/turn"
	"github.com/ptkit/ptk/workflow"
)

var update = flag.Bool("update", false, "rewrite the golden files")

type Order struct {
	Text string `json:"text"`
}
type Item struct {
	Item string `json:"item"`
}

func call(name, args string) string {
	return "\n<PTK_CALL>\n{\"tool\": \"" + name + "\", \"args\": " + args + "}\n</PTK_CALL>"
}

// shop is a ptool that extracts items (scripted) and a tool that prices one.
func shop(t *testing.T, extract ...llmtest.Reply) (*ptool.Registry, ptk.Tool) {
	t.Helper()
	reg := ptool.NewRegistry()
	if err := reg.Register(ptool.New[Order, []string]("extract_items", "List the food items ordered.",
		ptool.WithModel(llmtest.New(extract...)))); err != nil {
		t.Fatal(err)
	}
	price := tool.New("price", "The price of an item, in dollars.", func(_ context.Context, in Item) (int, error) {
		switch in.Item {
		case "pizza":
			return 9, nil
		case "salad":
			return 5, nil
		}
		return 0, errors.New("no price for " + in.Item)
	})
	return reg, price
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestTwoActions(t *testing.T) {
	reg, price := shop(t, llmtest.Text(`<answer>["pizza", "salad"]</answer>`))
	model := llmtest.New(
		llmtest.Text("I need the items first."+call("extract_items", `{"text": "a pizza and a salad"}`)),
		llmtest.Text("The first item is pizza; its price:"+call("price", `{"item": "pizza"}`)),
		llmtest.Text("The pizza costs 9 dollars.\n<answer>9</answer>"),
	)
	var echo strings.Builder
	var observed *Trajectory
	res, err := Run(context.Background(), "What does the first item of 'a pizza and a salad' cost?",
		Options{Model: model, PTools: reg, Tools: []ptk.Tool{price}, Echo: &echo, Observer: func(t *Trajectory) { observed = t }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.Answer != "9" || observed != res.Trajectory {
		t.Fatalf("answer %q success %v", res.Answer, res.Success)
	}
	tr := res.Trajectory
	if len(tr.Steps) != 3 || !tr.Steps[0].Action.PTool || tr.Steps[1].Action.PTool || tr.Steps[2].Action != nil {
		t.Fatalf("steps %+v", tr.Steps)
	}
	if o := tr.Steps[1].Observation; o.Result != "9" || !o.Success {
		t.Errorf("observation %+v", o)
	}
	// the trajectory round-trips as JSON
	b1, _ := json.Marshal(tr)
	var back Trajectory
	if err := json.Unmarshal(b1, &back); err != nil {
		t.Fatal(err)
	}
	if b2, _ := json.Marshal(&back); string(b1) != string(b2) {
		t.Errorf("round trip:\n%s\n%s", b1, b2)
	}
	golden(t, "two_actions.ptp", tr.PTP())
	golden(t, "two_actions.echo", echo.String())

	// the trajectory becomes a workflow of the same calls, the price's
	// argument a reference to the first item, that checks and runs again
	wf := tr.Trace()
	wf.ID = "wf_fixed"
	b, _ := json.MarshalIndent(wf, "", "  ")
	golden(t, "two_actions.trace.json", string(b)+"\n")
}

func TestTrajectoryTraceRuns(t *testing.T) {
	// the converted trace runs as a workflow on new data
	reg, _ := shop(t, llmtest.Text(`<answer>["salad"]</answer>`))
	describe := ptool.New[Item, string]("describe", "Describe the item.",
		ptool.WithModel(llmtest.New(llmtest.Text(`<answer>"green"</answer>`))))
	if err := reg.Register(describe); err != nil {
		t.Fatal(err)
	}
	tr := &Trajectory{Goal: "g", Success: true, FinalAnswer: "x", Steps: []Step{
		{Thought: Thought{"items", 1}, Action: &Action{Name: "extract_items", Args: json.RawMessage(`{"text":"a pizza"}`), PTool: true}, Observation: &Observation{Result: `["pizza"]`, Success: true}},
		{Thought: Thought{"oops", 2}, Action: &Action{Name: "describe", Args: json.RawMessage(`{"itm":"pizza"}`), PTool: true}, Observation: &Observation{Result: `missing item`, Success: false}},
		{Thought: Thought{"describe", 3}, Action: &Action{Name: "describe", Args: json.RawMessage(`{"item":"pizza"}`), PTool: true}, Observation: &Observation{Result: `"round"`, Success: true}},
	}}
	wf := tr.Trace()
	if len(wf.Steps) != 2 || string(wf.Steps[1].Args) != `{"item":{"$ref":"step_0","path":"/0"}}` {
		t.Fatalf("trace %+v", wf.Steps)
	}
	// run it afresh: the results of the exploration are dropped
	wf = wf.Reset()
	if wf.Steps[1].Status != "" || wf.Steps[1].Result != nil || wf.Steps[1].Goal != "describe" {
		t.Fatalf("reset: %+v", wf.Steps[1])
	}
	wf.Steps[0].Args = workflow.Args(Order{"a salad"})
	out, err := workflow.Run(context.Background(), wf, workflow.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Steps[1].Input) != `{"item":"salad"}` || string(out.Steps[1].Result) != `"green"` {
		t.Errorf("step 1: %s -> %s", out.Steps[1].Input, out.Steps[1].Result)
	}
}

func TestStepLimit(t *testing.T) {
	reg, price := shop(t)
	model := llmtest.New(
		llmtest.Text("Price of pizza."+call("price", `{"item": "pizza"}`)),
		llmtest.Text("Price of salad."+call("price", `{"item": "salad"}`)),
		llmtest.Text("One more."+call("price", `{"item": "pizza"}`)),
	)
	res, err := Run(context.Background(), "Price everything.", Options{Model: model, PTools: reg, Tools: []ptk.Tool{price}, MaxSteps: 2})
	if !errors.Is(err, ErrMaxSteps) {
		t.Fatalf("err = %v", err)
	}
	tr := res.Trajectory
	if res.Success || tr.Stopped != "max_steps" || len(tr.Steps) != 2 || len(model.Requests()) != 2 {
		t.Fatalf("success %v stopped %q steps %d calls %d", res.Success, tr.Stopped, len(tr.Steps), len(model.Requests()))
	}
	if tr.Steps[1].Observation.Result != "5" {
		t.Errorf("what it has: %+v", tr.Steps[1].Observation)
	}
	if tr.Code != ptk.MaxIterationsReached {
		t.Errorf("code at the step limit = %q", tr.Code)
	}
	if !strings.HasSuffix(tr.PTP(), "...price returned 5\nNo answer (max_steps)\n") {
		t.Errorf("PTP:\n%s", tr.PTP())
	}
}

func TestMalformedActionIsCorrected(t *testing.T) {
	reg, price := shop(t)
	model := llmtest.New(
		llmtest.Text("The price."+call("price", `{"name": "pizza"}`)),
		llmtest.Text("With the right argument."+call("price", `{"item": "pizza"}`)),
		llmtest.Text("<answer>9</answer>"),
	)
	res, err := Run(context.Background(), "What does a pizza cost?", Options{Model: model, PTools: reg, Tools: []ptk.Tool{price}})
	if err != nil {
		t.Fatal(err)
	}
	first := res.Trajectory.Steps[0].Observation
	if first.Success || !strings.Contains(first.Result, "item") || first.Code != ptk.InvalidToolCall {
		t.Errorf("the malformed action's observation: %+v", first)
	}
	msgs := model.Requests()[1].Messages
	if last := msgs[len(msgs)-1].Content; !strings.Contains(last, first.Result) {
		t.Errorf("the model was not told: %q", last)
	}
	if res.Answer != "9" || !res.Trajectory.Steps[1].Observation.Success {
		t.Errorf("answer %q", res.Answer)
	}
}

// TestReplyWithoutActionOrAnswer: a reply with neither an action nor an
// <answer> is not an answer: the model is asked for one, and a run that
// never gives one does not succeed.
func TestReplyWithoutActionOrAnswer(t *testing.T) {
	model := llmtest.New(llmtest.Text("Paris is the capital of France."), llmtest.Text("<answer>Paris</answer>"))
	res, err := Run(context.Background(), "What is the capital of France?", Options{Model: model})
	if err != nil || res.Answer != "Paris" || !res.Success || len(res.Trajectory.Steps) != 2 {
		t.Fatalf("%q %v %v", res.Answer, res.Success, err)
	}
	msgs := model.Requests()[1].Messages
	if last := msgs[len(msgs)-1]; last.Role != ptk.RoleUser || !strings.Contains(last.Content, "<answer>") {
		t.Errorf("the model was not asked for an answer: %+v", last)
	}

	never := llmtest.New(llmtest.Text("Paris."), llmtest.Text("It is Paris."))
	res, err = Run(context.Background(), "What is the capital of France?", Options{Model: never, MaxSteps: 2})
	if !errors.Is(err, ErrMaxSteps) || res.Success || res.Answer != "" {
		t.Fatalf("a run with no answer: %q %v %v", res.Answer, res.Success, err)
	}
}

// TestApprover: an action on a tool that changes something is asked about;
// a denied one is a failed observation with the reason, and is not asked
// about again; ptools run without asking.
func TestApprover(t *testing.T) {
	reg, price := shop(t)
	var ran []string
	bash := ptk.NewTool(ptk.ToolInfo{Name: "bash", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
			ran = append(ran, string(args))
			return ptk.Result{Content: "ran"}, nil
		})
	var asked []string
	approver := tool.ApproverFunc(func(_ context.Context, c ptk.Call, _ ptk.ToolInfo) (tool.Verdict, error) {
		asked = append(asked, c.Tool)
		if c.Tool == "price" {
			return tool.Verdict{Allow: true}, nil
		}
		return tool.Verdict{Reason: "the user said no; --yes allows it"}, nil
	})
	model := llmtest.New(
		llmtest.Text("Clean up."+call("bash", `{"command": "rm -rf build"}`)),
		llmtest.Text("Again."+call("bash", `{"command":"rm -rf build"}`)),
		llmtest.Text("The price then."+call("price", `{"item": "pizza"}`)),
		llmtest.Text("<answer>not cleaned</answer>"),
	)
	res, err := Run(context.Background(), "Clean up.", Options{Model: model, PTools: reg, Tools: []ptk.Tool{price, bash}, Approver: approver})
	if err != nil || !res.Success {
		t.Fatal(err)
	}
	if len(ran) != 0 || strings.Join(asked, ",") != "bash,price" {
		t.Errorf("ran %q, asked %q", ran, asked)
	}
	steps := res.Trajectory.Steps
	if o := steps[0].Observation; o.Success || o.Result != "Denied: the user said no; --yes allows it" || o.Code != ptk.ToolCallDenied {
		t.Errorf("the denied action's observation: %+v", o)
	}
	if o := steps[1].Observation; o.Success || !strings.Contains(o.Result, "denied already") || !strings.Contains(o.Result, "--yes") {
		t.Errorf("the repeated action's observation: %+v", o)
	}
	if o := steps[2].Observation; !o.Success {
		t.Errorf("the price ran: %+v", o)
	}
}

func TestExamplesInPrompt(t *testing.T) {
	ex := &Trajectory{Goal: "Price a salad.", Success: true, FinalAnswer: "5", Steps: []Step{
		{Action: &Action{Name: "price", Args: json.RawMessage(`{"item": "salad"}`)}, Observation: &Observation{Result: "5", Success: true}},
	}}
	got, err := SystemPrompt(Options{Examples: []*Trajectory{ex}, Instructions: "Prices are in dollars."})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "system.golden", got)
}

func TestNativeActions(t *testing.T) {
	reg, price := shop(t)
	model := llmtest.New(
		llmtest.Reply{Content: "Looking it up.", Calls: []ptk.Call{{ID: "c1", Tool: "price", Args: json.RawMessage(`{"item": "salad"}`)}}},
		llmtest.Text("<answer>5</answer>"),
	)
	res, err := Run(context.Background(), "What does a salad cost?", Options{Model: model, PTools: reg, Tools: []ptk.Tool{price}, Mode: turn.Native})
	if err != nil || res.Answer != "5" {
		t.Fatalf("%q %v", res.Answer, err)
	}
	if len(model.Requests()[0].Tools) != 2 {
		t.Errorf("native tools sent: %d", len(model.Requests()[0].Tools))
	}
	if o := res.Trajectory.Steps[0].Observation; o == nil || o.Result != "5" {
		t.Errorf("observation %+v", o)
	}
}

func TestCanceled(t *testing.T) {
	model := llmtest.New(llmtest.Reply{Wait: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, "g", Options{Model: model})
	if !errors.Is(err, context.Canceled) || res.Success || res.Trajectory.Stopped != "canceled" || res.Trajectory.Code != ptk.Canceled {
		t.Errorf("err %v, stopped %q, code %q", err, res.Trajectory.Stopped, res.Trajectory.Code)
	}
}

// TestErrorCodes: what stopped a run, and why each action failed, are kept
// as codes, so that a provider's failure, the model's mistake and a tool's
// failure can be told apart in the records.
func TestErrorCodes(t *testing.T) {
	reg, price := shop(t)
	broken := ptk.NewTool(ptk.ToolInfo{Name: "stock", Parameters: json.RawMessage(`{"type":"object","properties":{"item":{"type":"string"}}}`)},
		func(context.Context, json.RawMessage) (ptk.Result, error) {
			return ptk.Result{}, errors.New("the stock database is down")
		})
	model := llmtest.New(
		llmtest.Text("Stock?"+call("stock", `{"item": "pizza"}`)),
		llmtest.Text("Something else."+call("no_such_tool", `{}`)),
		llmtest.Reply{Err: errors.New("502 Bad Gateway")},
	)
	res, err := Run(context.Background(), "Is there pizza?", Options{Model: model, PTools: reg, Tools: []ptk.Tool{price, broken}})
	if err == nil || res.Success {
		t.Fatalf("a run whose provider failed: %v", err)
	}
	tr := res.Trajectory
	if tr.Code != ptk.LLMCallFailed || !strings.Contains(tr.Stopped, "502") {
		t.Errorf("the provider's failure: code %q, stopped %q", tr.Code, tr.Stopped)
	}
	if o := tr.Steps[0].Observation; o.Success || o.Code != ptk.ToolExecutionFailed || !strings.Contains(o.Result, "down") {
		t.Errorf("the tool's failure: %+v", o)
	}
	if o := tr.Steps[1].Observation; o.Success || o.Code != ptk.ToolNotFound {
		t.Errorf("a call of no tool: %+v", o)
	}
	if res, _ := Run(context.Background(), "g", Options{}); res.Trajectory.Code != ptk.InvalidConfig {
		t.Errorf("a run without a model: code %q", res.Trajectory.Code)
	}
}

// TestPToolActionsRecorded: a ptool action's model calls count in the
// trajectory's usage and cost, and its record is kept with the step.
func TestPToolActionsRecorded(t *testing.T) {
	reg := ptool.NewRegistry()
	extract := llm.Priced(llmtest.New(llmtest.Reply{Content: `<answer>["pizza", "salad"]</answer>`, Usage: ptk.Usage{PromptTokens: 1000, CompletionTokens: 100}}),
		llm.Price{Input: 2, Output: 10})
	if err := reg.Register(ptool.New[Order, []string]("extract_items", "List the food items ordered.", ptool.WithModel(extract))); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(
		llmtest.Reply{Content: "I need the items." + call("extract_items", `{"text": "a pizza and a salad"}`), Usage: ptk.Usage{PromptTokens: 10, CompletionTokens: 1}},
		llmtest.Reply{Content: "<answer>pizza, salad</answer>", Usage: ptk.Usage{PromptTokens: 20, CompletionTokens: 2}},
	)
	res, err := Run(context.Background(), "list the items", Options{Model: model, PTools: reg})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trajectory
	if tr.Usage.PromptTokens != 1030 || tr.Usage.CompletionTokens != 103 || res.Usage != tr.Usage {
		t.Errorf("usage = %+v, result's %+v", tr.Usage, res.Usage)
	}
	if want := (1000*2 + 100*10) / 1e6; tr.Cost < want*0.999 || tr.Cost > want*1.001 || res.Cost != tr.Cost {
		t.Errorf("cost = %v, want %v", tr.Cost, want)
	}
	rec := tr.Steps[0].Record
	if rec == nil || rec.PTool != "extract_items" || string(rec.Output) != `["pizza","salad"]` || rec.Usage.PromptTokens != 1000 || len(rec.Attempts) != 1 {
		t.Fatalf("the step's record = %+v", rec)
	}
	// the trajectory round-trips with it
	b, _ := json.Marshal(tr)
	var back Trajectory
	if err := json.Unmarshal(b, &back); err != nil || back.Steps[0].Record == nil || back.Steps[0].Record.Usage != rec.Usage {
		t.Errorf("round trip: %v, %+v", err, back.Steps[0])
	}
}

// TestIDAndClockFromOptions: a run given an id and a clock (as a
// durable-execution engine gives them) reads no other.
func TestIDAndClockFromOptions(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time {
		at = at.Add(time.Second)
		return at
	}
	res, err := Run(context.Background(), "say hi", Options{Model: llmtest.New(llmtest.Text("<answer>hi</answer>")), ID: "run-7", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trajectory
	if tr.ID != "run-7" || !tr.Start.Equal(time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)) || tr.Duration != time.Second || res.Answer != "hi" {
		t.Errorf("id %q, start %v, duration %v, answer %q", tr.ID, tr.Start, tr.Duration, res.Answer)
	}
}
