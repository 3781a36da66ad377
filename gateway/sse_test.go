package gateway_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/ptkit/ptk/agent"
)

// TestSDKPassThroughLineEnds: an upstream's event stream is read whatever
// ends its lines (LF, CRLF or CR, as the event-stream format allows): the
// calls written in its text are found and the client gets them as
// tool_calls, with the text and the usage.
func TestSDKPassThroughLineEnds(t *testing.T) {
	t.Parallel()
	chunks := []string{
		`: keep-alive`,
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me check.\n<tool_call>\n{\"name\": \"get_weather\", "},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[{"index":0,"delta":{"content":"\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741576544,"model":"qwen3","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}`,
		`data: [DONE]`,
	}
	for _, eol := range []struct{ name, s string }{{"LF", "\n"}, {"CRLF", "\r\n"}, {"CR", "\r"}} {
		t.Run(eol.name, func(t *testing.T) {
			t.Parallel()
			raw := strings.Join(chunks, eol.s+eol.s) + eol.s + eol.s
			up := startUpstream(t, &upstream{tools: true, script: []reply{{raw: raw, contentType: "text/event-stream"}}})
			g := newGateway(t, up, agent.ModeAuto)
			p := chat("What is the weather in Paris?", bothTools...)
			p.StreamOptions.IncludeUsage = openai.Bool(true)
			a, err := ask(t, g.client, p, true)
			if err != nil {
				t.Fatalf("the SDK failed: %v (%s)", err, errorText(err))
			}
			if got, want := a.calls(t), []call{{"get_weather", `{"city":"Paris"}`}}; !slices.Equal(got, want) {
				t.Errorf("calls %v, want %v", got, want)
			}
			if a.content() != "Let me check." {
				t.Errorf("content %q, want %q", a.content(), "Let me check.")
			}
			if a.Usage.PromptTokens != 120 || a.Usage.CompletionTokens != 30 {
				t.Errorf("usage %+v, want the upstream's 120 + 30", a.Usage)
			}
		})
	}
}
