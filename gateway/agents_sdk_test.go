package gateway_test

// The official SDKs of the agents' APIs, which nobody here wrote, against
// the gateway in front of a scripted model that writes its calls as text:
// @anthropic-ai/sdk's messages.create and stream, openai's responses.create
// and stream, from npm (gateway/internal/agentnpmtest).

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/gateway/internal/agentnpmtest"
	"github.com/ptkit/ptk/llm"
	anthropic "github.com/ptkit/ptk/llm/anthropic/wire"
	"github.com/ptkit/ptk/llm/openai/responses"
)

var resultRE = regexp.MustCompile(`(?s)<PTK_(RESULT|ERROR)[^>]*>\n?(.*?)\n?</PTK_(?:RESULT|ERROR)>`)

// fileReader is the model of the SDK tests. Asked about a file, it calls
// the read tool the request declares (Read or read_file) with call, a
// writer of one dialect; given the tool's result, it says what the file
// says; given an error, it says it could not read it.
func fileReader(call func(tool string, args any) string) *textModel {
	return newTextModel(func(req llm.Request) said {
		if m := resultRE.FindStringSubmatch(lastUser(req)); m != nil {
			if m[1] == "ERROR" {
				return said{text: "I could not read it: " + m[2]}
			}
			return said{text: "The file says: " + m[2]}
		}
		if strings.Contains(systemPrompt(req), "read_file") {
			return said{text: "Let me look.\n\n" + call("read_file", map[string]any{"path": "/w/a.txt"})}
		}
		return said{text: "Let me look.\n\n" + call("Read", map[string]any{"file_path": "/w/a.txt"})}
	})
}

// runNode runs a script of testdata/agents with the npm packages and
// returns what it printed.
func runNode(t *testing.T, script string, env ...string) []byte {
	t.Helper()
	modules := agentnpmtest.NodeModules(t)
	node := agentnpmtest.Node(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "testdata/agents/"+script)
	cmd.Env = append(os.Environ(), append(env, "NODE_PATH="+modules)...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s: %v\n%s\n%s", script, err, out, stderr)
	}
	return out
}

// TestSDKAnthropic: @anthropic-ai/sdk creates and streams messages through
// the gateway: a tool round trip (the call written in the PTK protocol
// comes back a tool_use, its result goes in), a tool error, count_tokens,
// an API error it raises, the model list.
func TestSDKAnthropic(t *testing.T) {
	t.Parallel()
	m := fileReader(ptkCall)
	url := agentGateway(t, m, agent.ModePTK, func(c *gateway.Config) { c.APIKeys = []string{"sk-test"} })
	out := runNode(t, "anthropic_sdk.cjs", "BASE_URL="+url, "API_KEY=sk-test")
	var got struct {
		Create, Stream struct {
			First, Second anthropic.Response
			Events        []string
			Text          string
		}
		Count anthropic.CountTokens
		Error struct {
			Status  int
			Type    string
			Message string
		}
		Models []anthropic.Model
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for name, r := range map[string]struct{ First, Second anthropic.Response }{
		"create": {got.Create.First, got.Create.Second}, "stream": {got.Stream.First, got.Stream.Second}} {
		f := r.First
		if f.Stop() != "tool_use" || len(f.Content) != 2 || f.Content[0].Text != "Let me look." || f.Content[1].Name != "Read" ||
			string(f.Content[1].Input) != `{"file_path":"/w/a.txt"}` || f.Usage.OutputTokens != 20 {
			t.Errorf("%s: the first answer %s", name, mustJSON(f))
		}
	}
	if s := got.Create.Second; s.Stop() != "end_turn" || s.Content[0].Text != "The file says: hello from a.txt" {
		t.Errorf("create: the answer after the result %s", mustJSON(s))
	}
	if s := got.Stream.Second; s.Stop() != "end_turn" || got.Stream.Text != "I could not read it: ENOENT: no such file" || s.Content[0].Text != got.Stream.Text {
		t.Errorf("stream: the answer after the error %s, text %q", mustJSON(s), got.Stream.Text)
	}
	ev := strings.Join(got.Stream.Events, " ")
	if !strings.HasPrefix(ev, "message_start content_block_start content_block_delta") || !strings.HasSuffix(ev, "content_block_stop message_delta message_stop") {
		t.Errorf("stream events %s", ev)
	}
	if got.Count.InputTokens < 50 {
		t.Errorf("count_tokens %d", got.Count.InputTokens)
	}
	if got.Error.Status != 400 || got.Error.Type != "invalid_request_error" || !strings.Contains(got.Error.Message, "Nope") {
		t.Errorf("error %+v", got.Error)
	}
	if len(got.Models) != 1 || got.Models[0].ID != "local-model" || got.Models[0].Type != "model" {
		t.Errorf("models %+v", got.Models)
	}
}

// TestSDKResponses: openai's Responses API through the gateway: a
// function-call round trip (the call written in Hermes' format comes back a
// function_call item) stateless, with store false and the items sent back,
// and stateful, with previous_response_id; streamed; an API error.
func TestSDKResponses(t *testing.T) {
	t.Parallel()
	m := fileReader(hermesCall)
	url := agentGateway(t, m, agent.ModePTK, func(c *gateway.Config) { c.APIKeys = []string{"sk-test"} })
	out := runNode(t, "openai_responses.cjs", "BASE_URL="+url, "API_KEY=sk-test")
	var got struct {
		Stateless, Stateful struct {
			First, Second responses.Response
			Events        []string
			Text          string
		}
		Error struct {
			Status  int
			Type    string
			Message string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for name, r := range map[string]struct {
		First, Second responses.Response
		Events        []string
		Text          string
	}{"stateless": got.Stateless, "stateful": got.Stateful} {
		f := r.First
		if f.Status != "completed" || len(f.Output) != 2 || f.Output[1].Type != "function_call" || f.Output[1].Name != "read_file" || f.Output[1].Arguments != `{"path":"/w/a.txt"}` {
			t.Errorf("%s: the first response %s", name, mustJSON(f))
		}
		if r.Text != "The file says: hello from a.txt" || r.Second.Status != "completed" {
			t.Errorf("%s: the response after the result %s", name, mustJSON(r.Second))
		}
	}
	if p := got.Stateful.Second.PreviousID; p == nil || *p != got.Stateful.First.ID {
		t.Errorf("previous_response_id %v, want %s", p, got.Stateful.First.ID)
	}
	ev := strings.Join(got.Stateful.Events, " ")
	if !strings.HasPrefix(ev, "response.created response.in_progress response.output_item.added") || !strings.HasSuffix(ev, "response.function_call_arguments.done response.output_item.done response.completed") {
		t.Errorf("stream events %s", ev)
	}
	if got.Error.Status != 400 || got.Error.Type != "invalid_request_error" || !strings.Contains(got.Error.Message, "nope") {
		t.Errorf("error %+v", got.Error)
	}
}
