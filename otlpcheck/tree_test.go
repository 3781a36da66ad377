package otlpcheck

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/distill"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/otlp"
	"github.com/ptkit/ptk/trace/record"
	"github.com/ptkit/ptk/workflow"
)

type items struct {
	Items []string `json:"items"`
}

// workflowRun runs a workflow of two ptool steps, the first answered at
// its second attempt, recorded live into sink.
func workflowRun(t *testing.T, sink record.Sink) {
	reg := ptool.NewRegistry()
	reg.Register(ptool.New[order, items]("extract_items", "List the food items ordered.",
		ptool.WithModel(llmtest.New(reply(`<answer>{"oops": 1}</answer>`, 30, 3), reply(`<answer>{"items": ["pizza", "salad"]}</answer>`, 40, 4)))))
	reg.Register(ptool.New[items, int]("count_items", "Count the items.", ptool.WithModel(llmtest.New(reply(`<answer>2</answer>`, 20, 2)))))
	tr := &workflow.Trace{Goal: "count an order", Steps: []workflow.Step{
		{PTool: "extract_items", Args: workflow.Args(order{"a pizza and a salad"})},
		{PTool: "count_items", Args: workflow.Args(map[string]any{"items": workflow.Ref("step_0", "/items")})},
	}}
	rec := record.NewWorkflow(sink, tr)
	for e, err := range workflow.Stream(context.Background(), tr, workflow.Options{Registry: reg}) {
		rec.Event(e, err)
		if err != nil {
			t.Fatal(err)
		}
	}
}

// requestRun records a gateway request served with the gateway's tools:
// its agent run under it, with a model call, a tool call and a ptool's
// call recorded as a run of its own under the agent run (three runs deep).
func requestRun(t *testing.T, sink record.Sink) {
	ctx := context.Background()
	req := record.NewRequest(sink)
	run := req.Agent(trace.Run{Name: "serve", Model: "qwen3:8b", Provider: "ollama", Input: "Is there pizza?"})
	stock := ptk.NewTool(ptk.ToolInfo{Name: "stock"}, func(context.Context, json.RawMessage) (ptk.Result, error) {
		return ptk.Result{Content: "3 left"}, nil
	})
	model := llmtest.New(reply("<PTK_CALL>\n{\"tool\": \"stock\", \"args\": {}}\n</PTK_CALL>", 50, 5), reply("Yes, 3 left.", 60, 6))
	var res *agent.Result
	for e, err := range agent.Stream(ctx, agent.Prompt("Is there pizza?"), agent.Options{Model: model, ModelName: "qwen3:8b", Mode: agent.ModePTK, Tools: []ptk.Tool{stock}}) {
		run.Event(e, err)
		if e.Kind == agent.EventDone {
			res = e.Run
		}
	}
	if res == nil || !res.Success {
		t.Fatalf("the agent run: %+v", res)
	}
	// a ptool called on the run's behalf, recorded as a run under it
	var prec *ptool.Record
	p := ptool.New[order, items]("extract_items", "List the food items ordered.",
		ptool.WithModel(llmtest.New(reply(`<answer>{"items": ["pizza"]}</answer>`, 10, 1))), ptool.WithObserver(func(r *ptool.Record) { prec = r }))
	if _, err := p.Call(ctx, order{"a pizza"}); err != nil || prec == nil {
		t.Fatal(err)
	}
	sink.RecordFunc(func() *trace.Record { return record.PtoolRun(prec, run.ID()) })
	req.End(trace.Run{Model: "qwen3:8b", Provider: "ollama", Usage: res.Usage},
		trace.Request{API: "chat", Method: "POST", Route: "/v1/chat/completions", Status: 200, Model: "qwen3:8b", Mode: "server-tools/ptk"})
}

// distillRun records a distillation live: the patterns' call, a rejected
// round and an accepted one, each with its candidate's call and checks.
func distillRun(sink record.Sink) {
	at := time.Now().Add(-time.Minute)
	d := record.NewDistill(sink, trace.Run{Name: "route_ticket", Model: "qwen3:8b", Provider: "ollama"})
	rep := &distill.Report{Ptool: "route_ticket", Train: 30, Validation: 12, Sealed: 14,
		PatternCalls: []distill.ModelCall{{Start: at, Latency: time.Second, Usage: ptk.Usage{PromptTokens: 100, CompletionTokens: 10}}}}
	d.Observe(distill.Event{Kind: distill.EventCall, Calls: rep.PatternCalls})
	for n, ok := range []bool{false, true} {
		r := distill.Round{N: n + 1, Start: at.Add(time.Duration(n+1) * 10 * time.Second), Duration: 8 * time.Second, Accepted: ok,
			Calls: []distill.ModelCall{{Start: at.Add(time.Duration(n+1) * 10 * time.Second), Latency: 2 * time.Second, Usage: ptk.Usage{PromptTokens: 300, CompletionTokens: 50}}}}
		if !ok {
			r.Rejected = "its tests fail"
		}
		d.Observe(distill.Event{Kind: distill.EventRound, Round: r.N, Start: r.Start})
		d.Observe(distill.Event{Kind: distill.EventCall, Round: r.N, Calls: r.Calls})
		for _, name := range []string{"screen", "compile", "tests"} {
			c := distill.Check{Name: name, Start: r.Start.Add(3 * time.Second), Duration: time.Second, Passed: ok || name != "tests"}
			r.Checks = append(r.Checks, c)
			d.Observe(distill.Event{Kind: distill.EventCheck, Round: r.N, Check: &c})
		}
		d.Observe(distill.Event{Kind: distill.EventRoundEnd, Round: r.N, Duration: r.Duration, Accepted: ok, Rejected: r.Rejected})
		rep.Rounds = append(rep.Rounds, r)
	}
	rep.Accepted = true
	d.Done(rep, nil)
}

