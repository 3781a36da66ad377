package gateway_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/tool"
)

// agentAPIs are the agents' APIs, each with a streamed request and a
// check of its stream's grammar.
var agentAPIs = []struct {
	name, path string
	body       func() map[string]any
	check      func(body []byte) error
	// first is a line that says the stream's text has begun.
	first string
}{
	{"messages", "/v1/messages", func() map[string]any { return messagesBody(true, nil) },
		func(b []byte) error { _, _, err := messagesStream(b); return err }, "text_delta"},
	{"responses", "/v1/responses", func() map[string]any { return responsesBody(true, nil) },
		func(b []byte) error { _, err := responsesStream(b); return err }, "response.output_text.delta"},
}

// TestAgentsKeepAlive: while the model is slow to answer, a stream begins
// and says it is alive (a ping event, an event-stream comment), within
// the API's grammar.
func TestAgentsKeepAlive(t *testing.T) {
	t.Parallel()
	for _, a := range agentAPIs {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			m := replies(said{text: "Here it is.", wait: 400 * time.Millisecond})
			url := agentGateway(t, m, agent.ModePTK, func(c *gateway.Config) { c.KeepAlive = 50 * time.Millisecond })
			status, _, out := post(t, url+a.path, a.body())
			if status != 200 {
				t.Fatalf("status %d: %s", status, out)
			}
			if err := a.check(out); err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			_, comments, _ := sseParse(out)
			pings := strings.Count(string(out), "event: ping")
			if pings+comments < 3 {
				t.Errorf("%d pings and %d comments in 400 ms at one every 50 ms:\n%s", pings, comments, out)
			}
		})
	}
}

// TestAgentsClientGoesAway: a client that leaves in the middle of a stream
// costs nothing: the model's call ends at once (its context canceled),
// and the keep-alive writes nothing more (the race detector watches).
func TestAgentsClientGoesAway(t *testing.T) {
	t.Parallel()
	for _, a := range agentAPIs {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			// The text comes in one piece, which the gateway passes on at
			// once; then the model stalls.
			m := replies(said{text: "The file says hello, and then it goes on and on.", stallAfter: 1})
			m.chunk = 1000
			url := agentGateway(t, m, agent.ModePTK, func(c *gateway.Config) { c.KeepAlive = 5 * time.Millisecond })
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+a.path, strings.NewReader(string(mustJSON(a.body()))))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() && !strings.Contains(sc.Text(), a.first) {
			}
			cancel()
			resp.Body.Close()
			select {
			case <-m.ended:
			case <-time.After(5 * time.Second):
				t.Fatal("the model's call goes on after the client left")
			}
			time.Sleep(30 * time.Millisecond) // keep-alive ticks, had it not stopped
		})
	}
}

// TestAgentsServerTools: a request of the agents' APIs that declares no
// tools is answered with the gateway's own tools (Config.Tools) as a Chat
// Completions one is: the gateway runs the calls and the client gets the
// answer, whole and streamed, in its API's shape.
func TestAgentsServerTools(t *testing.T) {
	t.Parallel()
	type place struct {
		City string `json:"city"`
	}
	weather := tool.New("get_weather", "Current weather in a city.", func(_ context.Context, in place) (string, error) {
		return `{"temp_c": 18, "city": "` + in.City + `"}`, nil
	}, tool.ReadOnly())
	const final = "It is 18°C in Paris."
	for _, stream := range []bool{false, true} {
		m := newTextModel(func(req llm.Request) said {
			if strings.Contains(lastUser(req), `"temp_c": 18`) {
				return said{text: final}
			}
			return said{text: ptkCall("get_weather", map[string]any{"city": "Paris"})}
		})
		url := agentGateway(t, m, agent.ModePTK, func(c *gateway.Config) { c.Tools = []ptk.Tool{weather} })
		msg := askMessages(t, url, messagesBody(false, map[string]any{"tools": nil}), stream)
		if len(msg.Content) != 1 || msg.Content[0].Text != final || msg.Stop() != "end_turn" {
			t.Errorf("messages, stream %v: %s", stream, mustJSON(msg))
		}
		r := askResponses(t, url, responsesBody(false, map[string]any{"tools": nil}), stream)
		if len(r.Output) != 1 || partsTextOf(r.Output[0]) != final || r.Status != "completed" {
			t.Errorf("responses, stream %v: %s", stream, mustJSON(r))
		}
	}
}

// TestAgentsToolsRejected: in auto mode an upstream that rejects native
// tools gets the text protocol, and the answer is one stream: the writer
// of the answer given up stops its keep-alive, which would otherwise begin
// a second stream while the model taught the protocol thinks.
func TestAgentsToolsRejected(t *testing.T) {
	t.Parallel()
	for _, a := range agentAPIs {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			m := newTextModel(func(req llm.Request) said {
				if len(req.Tools) > 0 {
					return said{err: &llm.Error{Kind: llm.ErrToolsUnsupported, Status: 400, Message: "model does not support tools"}}
				}
				return said{text: "Listing.", wait: 300 * time.Millisecond}
			})
			url := agentGateway(t, m, agent.ModeAuto, func(c *gateway.Config) { c.KeepAlive = 100 * time.Millisecond })
			status, _, out := post(t, url+a.path, a.body())
			if status != 200 {
				t.Fatalf("status %d: %s", status, out)
			}
			if err := a.check(out); err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			time.Sleep(250 * time.Millisecond) // a keep-alive left running would write now
		})
	}
}
