package otlp_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/otlp"
	"github.com/ptkit/ptk/trace/record"
)

// collector is an OTLP/HTTP endpoint in the test's process: it decodes each
// export with the protocol's official protobuf types, as a receiver does,
// and keeps the spans and the headers they came with.
type collector struct {
	srv     *httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	service []string // each export's service.name
	headers []http.Header
	bad     []string // what was not a valid export
}

func newCollector(t testing.TB) *collector {
	c := &collector{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			z, err := gzip.NewReader(r.Body)
			if err != nil {
				c.fail("gzip: " + err.Error())
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = z
		}
		b, err := io.ReadAll(body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &req)
		}
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			c.fail("content type " + r.Header.Get("Content-Type") + ": " + errString(err))
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.headers = append(c.headers, r.Header.Clone())
		for _, rs := range req.ResourceSpans {
			c.service = append(c.service, attr(rs.GetResource().GetAttributes(), "service.name"))
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	})
	c.srv = httptest.NewServer(mux)
	t.Cleanup(c.srv.Close)
	return c
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func (c *collector) fail(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bad = append(c.bad, why)
}

// received returns the spans received so far, by the call they are
// (their ptk.span attribute: "tool/0"; "" for the run).
func (c *collector) received() map[string]*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]*tracepb.Span{}
	for _, s := range c.spans {
		out[attr(s.Attributes, otlp.AttrSpanID)] = s
	}
	return out
}

// attr is the value of the attribute key, as text ("" when absent).
func attr(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key != key {
			continue
		}
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue
		case *commonpb.AnyValue_IntValue:
			return itoa(v.IntValue)
		case *commonpb.AnyValue_DoubleValue:
			b, _ := json.Marshal(v.DoubleValue)
			return string(b)
		case *commonpb.AnyValue_BoolValue:
			if v.BoolValue {
				return "true"
			}
			return "false"
		}
	}
	return ""
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// react is a finished ReAct run: a model call of the run, an action (a
// tool call) whose ptool call has an attempt (a model call) under it, and
// a tool call that failed.
func react() *trace.Record {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	return &trace.Record{
		Run: trace.Run{ID: "run-1", Kind: trace.KindReAct, Name: "triage", Model: "qwen3", StartedAt: start, Duration: trace.Millis(time.Second),
			Status: trace.StatusOK, Usage: ptk.Usage{PromptTokens: 300, CompletionTokens: 30}, Cost: 0.25,
			Input: "Why does the build fail? SECRET-PROMPT", Output: "A missing module. SECRET-ANSWER"},
		ModelCalls: []trace.ModelCall{
			{Mode: "ptk", Usage: ptk.Usage{PromptTokens: 200, CompletionTokens: 20}, Latency: trace.Millis(100 * time.Millisecond), Cost: 0.2,
				Text: "I will classify it. SECRET-REPLY", Span: trace.Span{Start: at(0)}},
			{Mode: "native", Usage: ptk.Usage{PromptTokens: 100, CompletionTokens: 10}, Latency: trace.Millis(50 * time.Millisecond), Cost: 0.05,
				Text: `"build"`, Span: trace.Span{Start: at(150), Parent: trace.SpanID(trace.SpanPtool, 0)}},
		},
		ToolCalls: []trace.ToolCall{
			{Iteration: 1, CallID: "call_1", Tool: "classify", Args: json.RawMessage(`{"log":"SECRET-ARGS"}`), Result: "build SECRET-RESULT",
				Outcome: trace.OutcomeRan, Duration: trace.Millis(200 * time.Millisecond), Span: trace.Span{Start: at(120)}},
			{Iteration: 2, CallID: "call_2", Tool: "read_file", Args: json.RawMessage(`{}`), Result: "no such file", IsError: true,
				Outcome: trace.OutcomeRan, Duration: trace.Millis(time.Millisecond), Span: trace.Span{Start: at(400)}},
		},
		PtoolCalls: []trace.PtoolCall{
			{Ptool: "classify", Input: json.RawMessage(`{"log":"SECRET-ARGS"}`), Output: json.RawMessage(`"build"`), Source: "model",
				Duration: trace.Millis(60 * time.Millisecond), Usage: ptk.Usage{PromptTokens: 100, CompletionTokens: 10}, Cost: 0.05,
				Span: trace.Span{Start: at(140), Parent: trace.SpanID(trace.SpanTool, 0)}},
		},
	}
}