// TestReceiverGetsEveryTree records, through the Sink ptk's commands use
// (the trace store's Writer, live, and OTLP), a ReAct run (its actions,
// a ptool call under its action, the call's attempts under it), a
// workflow (its steps' ptool calls, their attempts under them), a gateway
// request (its agent run under it, the run's calls under the run, and a
// ptool call's run under the agent run: three runs deep) and a live distill
// run (its rounds, the calls and checks under each); then checks that the
// Collector's receiver got, for every span the store holds, one span, under
// the same parent and in its parent's trace: the same tree over OTLP as
// in the store, and nothing more (a live run's steps, written as they end,
// are sent once).
func TestReceiverGetsEveryTree(t *testing.T) {
	addr, got := receiver(t)
	ctx := context.Background()
	exp, err := otlp.New(ctx, otlp.Options{Endpoint: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := trace.Open(ctx, filepath.Join(t.TempDir(), "traces.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := trace.NewWriter(s, nil)
	sink := exp.Sink(w)
	reactRun(t, sink)
	workflowRun(t, sink)
	requestRun(t, sink)
	distillRun(sink)
	if err := w.Close(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := exp.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}

	// the store's tree: each span's parent, spans named run:ID and
	// run:ID/kind/N
	want := map[string]string{}
	runs, err := s.List(ctx, trace.Filter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[trace.Kind]bool{}
	for _, sum := range runs {
		r, err := s.Get(ctx, sum.ID)
		if err != nil {
			t.Fatal(err)
		}
		kinds[r.Kind] = true
		self := "run:" + r.ID
		want[self] = "none"
		if r.ParentID != "" {
			want[self] = "run:" + r.ParentID
		}
		under := func(p string) string {
			if p == "" {
				return self
			}
			return self + "/" + p
		}
		for i, c := range r.ModelCalls {
			want[self+"/"+trace.SpanID(trace.SpanModel, i)] = under(c.Parent)
		}
		for i, c := range r.ToolCalls {
			want[self+"/"+trace.SpanID(trace.SpanTool, i)] = under(c.Parent)
		}
		for i, c := range r.PtoolCalls {
			want[self+"/"+trace.SpanID(trace.SpanPtool, i)] = under(c.Parent)
		}
		for i, c := range r.Steps {
			want[self+"/"+trace.SpanID(trace.SpanStep, i)] = under(c.Parent)
		}
	}
	if len(kinds) != 6 {
		t.Errorf("kinds of runs in the store: %v, want react, workflow, request, agent, ptool, distill", kinds)
	}

	// what the receiver got, named the same way: a span by its run (its
	// own ptk.run.id, or its nearest run's above it) and its ptk.span
	byID, all := receivedSpans(got)
	str := func(sp ptrace.Span, k string) string {
		v, _ := sp.Attributes().Get(k)
		return v.Str()
	}
	var runOf func(sp ptrace.Span, depth int) string
	runOf = func(sp ptrace.Span, depth int) string {
		if id := str(sp, otlp.AttrRunID); id != "" {
			return "run:" + id
		}
		up, ok := byID[sp.ParentSpanID()]
		if !ok || depth > 50 {
			return "orphan"
		}
		return runOf(up, depth+1)
	}
	name := func(sp ptrace.Span, _ int) string {
		if id := str(sp, otlp.AttrRunID); id != "" {
			return "run:" + id
		}
		return runOf(sp, 0) + "/" + str(sp, otlp.AttrSpanID)
	}
	have := map[string]string{}
	for _, sp := range all {
		n := name(sp, 0)
		if _, dup := have[n]; dup {
			t.Errorf("span %s received twice", n)
		}
		have[n] = "none"
		if up, ok := byID[sp.ParentSpanID()]; ok {
			have[n] = name(up, 0)
			if up.TraceID() != sp.TraceID() {
				t.Errorf("span %s is in another trace than its parent %s", n, have[n])
			}
		} else if !sp.ParentSpanID().IsEmpty() {
			have[n] = "missing"
		}
	}
	var diff []string
	for k, p := range want {
		if have[k] != p {
			diff = append(diff, k+": over OTLP under "+orNone(have[k])+", in the store under "+p)
		}
	}
	for k, p := range have {
		if _, ok := want[k]; !ok {
			diff = append(diff, k+": over OTLP under "+p+", not in the store")
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("the trees differ:\n%s", strings.Join(diff, "\n"))
	}
	if len(want) < 30 {
		t.Errorf("the store holds %d spans: the runs were not all recorded", len(want))
	}
	t.Logf("%d spans of %d runs, the same tree in the store and over OTLP", len(want), len(runs))
}

func orNone(s string) string {
	if s == "" {
		return "(not received)"
	}
	return s
}
