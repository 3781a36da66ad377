// Package agenttest holds the setup the benchmarks of the agent loop share
// (agent.BenchmarkLoopIteration and the trace recorder's copy of it): a
// scripted model that calls a no-op tool, 20 tools with realistic schemas
// and 20 messages of earlier history.
package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// LoopModel is a scripted model for benchmarks of the loop: it calls the
// no-op tool perRun-1 times with new arguments, then answers; it keeps no
// per-run state beyond a counter, so that a benchmark measures the loop,
// not the script.
type LoopModel struct {
	perRun int
	n      atomic.Int64
	native bool
	calls  []string // the replies, made once
	args   []json.RawMessage
}

// NewLoopModel returns a LoopModel whose runs make perRun model calls,
// native calls with native.
func NewLoopModel(perRun int, native bool) *LoopModel {
	m := &LoopModel{perRun: perRun, native: native}
	for i := range perRun {
		m.calls = append(m.calls, "Reading the next file.\n<PTK_CALL>\n{\"tool\": \"tool_0\", \"args\": {\"path\": \"src/file_"+strconv.Itoa(i)+".go\", \"limit\": 50}}\n</PTK_CALL>")
		m.args = append(m.args, json.RawMessage(`{"path": "src/file_`+strconv.Itoa(i)+`.go", "limit": 50}`))
	}
	return m
}

// Generate answers the next model call of the run.
func (m *LoopModel) Generate(_ context.Context, req llm.Request) (*llm.Response, error) {
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

// Tools declares 20 tools with realistic schemas; tool_0 does nothing.
func Tools() []ptk.Tool {
	var tools []ptk.Tool
	for i := range 20 {
		schema := json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"path":{"type":"string","description":"File path relative to the workspace."},"limit":{"type":"integer","minimum":1,"description":"Lines to read."},"mode_%d":{"type":"string","enum":["a","b","c"]}},"required":["path"]}`, i))
		tools = append(tools, ptk.NewTool(ptk.ToolInfo{Name: "tool_" + strconv.Itoa(i), Description: "Tool number " + strconv.Itoa(i) + " of the benchmark.", Parameters: schema, ReadOnly: true},
			func(context.Context, json.RawMessage) (ptk.Result, error) { return ptk.Result{Content: "ok"}, nil }))
	}
	return tools
}

// History is 20 messages of earlier conversation.
func History() []ptk.Message {
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
