package acp

import (
	"context"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/llmtest"
)

// benchReplies is one prompt turn: a streamed answer, a read_file call,
// the final answer.
func benchReplies(n int) []llmtest.Reply {
	var out []llmtest.Reply
	for range n {
		out = append(out,
			llmtest.Reply{Content: "Let me read the file first.", Calls: []ptk.Call{call("c", "read_file", `{"path": "package.json"}`)}},
			llmtest.Reply{Content: "The package is named demo, version 1.0.0, and it has no dependencies at all."})
	}
	return out
}

// BenchmarkPromptTurn is one prompt turn through ACP: the agent's run and
// every notification to a Go SDK editor over pipes, with its JSON. Compare
// with BenchmarkAgentTurn, the same run without ACP.
func BenchmarkPromptTurn(b *testing.B) {
	dir := project(b)
	model := llmtest.New(benchReplies(b.N)...)
	e := connect(b, config(model), sdk.ClientCapabilities{})
	id := e.newSession(dir)
	b.ResetTimer()
	for range b.N {
		if r, err := e.prompt(id, "read package.json"); err != nil || r.StopReason != sdk.StopReasonEndTurn {
			b.Fatal(r, err)
		}
		b.StopTimer()
		e.prompt(id, "/clear") // each turn starts from an empty conversation, as in BenchmarkAgentTurn
		e.seen()
		b.StartTimer()
	}
}

func BenchmarkAgentTurn(b *testing.B) {
	dir := project(b)
	model := llmtest.New(benchReplies(b.N)...)
	a, err := newAgent(config(model))
	if err != nil {
		b.Fatal(err)
	}
	s, err := a.open(context.Background(), "bench", dir, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	opts := agent.Options{Model: model, ModelName: "scripted", StreamModel: true, Mode: agent.ModeNative, Tools: s.tools}
	b.ResetTimer()
	for range b.N {
		for ev, err := range agent.Stream(context.Background(), agent.Prompt("read package.json"), opts) {
			if ev.Kind == agent.EventDone && err != nil {
				b.Fatal(err)
			}
		}
	}
}
