package trace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptkit/ptk"
)

// benchRecord is an agent run of ten iterations, each a model call that
// calls one tool: the shape record.BenchmarkLoopIteration writes.
func benchRecord(i int) *Record {
	r := &Record{Run: Run{ID: "bench-" + strconv.Itoa(i), Kind: KindAgent, Model: "bench", Mode: "native", StartedAt: time.Now(),
		Duration: ms(12), Status: StatusOK, Iterations: 10, Input: "Read the files in src and tell me if anything needs changing.",
		Output: "Nothing needs changing."}}
	for it := 1; it <= 10; it++ {
		call := ptk.Call{ID: "call_" + strconv.Itoa(it), Tool: "read_file", Args: json.RawMessage(`{"path":"src/main.go"}`)}
		r.ModelCalls = append(r.ModelCalls, ModelCall{Mode: "native", Usage: ptk.Usage{PromptTokens: 900 + it, CompletionTokens: 20},
			Latency: ms(1), RequestHash: strings.Repeat("ab", 32), Text: "Let me look at the next file.", Calls: []ptk.Call{call}})
		r.ToolCalls = append(r.ToolCalls, ToolCall{Iteration: it, CallID: call.ID, Tool: call.Tool, Args: call.Args,
			Result: strings.Repeat("package main\n", 12), Outcome: OutcomeRan, Duration: ms(0.01)})
	}
	return r
}

// BenchmarkWrite is the store's cost per run written in batches of 100, as
// a Writer under load writes them.
func BenchmarkWrite(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "traces.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const batch = 100
	n := 0
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		recs := make([]*Record, batch)
		for i := range recs {
			recs[i] = benchRecord(n)
			n++
		}
		if err := s.Write(ctx, recs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/run")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*batch), "cpu-ns/run")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkWritePostgres is BenchmarkWrite on PostgreSQL, where every text
// value goes through pgtext.Escape (BenchmarkEscape there gives its share).
func BenchmarkWritePostgres(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, newPG(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const batch = 100
	n := 0
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		recs := make([]*Record, batch)
		for i := range recs {
			recs[i] = benchRecord(n)
			n++
		}
		if err := s.Write(ctx, recs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/run")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*batch), "cpu-ns/run")
	b.ReportMetric(0, "ns/op")
}

// processCPU is the user and system time the process has used, in
// nanoseconds (getrusage): on a machine others share, steadier than wall
// time.
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
