// Package otlp sends the runs ptk records to an OpenTelemetry backend
// (Jaeger, Grafana Tempo, Langfuse, Phoenix, Datadog, an OpenTelemetry
// Collector) as spans over OTLP/HTTP with protobuf, through the official
// OpenTelemetry Go SDK: a run is a span, each of its model, tool and ptool
// calls and steps a span under its parent span (a ReAct action's ptool call
// under the action, the call's attempts under it; a distill round's checks
// under the round), with the GenAI conventions' gen_ai.* attributes
// (genai.go). A gateway request is a SERVER span with the HTTP
// conventions' attributes, and a run whose ParentID names another run
// hangs under that run's span. Prompts and answers are sent only when
// Options.Content says so.
//
// The endpoint and headers come from Options or else the standard
// variables the SDK reads: OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_SERVICE_NAME.
//
//	exp, err := otlp.New(ctx, otlp.Options{Endpoint: "http://localhost:4318"})
//	sink := exp.Sink(writer) // record into the store and out over OTLP
//	...
//	exp.Shutdown(ctx)
package otlp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// Options configure an Exporter.
type Options struct {
	// Endpoint is the OTLP/HTTP base URL (http://localhost:4318; traces go
	// to its /v1/traces) or, with a path, the traces URL itself. Empty:
	// the OTEL_EXPORTER_OTLP_* variables.
	Endpoint string
	// Headers are sent with every export (Langfuse's Authorization: Basic
	// …), besides OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]string
	// Content sends prompts, answers, tool arguments and results as
	// attributes (gen_ai.input.messages, …); off by default.
	Content bool
	// ServiceName is the service.name resource (default "ptk", or
	// OTEL_SERVICE_NAME).
	ServiceName string
}

// Exporter sends finished runs as spans. It is safe for concurrent use.
type Exporter struct {
	tp      *sdktrace.TracerProvider
	tracer  oteltrace.Tracer
	content bool

	// the traces of the runs last begun or sent, by run id (traceOf):
	// seen is a ring of their ids, next the oldest
	mu    sync.Mutex
	roots map[string]oteltrace.TraceID
	seen  []string
	next  int
}

