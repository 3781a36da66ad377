package record_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// The setup of agent.BenchmarkLoopIteration (agent/bench_test.go), copied:
// 20 tools, 20 messages of history, a scripted model that answers at once,
// a no-op tool, 10 model calls a run.

type loopModel struct {
	perRun int
	n      atomic.Int64
	native bool
	calls  []string
	args   []json.RawMessage
}

func newLoopModel(perRun int, native bool) *loopModel {
	m := &loopModel{perRun: perRun, native: native}
	for i := range perRun {
		m.calls = append(m.calls, "Reading the next file.\n<PTK_CALL>\n{\"tool\": \"tool_0\", \"args\": {\"path\": \"src/file_"+strconv.Itoa(i)+".go\", \"limit\": 50}}\n</PTK_CALL>")
		m.args = append(m.args, json.RawMessage(`{"path": "src/file_`+strconv.Itoa(i)+`.go", "limit": 50}`))
	}
	return m
}

func (m *loopModel) Generate(_ context.Context, req llm.Request) (*llm.Response, error) {
	i := int(m.n.Add(1)-1) % m.perRun
	u := ptk.Usage{PromptTokens: 1000, CompletionTokens: 40}
	if i == m.perRun-1 {
		return &llm.Response{Content: "All files read; nothing to change.", Usage: u}, nil
	}
	if m.native {
		return &llm.Response{Calls: []ptk.Call{{ID: "c" + strconv.Itoa(i), Tool: "tool_0", Args: m.args[i]}}, Usage: u}, nil
	}
	return &llm.Response{Content: m.calls[i], Usage: u}, nil
}

func benchTools() []ptk.Tool {
	var tools []ptk.Tool
	for i := range 20 {
		schema := json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"path":{"type":"string","description":"File path relative to the workspace."},"limit":{"type":"integer","minimum":1,"description":"Lines to read."},"mode_%d":{"type":"string","enum":["a","b","c"]}},"required":["path"]}`, i))
		tools = append(tools, ptk.NewTool(ptk.ToolInfo{Name: "tool_" + strconv.Itoa(i), Description: "Tool number " + strconv.Itoa(i) + " of the benchmark.", Parameters: schema, ReadOnly: true},
			func(context.Context, json.RawMessage) (ptk.Result, error) { return ptk.Result{Content: "ok"}, nil }))
	}
	return tools
}

func benchHistory() []ptk.Message {
	var h []ptk.Message
	for i := range 5 {
		id := "old_" + strconv.Itoa(i)
		h = append(h,
			ptk.Message{Role: ptk.RoleUser, Content: "Please look at module " + strconv.Itoa(i) + " and tell me what it does."},
			ptk.Message{Role: ptk.RoleAssistant, Content: "Let me read it.", Calls: []ptk.Call{{ID: id, Tool: "tool_1", Args: json.RawMessage(`{"path":"mod.go"}`)}}},
			ptk.Message{Role: ptk.RoleTool, CallID: id, Tool: "tool_1", Content: "package mod\n\nfunc Do() {}\n"},
			ptk.Message{Role: ptk.RoleAssistant, Content: "It defines Do, which does nothing yet."},
		)
	}
	return h
}

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
				m := newLoopModel(perRun, mode == agent.ModeNative)
				store := &agent.MemoryStore{}
				hist := benchHistory()
				opts := agent.Options{Model: m, Mode: mode, Tools: benchTools(), ConversationID: "bench", Store: store, MaxIterations: perRun}
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