func export(t *testing.T, c *collector, opts otlp.Options, recs ...*trace.Record) map[string]*tracepb.Span {
	t.Helper()
	ctx := context.Background()
	opts.Endpoint = c.srv.URL
	exp, err := otlp.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		exp.Export(r)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if len(c.bad) > 0 {
		t.Fatalf("the collector refused exports: %q", c.bad)
	}
	return c.received()
}

// TestSpanTree: a run arrives as a tree of spans — the run, its model call
// and tool calls under it, a ptool call under the action that made it, the
// ptool's attempt under the ptool call — with their own times, the GenAI
// conventions' attributes, the service's name and the headers asked for.
func TestSpanTree(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-env-header=from-env")
	c := newCollector(t)
	spans := export(t, c, otlp.Options{Headers: map[string]string{"Authorization": "Basic cGs6c2s="}, ServiceName: "ptk-test"}, react())
	if len(spans) != 6 || len(c.spans) != 6 {
		t.Fatalf("%d spans received (%d distinct), want 6", len(c.spans), len(spans))
	}
	root, run, attempt := spans[""], spans["model/0"], spans["model/1"]
	action, failed, ptool := spans["tool/0"], spans["tool/1"], spans["ptool/0"]
	if root == nil || run == nil || attempt == nil || action == nil || ptool == nil || failed == nil {
		t.Fatalf("spans: %v", spans)
	}
	for s, name := range map[*tracepb.Span]string{root: "invoke_agent react triage", run: "chat qwen3", attempt: "chat qwen3",
		action: "execute_tool classify", ptool: "execute_tool classify", failed: "execute_tool read_file"} {
		if s.Name != name {
			t.Errorf("span %q, want %q", s.Name, name)
		}
	}
	// The tree, by span ids; one trace.
	parent := map[string]*tracepb.Span{"the run's model call": run, "the action": action, "the failed tool call": failed}
	if len(root.ParentSpanId) != 0 {
		t.Errorf("the run's span has a parent")
	}
	for what, s := range parent {
		if string(s.ParentSpanId) != string(root.SpanId) {
			t.Errorf("%s is not under the run", what)
		}
	}
	if string(ptool.ParentSpanId) != string(action.SpanId) {
		t.Errorf("the ptool call is not under the action that made it")
	}
	if string(attempt.ParentSpanId) != string(ptool.SpanId) {
		t.Errorf("the ptool call's attempt is not under it")
	}
	for _, s := range c.spans {
		if string(s.TraceId) != string(root.TraceId) {
			t.Errorf("span %s is in another trace", s.Name)
		}
	}
	// Their own times: the run from its start for its duration, the
	// attempt 150 ms in for 50 ms.
	start := uint64(react().StartedAt.UnixNano())
	if root.StartTimeUnixNano != start || root.EndTimeUnixNano != start+uint64(time.Second) {
		t.Errorf("the run's span: %d to %d, want %d to %d", root.StartTimeUnixNano, root.EndTimeUnixNano, start, start+uint64(time.Second))
	}
	if attempt.StartTimeUnixNano != start+uint64(150*time.Millisecond) || attempt.EndTimeUnixNano != start+uint64(200*time.Millisecond) {
		t.Errorf("the attempt's span: %d to %d", attempt.StartTimeUnixNano-start, attempt.EndTimeUnixNano-start)
	}
	// The conventions' attributes.
	for _, want := range []struct {
		s          *tracepb.Span
		key, value string
	}{
		{root, otlp.AttrOperation, otlp.OpInvokeAgent},
		{root, otlp.AttrAgentName, "triage"},
		{root, otlp.AttrRequestModel, "qwen3"},
		{root, otlp.AttrInputTokens, "300"},
		{root, otlp.AttrOutputTokens, "30"},
		{root, otlp.AttrRunKind, "react"},
		{root, otlp.AttrRunID, "run-1"},
		{run, otlp.AttrOperation, otlp.OpChat},
		{run, otlp.AttrResponseModel, "qwen3"},
		{run, otlp.AttrInputTokens, "200"},
		{run, otlp.AttrOutputTokens, "20"},
		{run, otlp.AttrMode, "ptk"},
		{action, otlp.AttrOperation, otlp.OpExecuteTool},
		{action, otlp.AttrToolName, "classify"},
		{action, otlp.AttrToolCallID, "call_1"},
		{ptool, otlp.AttrPtool, "classify"},
		{ptool, otlp.AttrInputTokens, "100"},
		{failed, otlp.AttrErrorType, trace.OutcomeRan},
	} {
		if got := attr(want.s.Attributes, want.key); got != want.value {
			t.Errorf("span %s: %s = %q, want %q", want.s.Name, want.key, got, want.value)
		}
	}
	if run.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("a model call's span is of kind %v, want client", run.Kind)
	}
	if failed.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || root.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("statuses: failed tool %v, run %v", failed.Status, root.Status)
	}
	// Content only when asked.
	for _, s := range c.spans {
		for _, kv := range s.Attributes {
			if v := kv.Value.GetStringValue(); strings.Contains(v, "SECRET") {
				t.Errorf("span %s sends %s = %q without Content", s.Name, kv.Key, v)
			}
		}
	}
	for _, svc := range c.service {
		if svc != "ptk-test" {
			t.Errorf("service.name %q", svc)
		}
	}
	for _, h := range c.headers {
		if h.Get("Authorization") != "Basic cGs6c2s=" || h.Get("X-Env-Header") != "from-env" {
			t.Errorf("headers: %v", h)
		}
	}
}