// New starts an Exporter. A bad endpoint is an error; a backend that is
// down is not (spans are retried and dropped by the SDK, never blocking a
// run).
func New(ctx context.Context, opts Options) (*Exporter, error) {
	var hopts []otlptracehttp.Option
	if opts.Endpoint != "" {
		u, err := url.Parse(opts.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("otlp endpoint %q: want an http:// or https:// URL (http://localhost:4318)", opts.Endpoint)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		hopts = append(hopts, otlptracehttp.WithEndpointURL(u.String()))
	}
	if len(opts.Headers) > 0 {
		// WithHeaders replaces the variables' headers: send both, these
		// first.
		h := envHeaders()
		maps.Copy(h, opts.Headers)
		hopts = append(hopts, otlptracehttp.WithHeaders(h))
	}
	hopts = append(hopts, otlptracehttp.WithProxy(sameOrigin()))
	exp, err := otlptracehttp.New(ctx, hopts...)
	if err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	name := opts.ServiceName
	if name == "" {
		name = "ptk"
	}
	res, err := resource.Merge(resource.NewSchemaless(attribute.String("service.name", name)), resource.Environment())
	if err != nil {
		res = resource.NewSchemaless(attribute.String("service.name", name))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithIDGenerator(runIDs{}))
	return &Exporter{tp: tp, tracer: tp.Tracer("github.com/ptkit/ptk"), content: opts.Content}, nil
}

// Shutdown sends what is queued, within ctx, and stops the Exporter.
func (e *Exporter) Shutdown(ctx context.Context) error { return e.tp.Shutdown(ctx) }

// ForceFlush sends what is queued, within ctx.
func (e *Exporter) ForceFlush(ctx context.Context) error { return e.tp.ForceFlush(ctx) }

// Export sends a finished run as a tree of spans, with their own times:
// every call and step under the span its Parent names, however deep (a
// ReAct action, its ptool call, the call's attempts), whatever the order
// of their kinds; a Parent that names no span of the run, or a chain of
// parents that loops, hangs under the run. A run's span has ids made from
// the run's id (traceID, spanID), so that a run whose ParentID names
// another (a gateway request's agent run, a workflow's ptool call) hangs
// under that run's span whichever is sent first, in the trace of the
// root of its chain of runs: the trace of its parent when this Exporter
// has seen the parent begin or sent it (Sink's Begin, Export), else its
// parent's own.
func (e *Exporter) Export(rec *trace.Record) {
	start := rec.StartedAt
	if start.IsZero() {
		start = time.Now()
	}
	end := start.Add(time.Duration(rec.Duration))
	parentID := rec.ParentID
	if parentID == rec.ID {
		parentID = "" // its own parent: a root
	}
	ids := fixedIDs{trace: e.traceOf(rec.ID, parentID), span: spanID(rec.ID)}
	parent := context.Background()
	if parentID != "" {
		parent = oteltrace.ContextWithRemoteSpanContext(parent, oteltrace.NewSpanContext(oteltrace.SpanContextConfig{
			TraceID: ids.trace, SpanID: spanID(parentID), TraceFlags: oteltrace.FlagsSampled, Remote: true}))
	}
	parent = context.WithValue(parent, idsKey{}, ids)
	var root oteltrace.Span
	if rec.Kind == trace.KindRequest {
		root = e.request(parent, rec, start)
	} else {
		root = e.run(parent, rec, start)
	}
	// The calls and steps, each made after its parent span. The context
	// of the run's span holds no fixed ids.
	ctx := oteltrace.ContextWithSpan(context.Background(), root)
	at := start
	when := func(s trace.Span, d trace.Millis) (time.Time, time.Time) {
		t := s.Start
		if t.IsZero() {
			t = at // recorded by an older ptk: one after the other
		}
		at = t.Add(time.Duration(d))
		return t, t.Add(time.Duration(d))
	}
	var order []string
	nodes := map[string]*node{}
	add := func(id, parent string, d trace.Millis, s trace.Span, start func(context.Context, time.Time) (context.Context, oteltrace.Span)) {
		n := &node{parent: parent, start: start}
		n.from, n.to = when(s, d)
		nodes[id] = n
		order = append(order, id)
	}
	for i, st := range rec.Steps {
		add(trace.SpanID(trace.SpanStep, i), st.Parent, st.Duration, st.Span, func(c context.Context, t time.Time) (context.Context, oteltrace.Span) {
			return e.step(c, t, i, st)
		})
	}
	for i, tc := range rec.ToolCalls {
		add(trace.SpanID(trace.SpanTool, i), tc.Parent, tc.Duration, tc.Span, func(c context.Context, t time.Time) (context.Context, oteltrace.Span) {
			return e.tool(c, t, i, tc)
		})
	}
	for i, pc := range rec.PtoolCalls {
		add(trace.SpanID(trace.SpanPtool, i), pc.Parent, pc.Duration, pc.Span, func(c context.Context, t time.Time) (context.Context, oteltrace.Span) {
			return e.ptool(c, t, i, pc)
		})
	}
	for i, mc := range rec.ModelCalls {
		add(trace.SpanID(trace.SpanModel, i), mc.Parent, mc.Latency, mc.Span, func(c context.Context, t time.Time) (context.Context, oteltrace.Span) {
			return e.model(c, t, i, rec, mc)
		})
	}
	var open func(id string) context.Context
	open = func(id string) context.Context {
		n := nodes[id]
		if n == nil || n.visiting {
			return ctx // no such span, or a loop: under the run
		}
		if n.ctx != nil {
			return n.ctx
		}
		n.visiting = true
		pc := open(n.parent)
		n.visiting = false
		n.ctx, n.span = n.start(pc, n.from)
		return n.ctx
	}
	for _, id := range order {
		open(id)
	}
	for _, id := range order {
		nodes[id].span.End(oteltrace.WithTimestamp(nodes[id].to))
	}
	root.End(oteltrace.WithTimestamp(end))
}

// node is a span of a run's record as Export makes it.
type node struct {
	parent   string
	from, to time.Time
	start    func(context.Context, time.Time) (context.Context, oteltrace.Span)
	ctx      context.Context
	span     oteltrace.Span
	visiting bool
}

// step starts the span of a step (a distill round, a check): named as the
// step, with its verdict, note and figures.
func (e *Exporter) step(ctx context.Context, t time.Time, i int, st trace.Step) (context.Context, oteltrace.Span) {
	c, sp := e.tracer.Start(ctx, st.Name, oteltrace.WithTimestamp(t), oteltrace.WithAttributes(
		attribute.String(AttrStepStatus, st.Status), attribute.String(AttrSpanID, trace.SpanID(trace.SpanStep, i))))
	if st.Note != "" {
		sp.SetAttributes(attribute.String(AttrStepNote, st.Note))
	}
	for k, v := range st.Attrs {
		if a, ok := stepAttr(k, v); ok {
			sp.SetAttributes(a)
		}
	}
	if st.Status == trace.StepFailed {
		sp.SetStatus(codes.Error, st.Note)
		sp.SetAttributes(attribute.String(AttrErrorType, "step_failed"))
	}
	return c, sp
}

// tool starts the span of a tool call: execute_tool.
func (e *Exporter) tool(ctx context.Context, t time.Time, i int, tc trace.ToolCall) (context.Context, oteltrace.Span) {
	c, sp := e.tracer.Start(ctx, OpExecuteTool+" "+tc.Tool, oteltrace.WithTimestamp(t), oteltrace.WithAttributes(
		attribute.String(AttrOperation, OpExecuteTool), attribute.String(AttrToolName, tc.Tool),
		attribute.String(AttrToolCallID, tc.CallID), attribute.String(AttrOutcome, tc.Outcome),
		attribute.String(AttrSpanID, trace.SpanID(trace.SpanTool, i))))
	if e.content {
		sp.SetAttributes(attribute.String(AttrToolCallArguments, string(tc.Args)), attribute.String(AttrToolCallResult, tc.Result))
	}
	if tc.IsError {
		sp.SetStatus(codes.Error, "the tool's result is an error")
		sp.SetAttributes(attribute.String(AttrErrorType, orElse(tc.ErrorCode, orElse(tc.Outcome, "tool_error"))))
	}
	return c, sp
}

// ptool starts the span of a ptool call: execute_tool, with its tokens.
func (e *Exporter) ptool(ctx context.Context, t time.Time, i int, pc trace.PtoolCall) (context.Context, oteltrace.Span) {
	c, sp := e.tracer.Start(ctx, OpExecuteTool+" "+pc.Ptool, oteltrace.WithTimestamp(t), oteltrace.WithAttributes(
		attribute.String(AttrOperation, OpExecuteTool), attribute.String(AttrToolName, pc.Ptool),
		attribute.String(AttrPtool, pc.Ptool), attribute.String(AttrPtoolFrom, pc.Source),
		attribute.Int(AttrInputTokens, pc.Usage.PromptTokens), attribute.Int(AttrOutputTokens, pc.Usage.CompletionTokens),
		attribute.Float64(AttrCost, pc.Cost), attribute.String(AttrSpanID, trace.SpanID(trace.SpanPtool, i))))
	if e.content {
		sp.SetAttributes(attribute.String(AttrToolCallArguments, string(pc.Input)), attribute.String(AttrToolCallResult, string(pc.Output)))
	}
	if pc.IsError {
		sp.SetStatus(codes.Error, "the ptool call failed")
		sp.SetAttributes(attribute.String(AttrErrorType, "ptool_error"))
	}
	return c, sp
}

// model starts the span of a model call: chat, a CLIENT span.
func (e *Exporter) model(ctx context.Context, t time.Time, i int, rec *trace.Record, mc trace.ModelCall) (context.Context, oteltrace.Span) {
	c, sp := e.tracer.Start(ctx, strings.TrimSpace(OpChat+" "+rec.Model), oteltrace.WithTimestamp(t),
		oteltrace.WithSpanKind(oteltrace.SpanKindClient), oteltrace.WithAttributes(
			attribute.String(AttrOperation, OpChat),
			attribute.Int(AttrInputTokens, mc.Usage.PromptTokens), attribute.Int(AttrOutputTokens, mc.Usage.CompletionTokens),
			attribute.Float64(AttrCost, mc.Cost), attribute.String(AttrMode, mc.Mode),
			attribute.String(AttrSpanID, trace.SpanID(trace.SpanModel, i))))
	if rec.Model != "" {
		sp.SetAttributes(attribute.String(AttrRequestModel, rec.Model), attribute.String(AttrResponseModel, rec.Model))
	}
	if rec.Provider != "" {
		sp.SetAttributes(attribute.String(AttrProvider, rec.Provider), attribute.String(AttrSystem, rec.Provider))
	}
	if e.content && mc.Text != "" {
		sp.SetAttributes(attribute.String(AttrOutputMessages, messages("assistant", mc.Text)))
	}
	if mc.Error != "" {
		sp.SetStatus(codes.Error, mc.Error)
		sp.SetAttributes(attribute.String(AttrErrorType, "model_error"))
	}
	return c, sp
}

// maxRoots is how many runs' traces an Exporter remembers, for the runs
// started under them.
const maxRoots = 4096

// traceOf is the trace of run id, whose parent run is parent (""
// none): its parent's trace when this Exporter knows it, else the one made
// from its parent's id, else from its own. It remembers it, for the runs
// under this one.
func (e *Exporter) traceOf(id, parent string) oteltrace.TraceID {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := traceID(id)
	if parent != "" {
		t = traceID(parent)
		if r, ok := e.roots[parent]; ok {
			t = r
		}
	}
	if _, ok := e.roots[id]; !ok {
		if e.roots == nil {
			e.roots = make(map[string]oteltrace.TraceID)
		}
		if len(e.seen) == maxRoots {
			delete(e.roots, e.seen[e.next])
			e.seen[e.next] = id
			e.next = (e.next + 1) % maxRoots
		} else {
			e.seen = append(e.seen, id)
		}
	}
	e.roots[id] = t
	return t
}

// run starts the span of a run: invoke_agent, with what the run is.
func (e *Exporter) run(ctx context.Context, rec *trace.Record, start time.Time) oteltrace.Span {
	name := OpInvokeAgent + " " + string(rec.Kind)
	if rec.Name != "" {
		name += " " + rec.Name
	}
	_, root := e.tracer.Start(ctx, name, oteltrace.WithTimestamp(start), oteltrace.WithSpanKind(oteltrace.SpanKindInternal),
		oteltrace.WithAttributes(
			attribute.String(AttrOperation, OpInvokeAgent),
			attribute.String(AttrAgentName, agentName(rec)),
			attribute.String(AttrAgentID, rec.ID),
			attribute.String(AttrRunKind, string(rec.Kind)),
			attribute.String(AttrRunID, rec.ID),
			attribute.Int(AttrInputTokens, rec.Usage.PromptTokens),
			attribute.Int(AttrOutputTokens, rec.Usage.CompletionTokens),
			attribute.Float64(AttrCost, rec.Cost),
		))
	if rec.Model != "" {
		root.SetAttributes(attribute.String(AttrRequestModel, rec.Model), attribute.String(AttrResponseModel, rec.Model))
	}
	if rec.Provider != "" {
		root.SetAttributes(attribute.String(AttrProvider, rec.Provider), attribute.String(AttrSystem, rec.Provider))
	}
	if e.content {
		root.SetAttributes(attribute.String(AttrInputMessages, messages("user", rec.Input)), attribute.String(AttrOutputMessages, messages("assistant", rec.Output)))
	}
	if rec.Status != trace.StatusOK {
		root.SetStatus(codes.Error, rec.ErrorMessage)
		root.SetAttributes(attribute.String(AttrErrorType, orElse(rec.ErrorCode, string(rec.Status))))
	}
	return root
}

// request starts the span of a gateway request: a SERVER span named
// "{method} {route}" with the HTTP conventions' attributes, the model the
// client asked for as the request model and the one that served it as the
// response model. As the HTTP conventions say of a server, a 5xx status is
// an error and a 4xx is the client's.
func (e *Exporter) request(ctx context.Context, rec *trace.Record, start time.Time) oteltrace.Span {
	var q trace.Request
	json.Unmarshal(rec.Detail, &q)
	method := orElse(q.Method, "POST")
	name := strings.TrimSpace(method + " " + q.Route)
	_, sp := e.tracer.Start(ctx, name, oteltrace.WithTimestamp(start), oteltrace.WithSpanKind(oteltrace.SpanKindServer),
		oteltrace.WithAttributes(
			attribute.String(AttrHTTPMethod, method),
			attribute.String(AttrHTTPRoute, q.Route),
			attribute.Int(AttrHTTPStatus, q.Status),
			attribute.String(AttrGatewayAPI, q.API),
			attribute.Bool(AttrGatewayStream, q.Stream),
			attribute.String(AttrGatewayMode, q.Mode),
			attribute.String(AttrRunKind, string(rec.Kind)),
			attribute.String(AttrRunID, rec.ID),
			attribute.Int(AttrInputTokens, rec.Usage.PromptTokens),
			attribute.Int(AttrOutputTokens, rec.Usage.CompletionTokens),
			attribute.Float64(AttrCost, rec.Cost),
		))
	if q.Asked != "" {
		sp.SetAttributes(attribute.String(AttrRequestModel, q.Asked))
	}
	if q.Model != "" {
		sp.SetAttributes(attribute.String(AttrResponseModel, q.Model))
	}
	if rec.Provider != "" {
		sp.SetAttributes(attribute.String(AttrProvider, rec.Provider), attribute.String(AttrSystem, rec.Provider))
	}
	if e.content {
		sp.SetAttributes(attribute.String(AttrInputMessages, messages("user", rec.Input)), attribute.String(AttrOutputMessages, messages("assistant", rec.Output)))
	}
	switch {
	case q.Status >= 500:
		sp.SetStatus(codes.Error, rec.ErrorMessage)
		sp.SetAttributes(attribute.String(AttrErrorType, strconv.Itoa(q.Status)))
	case q.Error != "" && q.Status < 400:
		// a stream that failed after its 200
		sp.SetStatus(codes.Error, q.Error)
		sp.SetAttributes(attribute.String(AttrErrorType, orElse(rec.ErrorCode, "stream_error")))
	}
	return sp
}

// stepAttr is a step's figure as an attribute, ptk.step.<k>: strings,
// booleans, and numbers (whole ones as integers).
func stepAttr(k string, v any) (attribute.KeyValue, bool) {
	key := AttrStepPrefix + k
	switch v := v.(type) {
	case string:
		return attribute.String(key, v), true
	case bool:
		return attribute.Bool(key, v), true
	case int:
		return attribute.Int(key, v), true
	case int64:
		return attribute.Int64(key, v), true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return attribute.Int64(key, int64(v)), true
		}
		return attribute.Float64(key, v), true
	}
	return attribute.KeyValue{}, false
}

