package otlp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/otlp"
)

// Example sends a finished run as spans to an OTLP/HTTP endpoint: here one
// in the process that prints the tree it receives; in use, an OpenTelemetry
// Collector, Jaeger, Grafana Tempo, Langfuse or Phoenix. exp.Sink(writer)
// does the same for every run a recorder writes into a trace store.
func Example() {
	var mu sync.Mutex
	var spans []*tracepb.Span
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}))
	defer collector.Close()

	ctx := context.Background()
	exp, err := otlp.New(ctx, otlp.Options{Endpoint: collector.URL, ServiceName: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	start := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	exp.Export(&trace.Record{
		Run: trace.Run{ID: trace.NewID(), Kind: trace.KindAgent, Name: "fix the build", Model: "qwen3", StartedAt: start,
			Duration: trace.Millis(ms(2500)), Status: trace.StatusOK, Usage: ptk.Usage{PromptTokens: 1900, CompletionTokens: 60}},
		ModelCalls: []trace.ModelCall{
			{Usage: ptk.Usage{PromptTokens: 900, CompletionTokens: 40}, Latency: trace.Millis(ms(1000)), Span: trace.Span{Start: start}},
			{Usage: ptk.Usage{PromptTokens: 1000, CompletionTokens: 20}, Latency: trace.Millis(ms(1200)), Span: trace.Span{Start: start.Add(ms(1200))}},
		},
		ToolCalls: []trace.ToolCall{
			{Tool: "read_file", CallID: "call_1", Outcome: trace.OutcomeRan, Duration: trace.Millis(ms(150)), Span: trace.Span{Start: start.Add(ms(1000))}},
		},
	})
	if err := exp.Shutdown(ctx); err != nil { // sends what is queued
		fmt.Println(err)
		return
	}

	// The tree received: each span under its parent, in the order they
	// started.
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(spans, func(a, b *tracepb.Span) int { return int(a.StartTimeUnixNano - b.StartTimeUnixNano) })
	var show func(parent []byte, depth int)
	show = func(parent []byte, depth int) {
		for _, s := range spans {
			if string(s.ParentSpanId) == string(parent) {
				line := fmt.Sprintf("%s%s %v", strings.Repeat("  ", depth), s.Name, time.Duration(s.EndTimeUnixNano-s.StartTimeUnixNano))
				for _, kv := range s.Attributes {
					if kv.Key == otlp.AttrInputTokens {
						line += fmt.Sprintf(", %d tokens in", kv.Value.GetIntValue())
					}
				}
				fmt.Println(line)
				show(s.SpanId, depth+1)
			}
		}
	}
	show(nil, 0)
	// Output:
	// invoke_agent agent fix the build 2.5s, 1900 tokens in
	//   chat qwen3 1s, 900 tokens in
	//   execute_tool read_file 150ms
	//   chat qwen3 1.2s, 1000 tokens in
}
