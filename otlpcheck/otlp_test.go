package otlpcheck

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/react"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/otlp"
	"github.com/ptkit/ptk/trace/record"
)

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// receiver starts the Collector's OTLP receiver on a free port and
// returns its HTTP address and what it received.
// receivedSpans is every span got received: by id, and in the order
// received.
func receivedSpans(got *consumertest.TracesSink) (map[pcommon.SpanID]ptrace.Span, []ptrace.Span) {
	byID := map[pcommon.SpanID]ptrace.Span{}
	var list []ptrace.Span
	for _, td := range got.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					sp := ss.At(j).Spans().At(k)
					byID[sp.SpanID()] = sp
					list = append(list, sp)
				}
			}
		}
	}
	return byID, list
}

func receiver(t *testing.T) (string, *consumertest.TracesSink) {
	t.Helper()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	addr := freeAddr(t)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = freeAddr(t)
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = addr
	got := new(consumertest.TracesSink)
	r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, got)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return addr, got
}

type order struct {
	Text string `json:"text"`
}

func reply(text string, in, out int) llmtest.Reply {
	r := llmtest.Text(text)
	r.Usage = ptk.Usage{PromptTokens: in, CompletionTokens: out}
	return r
}

// reactRun runs a ReAct run whose action calls a ptool that needs two
// attempts, recorded into sink.
func reactRun(t *testing.T, sink record.Sink) {
	reg := ptool.NewRegistry()
	reg.Register(ptool.New[order, []string]("extract_items", "List the food items ordered.",
		ptool.WithModel(llmtest.New(reply(`<answer>{"oops": 1}</answer>`, 30, 3), reply(`<answer>["pizza"]</answer>`, 40, 4)))))
	model := llmtest.New(
		reply("The items first.\n<PTK_CALL>\n{\"tool\": \"extract_items\", \"args\": {\"text\": \"a pizza\"}}\n</PTK_CALL>", 100, 10),
		reply("One item.\n<answer>pizza</answer>", 200, 20),
	)
	opts := record.ReAct(sink).Options(react.Options{Model: model, ModelName: "qwen3:8b", PTools: reg})
	if _, err := react.Run(context.Background(), "What was ordered? SECRET-PROMPT", opts); err != nil {
		t.Fatal(err)
	}
}

type span struct {
	ptrace.Span
	parent *span
}

func spans(t *testing.T, got *consumertest.TracesSink) map[string]*span {
	t.Helper()
	byID := map[pcommon.SpanID]*span{}
	byName := map[string]*span{}
	for _, td := range got.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			if v, _ := rs.Resource().Attributes().Get("service.name"); v.Str() != "ptk" {
				t.Errorf("service.name = %q", v.Str())
			}
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					s := &span{Span: ss.Spans().At(k)}
					byID[s.SpanID()] = s
					key, _ := s.Attributes().Get(otlp.AttrSpanID)
					name := key.Str()
					if name == "" {
						name = "run"
					}
					byName[name] = s
				}
			}
		}
	}
	for _, s := range byID {
		s.parent = byID[s.ParentSpanID()]
	}
	return byName
}

func attr(s *span, k string) string {
	v, ok := s.Attributes().Get(k)
	if !ok {
		return "<none>"
	}
	return v.AsString()
}