// The ids of a run's span are made from the run's id, so that the span of
// a run that names it as its parent can name its span: fixedIDs, passed to
// the tracer's IDGenerator (runIDs) in the context of that one span.
type (
	idsKey   struct{}
	fixedIDs struct {
		trace oteltrace.TraceID
		span  oteltrace.SpanID
	}
	runIDs struct{}
)

var _ sdktrace.IDGenerator = runIDs{}

// traceID is the trace of a run that has no parent run.
func traceID(run string) oteltrace.TraceID {
	sum := sha256.Sum256([]byte("ptk trace\x00" + run))
	var id oteltrace.TraceID
	copy(id[:], sum[:])
	return id
}

// spanID is a run's span.
func spanID(run string) oteltrace.SpanID {
	sum := sha256.Sum256([]byte("ptk span\x00" + run))
	var id oteltrace.SpanID
	copy(id[:], sum[:])
	if !id.IsValid() {
		id[0] = 1
	}
	return id
}

func (runIDs) NewIDs(ctx context.Context) (oteltrace.TraceID, oteltrace.SpanID) {
	if f, ok := ctx.Value(idsKey{}).(fixedIDs); ok {
		return f.trace, f.span
	}
	var t oteltrace.TraceID
	for !t.IsValid() {
		rand.Read(t[:])
	}
	return t, randomSpan()
}

