package browser

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/browser/browsertest"
)

// weatherPage is a chat page whose "model" calls get_weather in the PTK
// protocol, and answers from the tool's result once the prompt holds it.
func weatherPage(t *testing.T) *browsertest.Page {
	return browsertest.NewPage(t, browsertest.Options{Reply: func(m string) browsertest.Reply {
		switch {
		case !strings.Contains(m, "<PTK_CALL>"):
			return browsertest.Reply{Text: "The page was not taught the protocol."}
		case strings.Contains(m, "<PTK_RESULT") && strings.Contains(m, "Paris: 18°C, sunny"):
			return browsertest.Reply{Text: "It is sunny in Paris, 18°C."}
		}
		return browsertest.Reply{Text: "Let me check.\n\n<PTK_CALL>\n{\"tool\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}\n</PTK_CALL>"}
	}})
}

// TestAgent: an agent in auto mode over a chat page teaches it the
// protocol, runs the call the page writes, and finishes with its answer,
// whole and streamed.
func TestAgent(t *testing.T) {
	for _, stream := range []bool{false, true} {
		p := weatherPage(t)
		var calls atomic.Int32
		weather := ptk.NewTool(ptk.ToolInfo{
			Name:        "get_weather",
			Description: "Current weather for a city.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
			ReadOnly:    true,
		}, func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
			calls.Add(1)
			var a struct{ City string }
			json.Unmarshal(args, &a)
			return ptk.Result{Content: a.City + ": 18°C, sunny"}, nil
		})
		res, err := agent.Run(t.Context(), agent.Prompt("Weather in Paris?"),
			agent.Options{Model: model(t, p), Mode: agent.ModeAuto, Tools: []ptk.Tool{weather}, StreamModel: stream})
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		if !res.Success || res.Content != "It is sunny in Paris, 18°C." || calls.Load() != 1 || res.Mode != agent.ModePTK {
			t.Fatalf("stream %v: %+v, %d tool calls", stream, res, calls.Load())
		}
		msgs := p.Messages()
		if len(msgs) != 2 || msgs[0].Chat == msgs[1].Chat || !strings.HasPrefix(msgs[1].Text, msgs[0].Text) {
			t.Errorf("stream %v: each call is a new chat with the whole transcript; the page got %d messages", stream, len(msgs))
		}
	}
}