// TestReceiverGetsTheSpanTree sends a ReAct run to the Collector's OTLP
// receiver over OTLP/HTTP and checks what it got: one trace, the run's
// span at its root, its model calls and its action under it, the action's
// ptool call under the action and the call's two attempts under the call,
// each with the gen_ai.* attributes; no prompt or answer unless asked.
func TestReceiverGetsTheSpanTree(t *testing.T) {
	for _, content := range []bool{false, true} {
		t.Run("content="+strconv.FormatBool(content), func(t *testing.T) {
			addr, got := receiver(t)
			ctx := context.Background()
			exp, err := otlp.New(ctx, otlp.Options{Endpoint: "http://" + addr, Content: content})
			if err != nil {
				t.Fatal(err)
			}
			reactRun(t, exp.Sink(nil))
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := exp.Shutdown(sctx); err != nil {
				t.Fatal(err)
			}
			if got.SpanCount() != 7 {
				t.Fatalf("the receiver got %d spans, want 7 (the run, 4 model calls, the action, the ptool call)", got.SpanCount())
			}
			s := spans(t, got)
			want := map[string]string{ // span: its parent
				"run": "", "model/0": "run", "tool/0": "run", "ptool/0": "tool/0", "model/1": "ptool/0", "model/2": "ptool/0", "model/3": "run",
			}
			for name, parent := range want {
				sp := s[name]
				if sp == nil {
					t.Fatalf("no span %s", name)
				}
				gotParent := ""
				if sp.parent != nil {
					gotParent = attr(sp.parent, otlp.AttrSpanID)
					if gotParent == "<none>" {
						gotParent = "run"
					}
				}
				if gotParent != parent {
					t.Errorf("span %s is under %q, want %q", name, gotParent, parent)
				}
				if sp.TraceID() != s["run"].TraceID() {
					t.Errorf("span %s is in another trace", name)
				}
				if sp.EndTimestamp() < sp.StartTimestamp() {
					t.Errorf("span %s ends before it starts", name)
				}
			}
			for _, c := range []struct{ span, key, want string }{
				{"run", otlp.AttrOperation, "invoke_agent"},
				{"run", otlp.AttrInputTokens, "370"},
				{"run", otlp.AttrRequestModel, "qwen3:8b"},
				{"model/0", otlp.AttrOperation, "chat"},
				{"model/0", otlp.AttrInputTokens, "100"},
				{"model/0", otlp.AttrOutputTokens, "10"},
				{"model/3", otlp.AttrInputTokens, "200"},
				{"tool/0", otlp.AttrOperation, "execute_tool"},
				{"tool/0", otlp.AttrToolName, "extract_items"},
				{"ptool/0", otlp.AttrToolName, "extract_items"},
				{"ptool/0", otlp.AttrInputTokens, "70"},
				{"model/1", otlp.AttrInputTokens, "30"},
				{"model/2", otlp.AttrOutputTokens, "4"},
			} {
				if g := attr(s[c.span], c.key); g != c.want {
					t.Errorf("%s %s = %q, want %q", c.span, c.key, g, c.want)
				}
			}
			if s["model/1"].Status().Code() != ptrace.StatusCodeError || s["model/2"].Status().Code() == ptrace.StatusCodeError {
				t.Errorf("the failed attempt's status %v, the good one's %v", s["model/1"].Status().Code(), s["model/2"].Status().Code())
			}
			in := attr(s["run"], otlp.AttrInputMessages)
			args := attr(s["tool/0"], otlp.AttrToolCallArguments)
			if content {
				if in == "<none>" || args != `{"text":"a pizza"}` && args != `{"text": "a pizza"}` {
					t.Errorf("asked for content: input %s, arguments %s", in, args)
				}
			} else if in != "<none>" || args != "<none>" {
				t.Errorf("content sent unasked: input %s, arguments %s", in, args)
			}
		})
	}
}

