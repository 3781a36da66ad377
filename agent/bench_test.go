package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// loopModel calls the no-op tool perRun-1 times with new arguments, then
// answers; it keeps no per-run state beyond a counter, so that a benchmark
// measures the loop, not the script.
type loopModel struct {
	perRun int
	n      atomic.Int64
	native bool
	calls  []string // the replies, made once
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

// benchTools declares 20 tools with realistic schemas; tool_0 does nothing.
func benchTools() []ptk.Tool {
	var tools []ptk.Tool
	for i := range 20 {
		schema := json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"path":{"type":"string","description":"File path relative to the workspace."},"limit":{"type":"integer","minimum":1,"description":"Lines to read."},"mode_%d":{"type":"string","enum":["a","b","c"]}},"required":["path"]}`, i))
		tools = append(tools, ptk.NewTool(ptk.ToolInfo{Name: "tool_" + strconv.Itoa(i), Description: "Tool number " + strconv.Itoa(i) + " of the benchmark.", Parameters: schema, ReadOnly: true},
			func(context.Context, json.RawMessage) (ptk.Result, error) { return ptk.Result{Content: "ok"}, nil }))
	}
	return tools
}

// benchHistory is 20 messages of earlier conversation.
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

// BenchmarkLoopIteration measures the loop's own cost per model call: 20
// tools declared, 20 messages of history, a scripted model that answers at
// once and a no-op tool. A run makes 10 model calls (9 tool calls, then the
// answer); ns/iteration and allocs/iteration are per model call.
func BenchmarkLoopIteration(b *testing.B) {
	for _, mode := range []Mode{ModePTK, ModeNative} {
		b.Run(string(mode), func(b *testing.B) {
			const perRun = 10
			m := newLoopModel(perRun, mode == ModeNative)
			tools := benchTools()
			hist := benchHistory()
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
				m := newLoopModel(turns, mode == ModeNative)
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
