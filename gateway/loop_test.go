package gateway_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ptkit/ptk/agent"
)

// TestSDKRepetitionLoop: a model behind a server without a tool parser
// writes the same call until the token limit cuts it off. Streamed, the
// gateway gives its client the first call as it ended (what is sent is
// not taken back) and none of the 39 repeats, in pieces of any size: the
// parser holds a repeat back until the reply's end judges it a loop.
// Whole, it gives no call: the answer goes to the client as the server
// wrote it, as it would without the gateway.
func TestSDKRepetitionLoop(t *testing.T) {
	t.Parallel()
	one := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
	text := strings.Repeat(one, 40) + one[:30]
	for _, w := range []way{whole, streamed, {"stream-7", true, 7}} {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			up := startUpstream(t, &upstream{tools: true, chunk: w.chunk, script: []reply{{text: text, finish: "length"}}})
			g := newGateway(t, up, agent.ModeAuto)
			a, err := ask(t, g.client, chat("What is the weather in Paris?", bothTools...), w.stream)
			if err != nil {
				t.Fatalf("the SDK failed: %v (%s)", err, errorText(err))
			}
			var want []call
			if w.stream {
				want = []call{{"get_weather", `{"city":"Paris"}`}}
			}
			if got := a.calls(t); !slices.Equal(got, want) {
				t.Errorf("calls %v, want %v", got, want)
			}
		})
	}
}

// TestSDKRepetitionLoopCutBetweenCalls: the token limit cut the reply
// between two calls of a loop (three identical calls, each whole). The
// server's finish reason says so, and the gateway tells the parser, as the
// agent's turn does: whole, no call; streamed, the first call only (it was
// sent as it ended). With finish "stop" the same text is three calls.
func TestSDKRepetitionLoopCutBetweenCalls(t *testing.T) {
	t.Parallel()
	one := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
	text := strings.Repeat(one, 3)
	for _, w := range []way{whole, streamed, {"stream-7", true, 7}} {
		for _, finish := range []string{"length", "stop"} {
			t.Run(w.name+"-"+finish, func(t *testing.T) {
				t.Parallel()
				up := startUpstream(t, &upstream{tools: true, chunk: w.chunk, script: []reply{{text: text, finish: finish}}})
				g := newGateway(t, up, agent.ModeAuto)
				a, err := ask(t, g.client, chat("What is the weather in Paris?", bothTools...), w.stream)
				if err != nil {
					t.Fatalf("the SDK failed: %v (%s)", err, errorText(err))
				}
				got := a.calls(t)
				switch {
				case finish == "stop" && len(got) != 3:
					t.Errorf("finish stop: calls %v, want the three", got)
				case finish == "length" && !w.stream && len(got) != 0:
					t.Errorf("cut whole: calls %v, want none", got)
				case finish == "length" && w.stream && len(got) != 1:
					t.Errorf("cut streamed: calls %v, want the first only", got)
				}
			})
		}
	}
}
