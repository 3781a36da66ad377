package gateway_test

import (
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/ptkit/ptk/agent"
)

// A server without a tool parser takes the tools and answers with the
// model's own call format in the text. In auto mode the gateway passes the
// request through and reads those calls out of the answer, whole or
// streamed byte by byte; the client gets tool_calls, text without tags,
// and the usage, once.
func TestSDKToolsIgnoredByServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reply, content string
		calls                []call
	}{{
		name:    "hermes",
		reply:   "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		content: "Let me check.",
		calls:   []call{{"get_weather", `{"city":"Paris"}`}},
	}, {
		name:  "mistral, two calls",
		reply: `[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"timezone": "Europe/Paris"}}]`,
		calls: []call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"timezone":"Europe/Paris"}`}},
	}, {
		name:    "think, then a fenced call",
		reply:   "<think>The user wants the weather.</think>\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"2\"}}\n```",
		calls:   []call{{"get_weather", `{"city":"Paris","days":2}`}},
		content: "",
	}, {
		name:    "prose only, passed as it is",
		reply:   "It is <b>sunny</b> in Paris.",
		content: "It is <b>sunny</b> in Paris.",
	}}
	for _, tt := range tests {
		for _, w := range []way{whole, streamed, {"stream-5", true, 5}} {
			for _, includeUsage := range []bool{false, true} {
				if includeUsage && !w.stream {
					continue
				}
				name := tt.name + "/" + w.name
				if includeUsage {
					name += "/include_usage"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					up := startUpstream(t, &upstream{tools: true, chunk: w.chunk, script: []reply{say(tt.reply)}})
					g := newGateway(t, up, agent.ModeAuto)
					p := chat("What is the weather in Paris, and the time?", bothTools...)
					if includeUsage {
						p.StreamOptions.IncludeUsage = openai.Bool(true)
					}
					a, err := ask(t, g.client, p, w.stream)
					if err != nil {
						t.Fatalf("the SDK failed: %v (%s)", err, errorText(err))
					}
					checkAnswer(t, a, p)
					if got := a.calls(t); !slices.Equal(got, tt.calls) {
						t.Errorf("calls %v, want %v", got, tt.calls)
					}
					if a.content() != tt.content {
						t.Errorf("content %q, want %q", a.content(), tt.content)
					}
					reqs := up.requests()
					if len(reqs) != 1 || !reqs[0].hasTools() {
						t.Fatalf("the upstream got %d requests, want the one request with the tools", len(reqs))
					}
				})
			}
		}
	}
}
