package record_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/react"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
	"github.com/ptkit/ptk/workflow"
)

type order struct {
	Text string `json:"text"`
}

func call(name, args string) string {
	return "\n<PTK_CALL>\n{\"tool\": \"" + name + "\", \"args\": " + args + "}\n</PTK_CALL>"
}

func reply(text string, in, out int) llmtest.Reply {
	r := llmtest.Text(text)
	r.Usage = ptk.Usage{PromptTokens: in, CompletionTokens: out}
	return r
}

func store(t *testing.T) (*trace.Store, *trace.Writer) {
	t.Helper()
	s, err := trace.Open(context.Background(), filepath.Join(t.TempDir(), "traces.db"))
	if err != nil {
		t.Fatal(err)
	}
	w := trace.NewWriter(s, nil)
	t.Cleanup(func() { w.Close(0); s.Close() })
	return s, w
}

// TestReActSpans runs a ReAct run whose action calls a ptool that needs
// two attempts, recorded into a SQLite store: while it runs, the store
// shows it running with the steps done so far; once done, the ptool call
// hangs under its action and its attempts (with their tokens) under it,
// the run's own model calls count as its iterations, and the tokens of
// all of them sum to the run's.
func TestReActSpans(t *testing.T) {
	s, w := store(t)
	ctx := context.Background()
	reg := ptool.NewRegistry()
	if err := reg.Register(ptool.New[order, []string]("extract_items", "List the food items ordered.",
		ptool.WithModel(llmtest.New(reply(`<answer>{"oops": 1}</answer>`, 30, 3), reply(`<answer>["pizza"]</answer>`, 40, 4))))); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(
		reply("The items first."+call("extract_items", `{"text": "a pizza"}`), 100, 10),
		reply("One item.\n<answer>pizza</answer>", 200, 20),
	)
	var seen []trace.Status
	opts := react.Options{Model: model, PTools: reg, OnStep: func(*react.Trajectory, react.Step) {
		// the step was queued before this hook runs: wait until it is stored
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			runs, _ := s.List(ctx, trace.Filter{Kind: trace.KindReAct})
			if len(runs) == 1 {
				if r, _ := s.Get(ctx, runs[0].ID); r != nil && len(r.ToolCalls) == 1 {
					seen = append(seen, r.Status)
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Error("the step did not reach the store while the run went on")
	}}
	opts = record.ReAct(w).Options(opts)
	res, err := react.Run(ctx, "What was ordered?", opts)
	if err != nil || res.Answer != "pizza" {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if len(seen) == 0 || seen[0] != trace.StatusRunning {
		t.Errorf("statuses seen during the run: %v", seen)
	}
	w.Close(0)
	runs, _ := s.List(ctx, trace.Filter{Kind: trace.KindReAct})
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	r, err := s.Get(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != trace.StatusOK || r.Iterations != 2 || r.Output != "pizza" {
		t.Errorf("run = %+v", r.Run)
	}
	if len(r.ToolCalls) != 1 || len(r.PtoolCalls) != 1 || len(r.ModelCalls) != 4 {
		t.Fatalf("%d tool calls, %d ptool calls, %d model calls", len(r.ToolCalls), len(r.PtoolCalls), len(r.ModelCalls))
	}
	if p := r.PtoolCalls[0]; p.Parent != "tool/0" || p.Ptool != "extract_items" || p.Usage.PromptTokens != 70 || string(p.Output) != `["pizza"]` {
		t.Errorf("ptool call = %+v", p)
	}
	var under, own, sum int
	for _, m := range r.ModelCalls {
		sum += m.Usage.PromptTokens
		switch m.Parent {
		case "ptool/0":
			under++
			if m.Usage.PromptTokens != 30 && m.Usage.PromptTokens != 40 {
				t.Errorf("attempt usage %+v", m.Usage)
			}
		case "":
			own++
		default:
			t.Errorf("model call under %q", m.Parent)
		}
		if m.Start.IsZero() {
			t.Errorf("model call without a start: %+v", m)
		}
	}
	if under != 2 || own != 2 || sum != r.Usage.PromptTokens || sum != 370 {
		t.Errorf("%d attempts under the ptool call, %d own calls, %d tokens summed, run's %d", under, own, sum, r.Usage.PromptTokens)
	}
	if r.ModelCalls[0].Text != "The items first." || !strings.Contains(r.ModelCalls[1].Error, "") || r.ModelCalls[1].Error == "" {
		t.Errorf("model calls = %+v", r.ModelCalls)
	}
}

// TestWorkflowSpans records a workflow run from its stream: it is running
// when its first step ends, and each step's ptool call has its attempts
// under it.
func TestWorkflowSpans(t *testing.T) {
	s, w := store(t)
	ctx := context.Background()
	reg := ptool.NewRegistry()
	reg.Register(ptool.New[order, []string]("extract_items", "List the food items ordered.",
		ptool.WithModel(llmtest.New(reply(`<answer>["pizza"]</answer>`, 40, 4), reply(`<answer>["salad"]</answer>`, 50, 5)))))
	tr := &workflow.Trace{Goal: "two orders", Steps: []workflow.Step{
		{ID: "a", PTool: "extract_items", Args: json.RawMessage(`{"text": "a pizza"}`)},
		{ID: "b", PTool: "extract_items", Args: json.RawMessage(`{"text": "a salad"}`)},
	}}
	rec := record.NewWorkflow(w, tr)
	var during trace.Status
	for e, err := range workflow.Stream(ctx, tr, workflow.Options{Registry: reg, Concurrency: 1}) {
		rec.Event(e, err)
		if e.Kind == workflow.EventStepEnd && e.Index == 0 {
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				if r, _ := s.Get(ctx, rec.ID()); r != nil && len(r.PtoolCalls) == 1 {
					during = r.Status
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	w.Close(0)
	if during != trace.StatusRunning {
		t.Errorf("after the first step the run was %q", during)
	}
	r, err := s.Get(ctx, rec.ID())
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != trace.StatusOK || r.Name != "two orders" || len(r.PtoolCalls) != 2 || len(r.ModelCalls) != 2 || r.Usage.PromptTokens != 90 {
		t.Fatalf("run = %+v", r)
	}
	for i, m := range r.ModelCalls {
		if m.Parent != trace.SpanID(trace.SpanPtool, i) {
			t.Errorf("model call %d under %q", i, m.Parent)
		}
	}
}

// TestPtoolRun: a ptool's calls recorded with record.Ptool are runs of
// kind ptool with their attempts as model calls (not "0 model calls").
func TestPtoolRun(t *testing.T) {
	s, w := store(t)
	ctx := context.Background()
	p := ptool.New[order, []string]("extract_items", "List the food items ordered.",
		ptool.WithModel(llmtest.New(reply(`<answer>["pizza"]</answer>`, 40, 4))), record.Ptool(w))
	if _, err := p.Call(ctx, order{"a pizza"}); err != nil {
		t.Fatal(err)
	}
	w.Close(0)
	runs, _ := s.List(ctx, trace.Filter{Kind: trace.KindPtool})
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	r, _ := s.Get(ctx, runs[0].ID)
	if len(r.ModelCalls) != 1 || r.ModelCalls[0].Parent != "ptool/0" || r.ModelCalls[0].Usage.PromptTokens != 40 || r.Iterations != 1 {
		t.Errorf("run = %+v", r)
	}
}

// TestReActErrorCodes: a ReAct run's records keep the class of each
// failure as a code, not only its words: the tool's failure, the model's
// call of a tool that does not exist, and the provider's failure that
// ended the run.
func TestReActErrorCodes(t *testing.T) {
	s, w := store(t)
	ctx := context.Background()
	broken := ptk.NewTool(ptk.ToolInfo{Name: "stock", Parameters: json.RawMessage(`{"type":"object","properties":{"item":{"type":"string"}}}`)},
		func(context.Context, json.RawMessage) (ptk.Result, error) {
			return ptk.Result{}, errors.New("the stock database is down")
		})
	model := llmtest.New(
		reply("Stock?"+call("stock", `{"item": "pizza"}`), 10, 1),
		reply("Other."+call("no_such_tool", `{}`), 10, 1),
		llmtest.Reply{Err: errors.New("502 Bad Gateway")},
	)
	opts := record.ReAct(w).Options(react.Options{Model: model, Tools: []ptk.Tool{broken}})
	if _, err := react.Run(ctx, "Is there pizza?", opts); err == nil {
		t.Fatal("the run did not fail")
	}
	w.Close(0)
	runs, err := s.List(ctx, trace.Filter{Kind: trace.KindReAct})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	r, err := s.Get(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != trace.StatusError || r.ErrorCode != string(ptk.LLMCallFailed) || !strings.Contains(r.ErrorMessage, "502") {
		t.Errorf("the run: status %s, code %q, message %q", r.Status, r.ErrorCode, r.ErrorMessage)
	}
	if len(r.ToolCalls) != 2 {
		t.Fatalf("tool calls: %+v", r.ToolCalls)
	}
	if tc := r.ToolCalls[0]; !tc.IsError || tc.ErrorCode != string(ptk.ToolExecutionFailed) || tc.Outcome != trace.OutcomeRan {
		t.Errorf("the tool's failure: %+v", tc)
	}
	if tc := r.ToolCalls[1]; !tc.IsError || tc.ErrorCode != string(ptk.ToolNotFound) || tc.Outcome != trace.OutcomeInvalid {
		t.Errorf("the model's mistake: %+v", tc)
	}
}
