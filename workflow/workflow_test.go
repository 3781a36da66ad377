package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/tool"
)

type Order struct {
	Text string `json:"text"`
}
type Items struct {
	Items []string `json:"items"`
}
type Item struct {
	Item string `json:"item"`
}
type Tally struct {
	Items []string `json:"items"`
	Note  string   `json:"note"`
}

func answer(s string) *llmtest.Script { return llmtest.New(llmtest.Text("<answer>" + s + "</answer>")) }

// orders is a registry of three ptools, each answering from its own model.
func orders(t *testing.T, extract, describe, count llm.Model) *ptool.Registry {
	t.Helper()
	reg := ptool.NewRegistry()
	for _, f := range []ptool.Func{
		ptool.New[Order, Items]("extract_items", "List the food items ordered.", ptool.WithModel(extract)),
		ptool.New[Item, string]("describe_item", "Describe the item in a few words.", ptool.WithModel(describe)),
		ptool.New[Tally, int]("count_items", "Count the items.", ptool.WithModel(count)),
	} {
		if err := reg.Register(f); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func threeSteps() *Trace {
	return &Trace{Goal: "describe and count an order", Steps: []Step{
		{PTool: "extract_items", Args: Args(Order{"a pizza and a salad"}), Goal: "find the items"},
		{PTool: "describe_item", Args: Args(map[string]any{"item": Ref("step_0", "/items/0")})},
		{PTool: "count_items", Args: Args(map[string]any{"items": Ref("step_0", "/items"), "note": Ref("step_1")})},
	}}
}

func TestRunThreeSteps(t *testing.T) {
	describe := answer(`"a round flatbread"`)
	reg := orders(t, answer(`{"items": ["pizza", "salad"]}`), describe, answer(`2`))
	var observed *Trace
	tr, err := Run(context.Background(), threeSteps(), Options{Registry: reg, Observer: func(t *Trace) { observed = t }})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range tr.Steps {
		if st.Status != StatusCompleted {
			t.Fatalf("step %d: %s %s", i, st.Status, st.Error)
		}
	}
	var n int
	if err := json.Unmarshal(tr.Steps[2].Result, &n); err != nil || n != 2 {
		t.Fatalf("result %s, %v", tr.Steps[2].Result, err)
	}
	if got := string(tr.Steps[1].Input); got != `{"item":"pizza"}` {
		t.Errorf("step_1's input %s", got)
	}
	if got := string(tr.Steps[2].Input); got != `{"items":["pizza","salad"],"note":"a round flatbread"}` {
		t.Errorf("step_2's input %s", got)
	}
	if !strings.Contains(describe.Requests()[0].Messages[len(describe.Requests()[0].Messages)-1].Content, "pizza") {
		t.Errorf("the model was not given the referenced value")
	}
	if tr.Steps[0].Record == nil || tr.Steps[0].Attempts != 1 || len(tr.Steps[0].Expects) == 0 {
		t.Errorf("step_0's record %+v", tr.Steps[0])
	}
	if observed == nil || observed.ID != tr.ID || tr.ID == "" {
		t.Errorf("observer got %v", observed)
	}
	// the run's trace round-trips exactly
	b1, _ := json.Marshal(tr)
	back, err := Parse(b1)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b1) != string(b2) {
		t.Errorf("round trip:\n%s\n%s", b1, b2)
	}
}

func TestCheckAllProblemsBeforeAnyCall(t *testing.T) {
	models := []*llmtest.Script{answer(`{"items": ["x"]}`), answer(`"y"`), answer(`1`)}
	reg := orders(t, models[0], models[1], models[2])
	tr := &Trace{Goal: "bad", Steps: []Step{
		{PTool: "extract_items", Args: Args(Order{"a pizza"})},
		{PTool: "summarize", Args: Args(map[string]any{"text": "x"})},
		{PTool: "describe_item", Args: Args(map[string]any{"item": Ref("step_3")})},
		{PTool: "count_items", Args: Args(map[string]any{"items": Ref("step_0", "/items"), "note": Ref("step_0", "/items")})},
	}}
	_, err := Run(context.Background(), tr, Options{Registry: reg})
	var cerr *CheckError
	if !errors.As(err, &cerr) || !errors.Is(err, ErrCheck) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		`step_1 (summarize): no ptool "summarize" is registered (registered: count_items, describe_item, extract_items)`,
		`step_2 (describe_item), argument /item: refers to step_3, which comes later (step 3); a step can use only earlier steps' outputs`,
		`step_3 (count_items), argument /note: step_0/items is array, but the argument takes string`,
	}
	var got []string
	for _, p := range cerr.Problems {
		got = append(got, p.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, m := range models {
		if n := len(m.Requests()); n != 0 {
			t.Errorf("%d model calls before the check", n)
		}
	}
}

func TestCheckLiteralsAndPaths(t *testing.T) {
	reg := orders(t, answer(`{}`), answer(`""`), answer(`1`))
	tr := &Trace{Goal: "bad", Steps: []Step{
		{PTool: "extract_items", Args: json.RawMessage(`{"text": 3, "extra": true}`)},
		{PTool: "describe_item", Args: json.RawMessage(`{"item": {"$ref": "step_0", "path": "/things/0"}}`)},
		{PTool: "describe_item", Args: json.RawMessage(`{}`)},
		{PTool: "describe_item", Args: json.RawMessage(`{"item": {"$ref": "step_0", "pth": "/items/0"}}`)},
		{PTool: "describe_item", Args: json.RawMessage(`["x"]`)},
		{PTool: "describe_item", Args: json.RawMessage(`{"item": "$step_0"}`)}, // a string, not a reference
	}}
	probs := Check(tr, reg)
	var got []string
	for _, p := range probs {
		got = append(got, p.String())
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{
		"step_0 (extract_items), argument /text: /text: expected string, got number",
		`step_0 (extract_items): arguments: unexpected arguments "extra"`,
		`step_1 (describe_item), argument /item: step_0's output (extract_items) has no /things/0: no property "things"`,
		`step_2 (describe_item), argument /item: missing required argument "item"`,
		`step_3 (describe_item), argument /item: a reference has only "$ref" and "path", not "pth"`,
		"step_4 (describe_item): the arguments: the arguments are an array, not an object",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	if len(probs) != 6 {
		t.Errorf("%d problems:\n%s", len(probs), text)
	}
}

// gate is a model that counts the calls in progress at once.
type gate struct {
	active, max atomic.Int32
	reply       string
}

func (g *gate) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	n := g.active.Add(1)
	defer g.active.Add(-1)
	for {
		m := g.max.Load()
		if n <= m || g.max.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-time.After(60 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &llm.Response{Content: "<answer>" + g.reply + "</answer>", FinishReason: "stop"}, nil
}

func TestIndependentStepsOverlap(t *testing.T) {
	for _, tc := range []struct{ limit, want int32 }{{0, 3}, {2, 2}, {1, 1}} {
		g := &gate{reply: `"good"`}
		reg := orders(t, answer(`{}`), g, answer(`1`))
		tr := &Trace{Goal: "three at once", Steps: []Step{
			{PTool: "describe_item", Args: Args(Item{"a"})},
			{PTool: "describe_item", Args: Args(Item{"b"})},
			{PTool: "describe_item", Args: Args(Item{"c"})},
		}}
		out, err := Run(context.Background(), tr, Options{Registry: reg, Concurrency: int(tc.limit)})
		if err != nil {
			t.Fatal(err)
		}
		if got := g.max.Load(); got != tc.want {
			t.Errorf("concurrency %d: %d calls at once, want %d", tc.limit, got, tc.want)
		}
		if string(out.Steps[2].Result) != `"good"` {
			t.Errorf("result %s", out.Steps[2].Result)
		}
	}
}

func TestRetryKeepsInputs(t *testing.T) {
	count := llmtest.New(llmtest.Text("About two, I think."), llmtest.Text(`<answer>2</answer>`))
	reg := orders(t, answer(`{"items": ["pizza", "salad"]}`), answer(`""`), count)
	tr := &Trace{Goal: "retry", Steps: []Step{
		{PTool: "extract_items", Args: Args(Order{"a pizza and a salad"})},
		{PTool: "count_items", Args: Args(map[string]any{"items": Ref("step_0", "/items"), "note": "n"})},
	}}
	out, err := Run(context.Background(), tr, Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	st := out.Steps[1]
	if st.Attempts != 2 || string(st.Result) != `2` {
		t.Fatalf("attempts %d result %s", st.Attempts, st.Result)
	}
	const input = `{"items":["pizza","salad"],"note":"n"}`
	if string(st.Args) != `{"items":{"$ref":"step_0","path":"/items"},"note":"n"}` || string(st.Input) != input || string(st.Record.Input) != input {
		t.Errorf("inputs changed: args %s input %s record %s", st.Args, st.Input, st.Record.Input)
	}
	if len(st.Record.Attempts[0].Problems) == 0 {
		t.Errorf("the first attempt's problems are not recorded")
	}
	if msgs := count.Requests()[1].Messages; !strings.Contains(msgs[len(msgs)-1].Content, "does not fit") {
		t.Errorf("the retry was not told what was wrong: %q", msgs[len(msgs)-1].Content)
	}
}

func TestFailureStopsOrContinues(t *testing.T) {
	trace := func() *Trace {
		return &Trace{Goal: "fail", Steps: []Step{
			{PTool: "extract_items", Args: Args(Order{"x"})},
			{PTool: "describe_item", Args: Args(map[string]any{"item": Ref("step_0", "/items/0")})},
			{PTool: "count_items", Args: Args(Tally{Items: []string{"a"}, Note: "n"})},
		}}
	}
	broken := func() llm.Model {
		return llmtest.New(llmtest.Reply{Err: errors.New("provider down")})
	}
	// Concurrency 1: step_0 fails before step_2 may start
	reg := orders(t, broken(), answer(`""`), answer(`1`))
	out, err := Run(context.Background(), trace(), Options{Registry: reg, Concurrency: 1})
	if !errors.Is(err, ErrStepFailed) {
		t.Fatalf("err = %v", err)
	}
	if s := []Status{out.Steps[0].Status, out.Steps[1].Status, out.Steps[2].Status}; !reflect.DeepEqual(s, []Status{StatusFailed, StatusSkipped, StatusSkipped}) {
		t.Errorf("stop: %v", s)
	}
	reg = orders(t, broken(), answer(`""`), answer(`1`))
	out, err = Run(context.Background(), trace(), Options{Registry: reg, Concurrency: 1, ContinueOnError: true})
	if !errors.Is(err, ErrStepFailed) {
		t.Fatalf("err = %v", err)
	}
	if s := []Status{out.Steps[0].Status, out.Steps[1].Status, out.Steps[2].Status}; !reflect.DeepEqual(s, []Status{StatusFailed, StatusSkipped, StatusCompleted}) {
		t.Errorf("continue: %v", s)
	}
	if out.Steps[1].Error != "not run: step_0 did not complete" {
		t.Errorf("skip reason %q", out.Steps[1].Error)
	}
}

func TestCancelStopsCleanly(t *testing.T) {
	wait := llmtest.New(llmtest.Reply{Wait: true})
	reg := orders(t, wait, answer(`""`), answer(`1`))
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var kinds []EventKind
	go func() { time.Sleep(30 * time.Millisecond); cancel() }()
	var out *Trace
	var err error
	for e, e2 := range Stream(ctx, threeSteps(), Options{Registry: reg}) {
		mu.Lock()
		kinds = append(kinds, e.Kind)
		mu.Unlock()
		if e.Kind == EventDone {
			out, err = e.Trace, e2
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if out.Steps[0].Status != StatusFailed || out.Steps[1].Status != StatusSkipped || out.Steps[2].Status != StatusSkipped {
		t.Errorf("statuses %s %s %s", out.Steps[0].Status, out.Steps[1].Status, out.Steps[2].Status)
	}
	want := []EventKind{EventStepStart, EventStepEnd, EventStepEnd, EventStepEnd, EventDone}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("events %v", kinds)
	}
}

func TestTraceJSONReads(t *testing.T) {
	// a trace as a person or a model writes it, and one with a field a
	// later version may add
	src := `{"goal":"g","future_field":1,"steps":[{"ptool":"describe_item","args":{"item":{"$ref":"step_0","path":"/a~1b"}},"goal":"why","status":"pending"}]}`
	tr, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tr)
	if want := `{"goal":"g","steps":[{"ptool":"describe_item","args":{"item":{"$ref":"step_0","path":"/a~1b"}},"goal":"why","status":"pending"}]}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var refs []refAt
	args, _ := decodeArgs(tr.Steps[0].Args)
	walkRefs(args, "", func(r refAt) { refs = append(refs, r) }, func(string, string) {})
	if len(refs) != 1 || refs[0].Step != "step_0" || refs[0].Path != "/a~1b" || refs[0].At != "/item" {
		t.Errorf("refs %+v", refs)
	}
	if v, err := pointerGet(map[string]any{"a/b": []any{"x"}}, "/a~1b/0"); err != nil || v != "x" {
		t.Errorf("pointer: %v %v", v, err)
	}
}

func TestResumeKeepsCompletedSteps(t *testing.T) {
	extract := answer(`{"items": ["never asked"]}`)
	describe := answer(`"a green dish"`)
	reg := orders(t, extract, describe, answer(`1`))
	tr := &Trace{Goal: "resume", Steps: []Step{
		{PTool: "extract_items", Args: Args(Order{"a salad"}), Status: StatusCompleted, Result: json.RawMessage(`{"items":["salad"]}`)},
		{PTool: "describe_item", Args: Args(map[string]any{"item": Ref("step_0", "/items/0")}), Status: StatusFailed, Error: "earlier"},
	}}
	out, err := Run(context.Background(), tr, Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if len(extract.Requests()) != 0 || string(out.Steps[1].Input) != `{"item":"salad"}` || out.Steps[1].Error != "" {
		t.Errorf("%d extract calls, step 1 %+v", len(extract.Requests()), out.Steps[1])
	}
	if tr.Steps[1].Status != StatusFailed {
		t.Errorf("the caller's trace was changed")
	}
}

func TestInvalidArgsJSONDoesNotPanic(t *testing.T) {
	reg := orders(t, answer(`{}`), answer(`""`), answer(`1`))
	tr := &Trace{Goal: "g", Steps: []Step{{PTool: "describe_item", Args: json.RawMessage(`{"item": `)}}}
	_, err := Run(context.Background(), tr, Options{Registry: reg})
	if !errors.Is(err, ErrCheck) || !strings.Contains(err.Error(), "the arguments:") {
		t.Errorf("err = %v", err)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add(`{"goal":"g","steps":[{"ptool":"describe_item","args":{"item":{"$ref":"step_0","path":"/items/0"}}}]}`)
	f.Add(`{"steps":[{"ptool":"count_items","args":{"items":[{"$ref":"step_1"}],"note":{"$ref":7}}},{"id":"step_1","ptool":"extract_items","args":null}]}`)
	f.Add(`{"steps":[{"ptool":"extract_items","args":{"text":{"$ref":"step_0","path":"~"}}}]}`)
	reg := ptool.NewRegistry()
	for _, fn := range []ptool.Func{
		ptool.New[Order, Items]("extract_items", "List the items."),
		ptool.New[Item, string]("describe_item", "Describe."),
		ptool.New[Tally, int]("count_items", "Count."),
	} {
		_ = reg.Register(fn)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tr, err := Parse([]byte(src))
		if err != nil {
			return
		}
		Check(tr, reg)
		if len(tr.Steps) < 20 {
			_, _ = GoProgram(tr)
		}
	})
}

// TestDistilledStepRecords: a distilled step leaves its record, whether
// its code answered or it fell back to the model.
func TestDistilledStepRecords(t *testing.T) {
	model := llm.Priced(llmtest.New(llmtest.Reply{Content: `<answer>"a salad, green"</answer>`, Usage: ptk.Usage{PromptTokens: 100, CompletionTokens: 10}}),
		llm.Price{Input: 1, Output: 1})
	describe := ptool.Distill(func(_ context.Context, in Item) (string, error) {
		if in.Item == "pizza" {
			return "a pizza, hot", nil
		}
		return "", ptool.ErrFallback
	}, ptool.New[Item, string]("describe_item", "Describe the item.", ptool.WithModel(model)))
	reg := ptool.NewRegistry()
	if err := reg.Register(describe); err != nil {
		t.Fatal(err)
	}
	tr := &Trace{Goal: "describe", Steps: []Step{
		{PTool: "describe_item", Args: Args(Item{"pizza"})},
		{PTool: "describe_item", Args: Args(Item{"salad"})},
	}}
	done, err := Run(context.Background(), tr, Options{Registry: reg, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	code, fell := done.Steps[0], done.Steps[1]
	if code.Record == nil || code.Record.Source != ptool.SourceCode || string(code.Record.Output) != `"a pizza, hot"` || code.Attempts != 0 {
		t.Errorf("the code's step: %+v, record %+v", code, code.Record)
	}
	if fell.Record == nil || !fell.Record.FellBack || fell.Attempts != 1 || fell.Usage.PromptTokens != 100 || fell.Cost == 0 || string(fell.Result) != `"a salad, green"` {
		t.Errorf("the fallback's step: %+v, record %+v", fell, fell.Record)
	}
}

// TestToolSteps: a plain tool in the registry is a step like a ptool: its
// JSON result is its output, its text a string, its error a failed step.
func TestToolSteps(t *testing.T) {
	lookup := tool.New("lookup", "The price of an item.", func(_ context.Context, in Item) (map[string]int, error) {
		if in.Item == "" {
			return nil, errors.New("no item")
		}
		return map[string]int{"cents": 950}, nil
	})
	shout := tool.New("shout", "Says it loudly.", func(_ context.Context, in Item) (string, error) { return in.Item + "!", nil })
	reg := orders(t, answer(`{"items": ["pizza"]}`), answer(`"hot"`), answer(`1`))
	for _, tl := range []ptk.Tool{lookup, shout} {
		f, err := ptool.FromTool(tl)
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.Register(f); err != nil {
			t.Fatal(err)
		}
	}
	tr := &Trace{Goal: "price the first item", Steps: []Step{
		{PTool: "extract_items", Args: Args(Order{"a pizza"})},
		{PTool: "lookup", Args: Args(map[string]any{"item": Ref("step_0", "/items/0")})},
		{PTool: "shout", Args: Args(map[string]any{"item": Ref("step_0", "/items/0")})},
		{PTool: "describe_item", Args: Args(map[string]any{"item": Ref("step_2")})},
	}}
	if probs := Check(tr, reg); probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	done, err := Run(context.Background(), tr, Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if string(done.Steps[1].Result) != `{"cents":950}` || string(done.Steps[2].Result) != `"pizza!"` || done.Steps[1].Record != nil {
		t.Errorf("steps = %s, %s", done.Steps[1].Result, done.Steps[2].Result)
	}
	bad := &Trace{Goal: "x", Steps: []Step{{PTool: "lookup", Args: Args(Item{""})}}}
	if done, err := Run(context.Background(), bad, Options{Registry: reg}); !errors.Is(err, ErrStepFailed) || !strings.Contains(done.Steps[0].Error, "no item") {
		t.Errorf("a failing tool: %v, %+v", err, done.Steps[0])
	}
	if out, err := Call(context.Background(), reg, "shout", Item{"salad"}); err != nil || string(out) != `"salad!"` {
		t.Errorf("Call = %s, %v", out, err)
	}
}
