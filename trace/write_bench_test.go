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

// BenchmarkWriterLive is a Writer's cost per model call for runs written
// live, as record.BenchmarkLoopIteration's recorder queues them: each
// run's row as it begins, each model call and each tool call as it ends
// (one Append each), the run's row as it ends; ten model calls a run. The
// caller waits when the Writer is two batches behind, so that nothing is
// dropped.
func BenchmarkWriterLive(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			ctx := context.Background()
			dsn := filepath.Join(b.TempDir(), "traces.db")
			if db == "postgres" {
				dsn = newPG(b)
			}
			s, err := Open(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			w := NewWriter(s, nil)
			var queued int64
			backlog := func() int64 {
				written, failed, dropped := w.Counts()
				return queued - written - failed - dropped
			}
			n := 0
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				r := benchRecord(n)
				n++
				run := r.Run
				run.Status, run.Duration, run.Output, run.Iterations = "", 0, "", 0
				w.Begin(run)
				for i := range r.ModelCalls {
					w.Append(&Record{Run: Run{ID: r.ID}, ModelCalls: r.ModelCalls[i : i+1 : i+1]}, [3]int{i, i, 0})
					w.Append(&Record{Run: Run{ID: r.ID}, ToolCalls: r.ToolCalls[i : i+1 : i+1]}, [3]int{i + 1, i, 0})
				}
				w.Finish(func() *Record { return r })
				queued += 2 + 2*int64(len(r.ModelCalls))
				if backlog() >= 2*MaxBatch {
					for backlog() > MaxBatch/4 {
						time.Sleep(5 * time.Millisecond)
					}
				}
			}
			w.Close(0)
			calls := float64(b.N * 10)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/calls, "ns/call")
			b.ReportMetric(float64(processCPU()-cpu0)/calls, "cpu-ns/call")
			b.ReportMetric(0, "ns/op")
			if written, failed, dropped := w.Counts(); failed+dropped != 0 || written != queued {
				b.Fatalf("written %d of %d, failed %d, dropped %d", written, queued, failed, dropped)
			}
		})
	}
}
