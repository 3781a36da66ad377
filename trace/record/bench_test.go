package record_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/agent/agenttest"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

type discard struct{}

func (discard) RecordFunc(build func() *trace.Record) { build() } // the whole cost, on the loop's goroutine

// BenchmarkLoopIteration is agent.BenchmarkLoopIteration without a
// recorder (none), with a recorder whose records go nowhere (recorder: the
// cost on the loop's goroutine), and with a recorder writing into a SQLite
// store through a Writer (store: everything, the writes included, as they
// share the CPU).
func BenchmarkLoopIteration(b *testing.B) {
	for _, mode := range []agent.Mode{agent.ModePTK, agent.ModeNative} {
		for _, rec := range []string{"none", "recorder", "store"} {
			b.Run(string(mode)+"/"+rec, func(b *testing.B) {
				const perRun = 10
				m := agenttest.NewLoopModel(perRun, mode == agent.ModeNative)
				store := &agent.MemoryStore{}
				hist := agenttest.History()
				opts := agent.Options{Model: m, Mode: mode, Tools: agenttest.Tools(), ConversationID: "bench", Store: store, MaxIterations: perRun}
				ctx := context.Background()
				var sink record.Sink = discard{}
				var w *trace.Writer
				if rec == "store" {
					s, err := trace.Open(ctx, filepath.Join(b.TempDir(), "traces.db"))
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					w = trace.NewWriter(s, nil)
					sink = w
				}
				prompt := agent.Prompt("Read the files in src and tell me if anything needs changing.")
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					store.Save(ctx, "bench", hist)
					var r *record.Agent
					if rec != "none" {
						r = record.NewAgent(sink, trace.Run{Model: "bench", Mode: string(mode), Input: prompt[0].Content})
					}
					var res *agent.Result
					for e, err := range agent.Stream(ctx, prompt, opts) {
						if r != nil {
							r.Event(e, err)
						}
						if e.Kind == agent.EventDone {
							res = e.Run
							if err != nil {
								b.Fatal(err)
							}
						}
					}
					if res.Iterations != perRun {
						b.Fatalf("iterations %d", res.Iterations)
					}
				}
				if w != nil {
					w.Close(0) // the writes are part of the cost
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perRun), "ns/iteration")
				// CPU time of the whole process (all goroutines: the writer's
				// and the garbage collector's too) per iteration: steadier
				// than wall time on a shared machine.
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*perRun), "cpu-ns/iteration")
				b.ReportMetric(0, "ns/op")
				if w != nil {
					written, failed, dropped := w.Counts()
					if failed != 0 {
						b.Errorf("%d records failed", failed)
					}
					b.ReportMetric(float64(dropped)/float64(written+dropped), "dropped/run")
				}
			})
		}
	}
}