// TestContent: with Content, prompts, answers, tool arguments and results
// go out, as the conventions' messages.
func TestContent(t *testing.T) {
	c := newCollector(t)
	spans := export(t, c, otlp.Options{Content: true}, react())
	root, run, action := spans[""], spans["model/0"], spans["tool/0"]
	if root == nil || run == nil || action == nil {
		t.Fatalf("%d spans", len(c.spans))
	}
	var in []struct {
		Role  string `json:"role"`
		Parts []struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		} `json:"parts"`
	}
	if err := json.Unmarshal([]byte(attr(root.Attributes, otlp.AttrInputMessages)), &in); err != nil || len(in) != 1 || in[0].Role != "user" ||
		len(in[0].Parts) != 1 || in[0].Parts[0].Content != react().Input {
		t.Errorf("the run's input messages: %+v, %v", in, err)
	}
	for _, want := range []struct {
		s          *tracepb.Span
		key, value string
	}{
		{root, otlp.AttrOutputMessages, "SECRET-ANSWER"},
		{run, otlp.AttrOutputMessages, "SECRET-REPLY"},
		{action, otlp.AttrToolCallArguments, "SECRET-ARGS"},
		{action, otlp.AttrToolCallResult, "SECRET-RESULT"},
	} {
		if got := attr(want.s.Attributes, want.key); !strings.Contains(got, want.value) {
			t.Errorf("span %s: %s = %q, want it to hold %q", want.s.Name, want.key, got, want.value)
		}
	}
}

// TestEndpointDown: an endpoint that never answers, or where nothing
// listens, neither blocks a run nor costs it its record in the store;
// Shutdown gives up at its context's deadline.
func TestEndpointDown(t *testing.T) {
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hang.Close()
	defer close(stop) // the SDK may leave its last request open
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	for name, endpoint := range map[string]string{"hanging": hang.URL, "closed": closed} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			exp, err := otlp.New(ctx, otlp.Options{Endpoint: endpoint})
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
			live, ok := sink.(record.Live)
			if !ok {
				t.Fatal("the sink of a Writer is not Live")
			}
			begin := time.Now()
			// A whole record, and a live run.
			whole := react()
			whole.ID = "whole"
			sink.RecordFunc(func() *trace.Record { return whole })
			live.Begin(trace.Run{ID: "live", Kind: trace.KindAgent, Model: "m"})
			live.Append(&trace.Record{Run: trace.Run{ID: "live"}, ModelCalls: []trace.ModelCall{{Text: "thinking"}}}, [3]int{})
			live.Finish(func() *trace.Record {
				return &trace.Record{Run: trace.Run{ID: "live", Kind: trace.KindAgent, Model: "m", Output: "done"},
					ModelCalls: []trace.ModelCall{{Text: "thinking"}, {Text: "done"}}}
			})
			if d := time.Since(begin); d > time.Second {
				t.Errorf("recording took %v with the endpoint %s", d, name)
			}
			if err := w.Close(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(begin); d > 5*time.Second {
				t.Errorf("the Writer took %v to write two runs with the endpoint %s", d, name)
			}
			for id, calls := range map[string]int{"whole": 2, "live": 2} {
				r, err := s.Get(ctx, id)
				if err != nil || r.Status != trace.StatusOK || len(r.ModelCalls) != calls {
					t.Errorf("run %s in the store: %+v, %v", id, r, err)
				}
			}
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			begin = time.Now()
			exp.Shutdown(sctx) // an error: what was queued could not be sent
			if d := time.Since(begin); d > 3*time.Second {
				t.Errorf("Shutdown took %v past its 1s deadline", d)
			}
		})
	}
}

