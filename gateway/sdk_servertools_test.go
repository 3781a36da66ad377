package gateway_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/tool"
)

// TestSDKServerTools: with Config.Tools, a request that declares no tools
// is answered by the agent loop: the model calls the gateway's tools in
// the protocol, the gateway runs them and feeds the results back, and the
// client sees only the final answer. A tool that changes things is not run
// without an Approver; the model is told so.
func TestSDKServerTools(t *testing.T) {
	t.Parallel()
	const final = "It is 18°C and sunny in Paris."
	for _, w := range bothWays {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var ran []string
			type place struct {
				City string `json:"city"`
			}
			weather := tool.New("get_weather", "Current weather in a city.", func(_ context.Context, in place) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				ran = append(ran, "get_weather "+in.City)
				return `{"temp_c": 18, "sky": "sunny"}`, nil
			}, tool.ReadOnly())
			type setting struct {
				Celsius int `json:"celsius"`
			}
			thermostat := tool.New("set_thermostat", "Sets the heating.", func(_ context.Context, in setting) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				ran = append(ran, "set_thermostat")
				return "done", nil
			})
			up := startUpstream(t, &upstream{chunk: w.chunk, script: []reply{
				say("Checking.\n" + parisCall + "\n" + `<PTK_CALL>{"tool": "set_thermostat", "args": {"celsius": 21}}</PTK_CALL>`),
				say(final),
			}})
			g := newGateway(t, up, agent.ModeAuto, func(c *gateway.Config) { c.Tools = []ptk.Tool{weather, thermostat} })
			a := mustAsk(t, g.client, chat("What is the weather in Paris? Also warm the house."), w.stream)
			if a.content() != final || len(a.Choices[0].Message.ToolCalls) != 0 || a.finish() != "stop" {
				t.Errorf("content %q, %d calls, finish %q; want the final answer alone, %q", a.content(), len(a.Choices[0].Message.ToolCalls), a.finish(), final)
			}
			if u := a.Usage; u.PromptTokens != 200 {
				t.Errorf("usage %+v, want the two model calls' (200 prompt tokens)", u)
			}
			mu.Lock()
			if strings.Join(ran, ",") != "get_weather Paris" {
				t.Errorf("the gateway ran %q, want get_weather for Paris only", ran)
			}
			mu.Unlock()
			reqs := checkTranslated(t, up, agent.ModeAuto, 1, 2)
			results := reqs[1].content(-1)
			for _, want := range []string{`tool="get_weather">` + "\n" + `{"temp_c": 18, "sky": "sunny"}` + "\n</PTK_RESULT>", `<PTK_ERROR id="`, `tool="set_thermostat">`} {
				if !strings.Contains(results, want) {
					t.Errorf("the model read the results as\n%s\nwant %q in them", results, want)
				}
			}
		})
	}
}