// TestReceiverGetsRequestsAndDistills sends what the newer recorders make
// to the Collector's receiver and checks the tree and attributes it got:
// a gateway request as a SERVER span with the HTTP conventions' attributes
// and its agent run (a run of its own, sent first) under it in the same
// trace, with the provider on the run and its model calls and the tool's
// failure as its code; a distill run's rounds and checks as spans under it
// with their verdicts and counts, the model calls that wrote a candidate
// under its round, and no held-out input anywhere.
func TestReceiverGetsRequestsAndDistills(t *testing.T) {
	addr, got := receiver(t)
	ctx := context.Background()
	exp, err := otlp.New(ctx, otlp.Options{Endpoint: "http://" + addr, Content: true})
	if err != nil {
		t.Fatal(err)
	}
	sink := exp.Sink(nil)

	// a gateway request served with the gateway's own tools
	broken := ptk.NewTool(ptk.ToolInfo{Name: "stock", Parameters: json.RawMessage(`{"type":"object","properties":{"item":{"type":"string"}}}`)},
		func(context.Context, json.RawMessage) (ptk.Result, error) {
			return ptk.Result{Content: "the stock database is down", IsError: true}, nil
		})
	model := llmtest.New(
		reply("<PTK_CALL>\n{\"tool\": \"stock\", \"args\": {\"item\": \"pizza\"}}\n</PTK_CALL>", 50, 5),
		reply("No stock figures today.", 60, 6),
	)
	req := record.NewRequest(sink)
	obs := req.Agent(trace.Run{Name: "serve", Model: "qwen3:8b", Provider: "ollama", Input: "Is there pizza?"})
	var res *agent.Result
	for e, err := range agent.Stream(ctx, []ptk.Message{{Role: ptk.RoleUser, Content: "Is there pizza?"}},
		agent.Options{Model: model, ModelName: "qwen3:8b", Mode: agent.ModePTK, Tools: []ptk.Tool{broken}}) {
		obs.Event(e, err)
		if e.Kind == agent.EventDone {
			res = e.Run
		}
	}
	if res == nil || !res.Success {
		t.Fatalf("the agent run: %+v", res)
	}
	req.End(trace.Run{Model: "qwen3:8b", Provider: "ollama", Usage: res.Usage},
		trace.Request{API: "chat", Method: "POST", Route: "/v1/chat/completions", Status: 200, Asked: "gpt-4o", Model: "qwen3:8b", Stream: true, Mode: "server-tools/ptk"})

	// a distill run, as ptk distill records it
	at := time.Now().Add(-time.Minute)
	exp.Export(&trace.Record{
		Run: trace.Run{ID: trace.NewID(), Kind: trace.KindDistill, Name: "route_ticket", Model: "qwen3:8b", Provider: "ollama", StartedAt: at,
			Duration: trace.Millis(9 * time.Second), Status: trace.StatusOK, Usage: ptk.Usage{PromptTokens: 400, CompletionTokens: 60}},
		ModelCalls: []trace.ModelCall{
			{Mode: "patterns", Usage: ptk.Usage{PromptTokens: 100, CompletionTokens: 10}, Latency: trace.Millis(time.Second), Span: trace.Span{Start: at}},
			{Mode: "code", Usage: ptk.Usage{PromptTokens: 300, CompletionTokens: 50}, Latency: trace.Millis(2 * time.Second), Span: trace.Span{Start: at.Add(time.Second), Parent: "step/0"}},
		},
		Steps: []trace.Step{
			{Name: "round 1", Status: trace.StepOK, Note: "accepted", Attrs: map[string]any{"round": 1.0}, Duration: trace.Millis(7 * time.Second), Span: trace.Span{Start: at.Add(time.Second)}},
			{Name: "compile", Status: trace.StepOK, Duration: trace.Millis(2 * time.Second), Span: trace.Span{Start: at.Add(3 * time.Second), Parent: "step/0"}},
			{Name: "sealed", Status: trace.StepOK, Note: "12/14 held-out calls equal, 0 wrong, 2 left to the model",
				Attrs: map[string]any{"total": 14.0, "correct": 12.0, "coverage": 12.0 / 14}, Duration: trace.Millis(time.Second), Span: trace.Span{Start: at.Add(6 * time.Second), Parent: "step/0"}},
		},
	})
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := exp.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}

	all, list := receivedSpans(got)
	byName := func(name string) ptrace.Span {
		for _, sp := range list {
			if sp.Name() == name {
				return sp
			}
		}
		t.Fatalf("no span %q among %d", name, len(list))
		return ptrace.Span{}
	}
	get := func(sp ptrace.Span, k string) string {
		v, ok := sp.Attributes().Get(k)
		if !ok {
			return "<none>"
		}
		return v.AsString()
	}
	check := func(sp ptrace.Span, want map[string]string) {
		t.Helper()
		for k, v := range want {
			if g := get(sp, k); g != v {
				t.Errorf("span %q: %s = %q, want %q", sp.Name(), k, g, v)
			}
		}
	}
	parentName := func(sp ptrace.Span) string {
		if p, ok := all[sp.ParentSpanID()]; ok {
			return p.Name()
		}
		return ""
	}

	server := byName("POST /v1/chat/completions")
	if server.Kind() != ptrace.SpanKindServer || !server.ParentSpanID().IsEmpty() {
		t.Errorf("the request's span: kind %v, parent %v", server.Kind(), server.ParentSpanID())
	}
	check(server, map[string]string{otlp.AttrHTTPMethod: "POST", otlp.AttrHTTPRoute: "/v1/chat/completions", otlp.AttrHTTPStatus: "200",
		otlp.AttrRequestModel: "gpt-4o", otlp.AttrResponseModel: "qwen3:8b", otlp.AttrProvider: "ollama", otlp.AttrSystem: "ollama",
		otlp.AttrGatewayAPI: "chat", otlp.AttrGatewayStream: "true", otlp.AttrInputTokens: "110"})
	run := byName("invoke_agent agent serve")
	if run.ParentSpanID() != server.SpanID() || run.TraceID() != server.TraceID() {
		t.Errorf("the agent run is not under its request: parent %v (want %v), trace %v (want %v)", run.ParentSpanID(), server.SpanID(), run.TraceID(), server.TraceID())
	}
	check(run, map[string]string{otlp.AttrOperation: "invoke_agent", otlp.AttrProvider: "ollama", otlp.AttrSystem: "ollama"})
	var chats int
	for _, sp := range list {
		if sp.Name() == "chat qwen3:8b" && sp.TraceID() == server.TraceID() {
			chats++
			if sp.ParentSpanID() != run.SpanID() {
				t.Errorf("a model call of the run is under %q", parentName(sp))
			}
			check(sp, map[string]string{otlp.AttrProvider: "ollama", otlp.AttrSystem: "ollama"})
		}
	}
	if chats != 2 {
		t.Errorf("%d model calls of the request's run, want 2", chats)
	}
	tool := byName("execute_tool stock")
	if tool.ParentSpanID() != run.SpanID() || tool.Status().Code() != ptrace.StatusCodeError {
		t.Errorf("the tool call: under %q, status %v", parentName(tool), tool.Status().Code())
	}
	check(tool, map[string]string{otlp.AttrErrorType: string(ptk.ToolExecutionFailed)})

	distillRun := byName("invoke_agent distill route_ticket")
	check(distillRun, map[string]string{otlp.AttrRunKind: "distill", otlp.AttrProvider: "ollama", otlp.AttrInputTokens: "400"})
	round := byName("round 1")
	if round.ParentSpanID() != distillRun.SpanID() {
		t.Errorf("the round is under %q", parentName(round))
	}
	check(round, map[string]string{otlp.AttrStepStatus: "ok", otlp.AttrStepNote: "accepted", otlp.AttrStepPrefix + "round": "1"})
	for _, name := range []string{"compile", "sealed"} {
		if sp := byName(name); sp.ParentSpanID() != round.SpanID() || sp.TraceID() != distillRun.TraceID() {
			t.Errorf("the check %s is under %q", name, parentName(sp))
		}
	}
	check(byName("sealed"), map[string]string{otlp.AttrStepNote: "12/14 held-out calls equal, 0 wrong, 2 left to the model",
		otlp.AttrStepPrefix + "total": "14", otlp.AttrStepPrefix + "correct": "12"})
	var code ptrace.Span
	for _, sp := range list {
		if get(sp, otlp.AttrMode) == "code" {
			code = sp
		}
	}
	if code.ParentSpanID() != round.SpanID() || get(code, otlp.AttrInputTokens) != "300" {
		t.Errorf("the model call that wrote the candidate: under %q, %s input tokens", parentName(code), get(code, otlp.AttrInputTokens))
	}
}