// TestBadEndpoint: an endpoint that is not an http(s) URL is a clear
// error, not an exporter that silently sends nowhere.
func TestBadEndpoint(t *testing.T) {
	for _, e := range []string{"localhost:4318", "ftp://collector:4318", "http://", "::"} {
		if _, err := otlp.New(context.Background(), otlp.Options{Endpoint: e}); err == nil || !strings.Contains(err.Error(), "want an http:// or https:// URL") {
			t.Errorf("endpoint %q: %v", e, err)
		}
	}
}

// TestTreeAnyDepth: a record's calls and steps arrive under the span their
// Parent names however deep the chain and whatever the order of their
// kinds (an action, its ptool call, the call's attempt, a step under the
// attempt); a Parent that names no span, or a loop of parents, hangs under
// the run and loses no span.
func TestTreeAnyDepth(t *testing.T) {
	c := newCollector(t)
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	span := func(parent string) trace.Span { return trace.Span{Start: at, Parent: parent} }
	rec := &trace.Record{Run: trace.Run{ID: "deep", Kind: trace.KindReAct, Model: "m", StartedAt: at, Duration: 1000, Status: trace.StatusOK},
		ModelCalls: []trace.ModelCall{{Span: span("")}, {Span: span("ptool/0")}},
		ToolCalls:  []trace.ToolCall{{Tool: "extract", Span: span("")}, {Tool: "lost", Span: span("ptool/9")}},
		PtoolCalls: []trace.PtoolCall{{Ptool: "extract", Span: span("tool/0")}},
		Steps:      []trace.Step{{Name: "check", Span: span("model/1")}, {Name: "a", Span: span("step/2")}, {Name: "b", Span: span("step/1")}, {Name: "self", Span: span("step/3")}},
	}
	got := export(t, c, otlp.Options{}, rec)
	if len(got) != 10 {
		t.Fatalf("%d spans, want 10: %v", len(got), got)
	}
	parent := func(id string) string {
		for k, s := range got {
			if string(s.SpanId) == string(got[id].ParentSpanId) {
				return k
			}
		}
		return "none"
	}
	for id, want := range map[string]string{"": "none", "model/0": "", "tool/0": "", "ptool/0": "tool/0", "model/1": "ptool/0",
		"step/0": "model/1", "tool/1": "", "step/1": "step/2", "step/2": "", "step/3": ""} {
		if p := parent(id); p != want {
			t.Errorf("span %q is under %q, want %q", id, p, want)
		}
		if string(got[id].TraceId) != string(got[""].TraceId) {
			t.Errorf("span %q is in another trace", id)
		}
	}
}

// TestRunChain: a run under a run under a run (a gateway request, its
// agent run, a ptool call's run under that), begun in that order through a
// live Sink and sent in the opposite one, arrives as one trace: each run's
// span under its parent run's.
func TestRunChain(t *testing.T) {
	c := newCollector(t)
	ctx := context.Background()
	exp, err := otlp.New(ctx, otlp.Options{Endpoint: c.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := trace.Open(ctx, filepath.Join(t.TempDir(), "traces.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := trace.NewWriter(s, nil)
	live := exp.Sink(w).(record.Live)
	runs := []trace.Run{
		{ID: "request", Kind: trace.KindRequest},
		{ID: "agent", ParentID: "request", Kind: trace.KindAgent},
		{ID: "ptool", ParentID: "agent", Kind: trace.KindPtool},
	}
	for _, r := range runs {
		live.Begin(r)
	}
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		live.Finish(func() *trace.Record { return &trace.Record{Run: r} })
	}
	if err := w.Close(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	byRun := map[string]*tracepb.Span{}
	c.mu.Lock()
	for _, sp := range c.spans {
		byRun[attr(sp.Attributes, otlp.AttrRunID)] = sp
	}
	c.mu.Unlock()
	if len(byRun) != 3 {
		t.Fatalf("runs received: %v", byRun)
	}
	for _, r := range runs[1:] {
		sp, up := byRun[r.ID], byRun[r.ParentID]
		if string(sp.ParentSpanId) != string(up.SpanId) || string(sp.TraceId) != string(byRun["request"].TraceId) {
			t.Errorf("run %s: not under %s in the request's trace", r.ID, r.ParentID)
		}
	}
}

// BenchmarkExport is the cost of sending a finished ReAct run (a run, a
// model call, two actions, a ptool call and its attempt) as spans: making
// them, on the caller's goroutine (the SDK's batcher sends them on its own).
func BenchmarkExport(b *testing.B) {
	c := newCollector(b)
	exp, err := otlp.New(context.Background(), otlp.Options{Endpoint: c.srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	rec := react()
	b.ReportAllocs()
	for b.Loop() {
		exp.Export(rec)
	}
}
