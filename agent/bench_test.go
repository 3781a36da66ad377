package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent/agenttest"
)

// BenchmarkLoopIteration measures the loop's own cost per model call: 20
// tools declared, 20 messages of history, a scripted model that answers at
// once and a no-op tool. A run makes 10 model calls (9 tool calls, then the
// answer); ns/iteration and allocs/iteration are per model call.
func BenchmarkLoopIteration(b *testing.B) {
	for _, mode := range []Mode{ModePTK, ModeNative} {
		b.Run(string(mode), func(b *testing.B) {
			const perRun = 10
			m := agenttest.NewLoopModel(perRun, mode == ModeNative)
			tools := agenttest.Tools()
			hist := agenttest.History()
			store := &MemoryStore{}
			opts := Options{Model: m, Mode: mode, Tools: tools, ConversationID: "bench", Store: store, MaxIterations: perRun}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				store.Save(ctx, "bench", hist)
				res, err := Run(ctx, Prompt("Read the files in src and tell me if anything needs changing."), opts)
				if err != nil || res.Iterations != perRun {
					b.Fatalf("err %v, iterations %d", err, res.Iterations)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perRun), "ns/iteration")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkLoopLength runs the loop for long conversations: one read-only
// tool that returns about 2 KB, a scripted model that calls it with new
// arguments every turn and answers at the last. The loop's own cost per
// turn must not grow with the conversation: each message is rendered once
// (turn.History), so ns/turn at 1,600 turns stays near that at 10, and the
// bytes allocated per run grow linearly (B/turn stays flat).
func BenchmarkLoopLength(b *testing.B) {
	result := strings.Repeat("0123456789abcdef ", 120) // ~2 KB
	for _, mode := range []Mode{ModePTK, ModeNative} {
		for _, turns := range []int{10, 100, 400, 1600} {
			b.Run(fmt.Sprintf("%s/turns=%d", mode, turns), func(b *testing.B) {
				m := agenttest.NewLoopModel(turns, mode == ModeNative)
				read := ptk.NewTool(ptk.ToolInfo{Name: "tool_0", Description: "Reads a file.", ReadOnly: true,
					Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`)},
					func(context.Context, json.RawMessage) (ptk.Result, error) { return ptk.Result{Content: result}, nil })
				opts := Options{Model: m, Mode: mode, Tools: []ptk.Tool{read}, MaxIterations: turns, MaxToolCalls: turns}
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					res, err := Run(ctx, Prompt("Read every file in src."), opts)
					if err != nil || res.Iterations != turns {
						b.Fatalf("err %v, iterations %d", err, res.Iterations)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// BenchmarkRunTool measures what answering one call costs beside the tool:
// the goroutine that lets a tool deaf to its context be abandoned at its
// deadline, the recover, the timeout's context.
func BenchmarkRunTool(b *testing.B) {
	l := local{&Options{ToolTimeout: time.Minute}}
	noop := ptk.NewTool(ptk.ToolInfo{Name: "noop"}, func(context.Context, json.RawMessage) (ptk.Result, error) { return ptk.Result{Content: "ok"}, nil })
	c := &ToolRun{Call: ptk.Call{Tool: "noop", Args: json.RawMessage(`{}`)}, Tool: noop}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.runTool(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactedRun runs long runs against a model with a 4,096-token
// window (agenttest.WindowModel), compaction on: the loop's cost per turn,
// the notes calls included, must stay flat from 20 turns to 1,600, since
// what is rendered, counted and sent is bounded by the window, not by the
// conversation.
func BenchmarkCompactedRun(b *testing.B) {
	for _, mode := range []Mode{ModePTK, ModeNative} {
		for _, turns := range []int{20, 100, 400, 800, 1600} {
			b.Run(fmt.Sprintf("%s/turns=%d", mode, turns), func(b *testing.B) {
				tools := agenttest.FileTools(900)
				ctx := context.Background()
				compactions := 0
				b.ReportAllocs()
				for b.Loop() {
					m := &agenttest.WindowModel{Window: 4096, Turns: turns, Native: mode == ModeNative, IsNotes: isNotes}
					res, err := Run(ctx, Prompt(task), Options{Model: m, Mode: mode, Tools: tools, MaxIterations: turns, MaxToolCalls: turns})
					if err != nil || res.Iterations != turns {
						b.Fatalf("err %v, iterations %d", err, res.Iterations)
					}
					compactions += len(res.Compactions)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
				b.ReportMetric(float64(compactions)/float64(b.N*turns), "compactions/turn")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
