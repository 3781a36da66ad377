package otlpcheck

import (
	"context"
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
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/react"
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