func (runIDs) NewSpanID(ctx context.Context, _ oteltrace.TraceID) oteltrace.SpanID {
	if f, ok := ctx.Value(idsKey{}).(fixedIDs); ok {
		return f.span
	}
	return randomSpan()
}

func randomSpan() oteltrace.SpanID {
	var s oteltrace.SpanID
	for !s.IsValid() {
		rand.Read(s[:])
	}
	return s
}

func agentName(rec *trace.Record) string {
	if rec.Name != "" {
		return rec.Name
	}
	return string(rec.Kind)
}

func orElse(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// messages is text as the conventions' messages JSON: one message of role
// with one text part.
func messages(role, text string) string {
	b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]string{{"type": "text", "content": text}}}})
	return string(b)
}

// Sink returns a record.Sink that hands every record to next (a
// trace.Writer, or nil for none) and sends each finished run as spans. It
// is Live when next is.
func (e *Exporter) Sink(next record.Sink) record.Sink {
	if l, ok := next.(record.Live); ok {
		return liveSink{e, l}
	}
	return sink{e, next}
}

type sink struct {
	e    *Exporter
	next record.Sink
}

func (s sink) RecordFunc(build func() *trace.Record) {
	if s.next == nil {
		s.e.Export(build())
		return
	}
	s.next.RecordFunc(func() *trace.Record {
		r := build()
		s.e.Export(r)
		return r
	})
}

