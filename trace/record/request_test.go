package record_test

import (
	"context"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// buildOnly is a Sink that builds each record, as a Writer's goroutine
// would, and keeps nothing.
type buildOnly struct{}

func (buildOnly) RecordFunc(build func() *trace.Record) { build() }

// BenchmarkRequestRecord is what recording costs a gateway request on its
// own goroutine (ptk serve with a trace store): a request begun and ended,
// its record built (a Writer builds it on its own goroutine instead).
//
//	go test ./trace/record -run '^$' -bench BenchmarkRequestRecord -benchmem
func BenchmarkRequestRecord(b *testing.B) {
	q := trace.Request{API: "chat", Method: "POST", Route: "/v1/chat/completions", Status: 200, Asked: "gpt-4o", Model: "qwen3:8b", Mode: "native"}
	run := trace.Run{Model: "qwen3:8b", Provider: "ollama", Usage: ptk.Usage{PromptTokens: 1200, CompletionTokens: 80}}
	b.ReportAllocs()
	for b.Loop() {
		r := record.NewRequest(buildOnly{})
		r.End(run, q)
	}
}

// TestRequestBegunWithItsRun: a request that starts an agent run has its
// row written (running) when the run begins, so that a live run is never
// seen without the request it is under; a request without one is written
// once, as it ends, with its model call under it.
func TestRequestBegunWithItsRun(t *testing.T) {
	s, w := store(t)
	ctx := context.Background()
	req := record.NewRequest(w)
	a := req.Agent(trace.Run{Model: "qwen3:8b", Provider: "ollama", Input: "hi"})
	a.Event(agent.Event{Kind: agent.EventIteration}, nil)
	var running []trace.Run
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if running, _ = s.List(ctx, trace.Filter{Status: trace.StatusRunning}); len(running) == 2 {
			break
		}
	}
	if len(running) != 2 {
		t.Fatalf("while the run goes on: %+v", running)
	}
	for _, r := range running {
		if r.Kind == trace.KindAgent && r.ParentID != req.ID() || r.Kind == trace.KindRequest && r.ID != req.ID() {
			t.Errorf("a running run: %+v", r)
		}
	}
	a.Event(agent.Event{Kind: agent.EventDone, Run: &agent.Result{Success: true, Content: "hello"}}, nil)
	req.End(trace.Run{Model: "qwen3:8b"}, trace.Request{API: "chat", Method: "POST", Route: "/v1/chat/completions", Status: 200, Mode: "server-tools/ptk"})
	plain := record.NewRequest(w)
	plain.End(trace.Run{Model: "qwen3:8b", Usage: ptk.Usage{PromptTokens: 7}}, trace.Request{API: "messages", Method: "POST", Route: "/v1/messages", Status: 200, Mode: "ptk"})
	w.Close(0)
	r, err := s.Get(ctx, req.ID())
	if err != nil || r.Status != trace.StatusOK || r.Name != "/v1/chat/completions" || len(r.ModelCalls) != 0 {
		t.Errorf("the request with a run: %v, %+v", err, r)
	}
	p, err := s.Get(ctx, plain.ID())
	if err != nil || len(p.ModelCalls) != 1 || p.ModelCalls[0].Usage.PromptTokens != 7 || p.Iterations != 1 {
		t.Errorf("the request without one: %v, %+v", err, p)
	}
}