type liveSink struct {
	e    *Exporter
	next record.Live
}

func (s liveSink) RecordFunc(build func() *trace.Record) { sink{s.e, s.next}.RecordFunc(build) }
func (s liveSink) Begin(run trace.Run) {
	if run.ParentID != run.ID {
		s.e.traceOf(run.ID, run.ParentID) // for the runs begun under it
	}
	s.next.Begin(run)
}
func (s liveSink) Append(rec *trace.Record, from [3]int) { s.next.Append(rec, from) }

// Progress goes to the store alone: the run is sent once, when it ends.
func (s liveSink) Progress(build func() *trace.Record) { s.next.Progress(build) }
func (s liveSink) Finish(build func() *trace.Record) {
	s.next.Finish(func() *trace.Record {
		r := build()
		s.e.Export(r)
		return r
	})
}

var (
	_ record.Sink = sink{}
	_ record.Live = liveSink{}
)

// sameOrigin is the exporter's proxy function: the proxy the environment
// names (as the SDK's own), but a request to another origin than the
// first one's — a redirect, which net/http follows with every header but
// Authorization and cookies — is refused. The headers of
// OTEL_EXPORTER_OTLP_HEADERS (x-honeycomb-team, a Langfuse key) would go
// with it to wherever the redirect points. The exporter sends every
// request to its one endpoint, so the first request's origin is that
// endpoint's.
func sameOrigin() func(*http.Request) (*url.URL, error) {
	var (
		mu    sync.Mutex
		first string
	)
	return func(req *http.Request) (*url.URL, error) {
		origin := req.URL.Scheme + "://" + req.URL.Host
		mu.Lock()
		if first == "" {
			first = origin
		}
		ok := origin == first
		mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("otlp: refusing a redirect from %s to %s: the exporter's headers would go with it", first, origin)
		}
		return http.ProxyFromEnvironment(req)
	}
}
