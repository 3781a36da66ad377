package gateway_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/openai/responses"
)

var execTool = map[string]any{"type": "function", "name": "exec_command", "description": "Runs a command.", "strict": false,
	"parameters": json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"}},"required":["cmd"],"additionalProperties":false}`)}

func responsesBody(stream bool, extra map[string]any, input ...any) map[string]any {
	var in any = "List the files."
	if len(input) > 0 {
		in = input
	}
	b := map[string]any{"model": "gpt-5-codex", "input": in, "tools": []any{execTool, map[string]any{"type": "web_search", "external_web_access": false}},
		"tool_choice": "auto", "parallel_tool_calls": true, "store": false, "include": []any{"reasoning.encrypted_content"},
		"reasoning": map[string]any{"summary": "auto"}, "prompt_cache_key": "k"}
	if stream {
		b["stream"] = true
	}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// askResponses sends a Responses request, whole or streamed, and returns
// the response (a stream's last, after its grammar is checked).
func askResponses(t *testing.T, url string, body map[string]any, stream bool, headers ...string) *responses.Response {
	t.Helper()
	b := map[string]any{}
	for k, v := range body {
		b[k] = v
	}
	b["stream"] = stream
	status, _, out := post(t, url+"/v1/responses", b, headers...)
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	if !stream {
		var r responses.Response
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	r, err := responsesStream(out)
	if err != nil {
		t.Fatalf("the stream breaks the Responses grammar: %v\n%s", err, out)
	}
	return r
}

// sameResponse is a response without what differs between two answers to
// one request: ids, times.
func sameResponse(r *responses.Response) responses.Response {
	c := *r
	c.ID, c.CreatedAt = "", 0
	c.Output = slices.Clone(c.Output)
	for i := range c.Output {
		c.Output[i].ID = ""
		c.Output[i].CallID = ""
	}
	return c
}

// TestResponsesAnswers: what a model writes becomes output items, whole
// and streamed alike: a message, a call written in the PTK protocol or in
// Hermes' format (a function_call item), reasoning (a reasoning item), a
// reply cut at the token limit (status incomplete).
func TestResponsesAnswers(t *testing.T) {
	t.Parallel()
	args := map[string]any{"cmd": "ls -la"}
	cases := []struct {
		name   string
		said   said
		mode   agent.Mode
		types  string
		status string
		check  func(t *testing.T, r *responses.Response)
	}{
		{"text", said{text: "There are two files."}, agent.ModePTK, "message", "completed", func(t *testing.T, r *responses.Response) {
			if got := partsTextOf(r.Output[0]); got != "There are two files." {
				t.Errorf("text %q", got)
			}
		}},
		{"ptk-call", said{text: "Listing.\n" + ptkCall("exec_command", args)}, agent.ModePTK, "message function_call", "completed", func(t *testing.T, r *responses.Response) {
			c := r.Output[1]
			if c.Name != "exec_command" || c.Arguments != `{"cmd":"ls -la"}` || !strings.HasPrefix(c.CallID, "call_") || !strings.HasPrefix(c.ID, "fc_") {
				t.Errorf("call %+v", c)
			}
		}},
		{"hermes-call-auto-mode", said{text: hermesCall("exec_command", args)}, agent.ModeAuto, "function_call", "completed", nil},
		{"reasoning", said{reasoning: "I should list them.", text: "Two files."}, agent.ModePTK, "reasoning message", "completed", func(t *testing.T, r *responses.Response) {
			if got := partsTextOf(r.Output[0]); got != "I should list them." {
				t.Errorf("reasoning %q", got)
			}
		}},
		{"event-injection", said{text: sseInjection}, agent.ModePTK, "message", "completed", func(t *testing.T, r *responses.Response) {
			if got := partsTextOf(r.Output[0]); got != sseInjection {
				t.Errorf("text %q", got)
			}
		}},
		{"incomplete", said{text: "The first file is", finish: "length"}, agent.ModePTK, "message", "incomplete", func(t *testing.T, r *responses.Response) {
			if r.IncompleteDetails == nil || r.IncompleteDetails.Reason != "max_output_tokens" {
				t.Errorf("incomplete_details %+v", r.IncompleteDetails)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := agentGateway(t, replies(c.said), c.mode)
			body := responsesBody(false, nil)
			whole := askResponses(t, url, body, false)
			streamed := askResponses(t, url, body, true)
			var types []string
			for _, it := range whole.Output {
				types = append(types, it.Type)
			}
			if strings.Join(types, " ") != c.types || whole.Status != c.status || whole.Object != "response" || !strings.HasPrefix(whole.ID, "resp_") ||
				whole.Model != "local-model" || whole.Usage == nil || whole.Usage.InputTokens != 100 || whole.Usage.TotalTokens != 120 {
				t.Errorf("response %s: items %v, want %s; status %s, want %s", mustJSON(whole), types, c.types, whole.Status, c.status)
			}
			if c.check != nil {
				c.check(t, whole)
			}
			if d := cmp.Diff(sameResponse(whole), sameResponse(streamed)); d != "" {
				t.Errorf("streamed and whole answers differ (-whole +streamed):\n%s", d)
			}
		})
	}
}

func partsTextOf(it responses.Item) string {
	if it.Content == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range it.Content.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// TestCodexRequest: the request Codex 0.169.0 sent, as it sent it, is
// served: developer messages are the instructions, its function tools and
// the ones of its namespace reach the model, web_search does not; a call of
// a namespaced tool comes back with its namespace.
func TestCodexRequest(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../llm/openai/responses/testdata/codex-0.169.0.json")
	if err != nil {
		t.Fatal(err)
	}
	m := replies(said{text: ptkCall("close_agent", map[string]any{"target": "a1"})})
	url := agentGateway(t, m, agent.ModePTK)
	status, _, out := post(t, url+"/v1/responses", data, "Authorization", "Bearer k")
	r, err := responsesStream(out)
	if status != 200 || err != nil {
		t.Fatalf("status %d, %v:\n%s", status, err, out)
	}
	sys := systemPrompt(m.last())
	if !has(sys, "You are a coding agent running in the Codex CLI", "exec_command", "close_agent", "update_goal") || strings.Contains(sys, "web_search") {
		t.Errorf("the system prompt lacks Codex's instructions or tools, or shows web_search")
	}
	if !strings.Contains(lastUser(m.last()), "say hi") {
		t.Errorf("the last user turn is not Codex's prompt")
	}
	if len(r.Output) != 1 || r.Output[0].Name != "close_agent" || r.Output[0].Namespace != "multi_agent_v1" {
		t.Errorf("output %s", mustJSON(r.Output))
	}
}

// TestResponsesConversation: a Codex turn after a call: the call and its
// output are what the model reads, reasoning passed back is left out, a
// function_call_output made of parts is read as text.
func TestResponsesConversation(t *testing.T) {
	t.Parallel()
	m := replies(said{text: "Done."})
	url := agentGateway(t, m, agent.ModePTK)
	askResponses(t, url, responsesBody(false, map[string]any{"instructions": "Be brief."},
		map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "You are Codex."}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "What is in a.txt?"}}},
		map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}, "encrypted_content": "gAAAA-secret"},
		map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command", "arguments": `{"cmd":"cat a.txt"}`},
		map[string]any{"type": "function_call_output", "call_id": "call_1", "output": []any{map[string]any{"type": "input_text", "text": "hello world"}}},
		map[string]any{"role": "user", "content": "Thanks."},
	), false)
	req := m.last()
	if !has(systemPrompt(req), "Be brief.", "You are Codex.") {
		t.Errorf("instructions and developer message not in the system prompt")
	}
	var all strings.Builder
	for _, msg := range req.Messages[1:] {
		all.WriteString(string(msg.Role) + ": " + msg.Content + "\n")
	}
	if got := all.String(); !has(got, "What is in a.txt?", `"cmd":"cat a.txt"`, "PTK_RESULT", "hello world", "Thanks.") || strings.Contains(got, "secret") {
		t.Errorf("the conversation the model read:\n%s", got)
	}
}

// TestResponsesPreviousID: a stored response is continued by its id (the
// model reads the earlier turns and its own call), whatever the client's
// key, only by that key; one made with store false is not found.
func TestResponsesPreviousID(t *testing.T) {
	t.Parallel()
	m := replies(said{text: "Listing.\n" + ptkCall("exec_command", map[string]any{"cmd": "ls"})}, said{text: "Two files: a.txt and b.txt."})
	store := &agent.MemoryStore{}
	url := agentGateway(t, m, agent.ModePTK, func(c *gateway.Config) {
		c.APIKeys = []string{"key-a", "key-b"}
		c.Conversations = store
	})
	first := askResponses(t, url, responsesBody(false, map[string]any{"store": true}), false, "Authorization", "Bearer key-a")
	call := first.Output[1]
	next := responsesBody(true, map[string]any{"store": true, "previous_response_id": first.ID},
		map[string]any{"type": "function_call_output", "call_id": call.CallID, "output": "a.txt\nb.txt"})
	second := askResponses(t, url, next, true, "Authorization", "Bearer key-a")
	if second.PreviousID == nil || *second.PreviousID != first.ID || partsTextOf(second.Output[0]) != "Two files: a.txt and b.txt." {
		t.Errorf("the second response %s", mustJSON(second))
	}
	var all strings.Builder
	for _, msg := range m.last().Messages[1:] {
		all.WriteString(string(msg.Role) + ": " + msg.Content + "\n")
	}
	if got := all.String(); !has(got, "List the files.", `"cmd":"ls"`, "a.txt\nb.txt") {
		t.Errorf("the model did not read the stored turns:\n%s", got)
	}
	status, _, out := post(t, url+"/v1/responses", next, "Authorization", "Bearer key-b")
	if status != 404 || !has(string(out), "previous_response_not_found") {
		t.Errorf("another key continued the response: %d %s", status, out)
	}
	stateless := askResponses(t, url, responsesBody(false, nil), false, "Authorization", "Bearer key-a")
	status, _, out = post(t, url+"/v1/responses", responsesBody(false, map[string]any{"previous_response_id": stateless.ID}), "Authorization", "Bearer key-a")
	if status != 404 {
		t.Errorf("a response made with store false was continued: %d %s", status, out)
	}
}

// TestResponsesToolChoice: the Responses shapes of tool_choice.
func TestResponsesToolChoice(t *testing.T) {
	t.Parallel()
	args := map[string]any{"cmd": "ls"}
	url := agentGateway(t, replies(said{text: "I would list them."}, said{text: ptkCall("exec_command", args)}), agent.ModePTK)
	r := askResponses(t, url, responsesBody(false, map[string]any{"tool_choice": map[string]any{"type": "function", "name": "exec_command"}}), false)
	if len(r.Output) != 1 || r.Output[0].Type != "function_call" {
		t.Errorf("a named function: output %s", mustJSON(r.Output))
	}
	status, _, out := post(t, url+"/v1/responses", responsesBody(false, map[string]any{"tool_choice": map[string]any{"type": "function", "name": "nope"}}))
	if status != 400 || !has(string(out), `"type":"invalid_request_error"`, "nope") {
		t.Errorf("an unknown function: %d %s", status, out)
	}
}

// TestResponsesErrors: errors in OpenAI's shape before a stream, and
// response.failed in it.
func TestResponsesErrors(t *testing.T) {
	t.Parallel()
	url := agentGateway(t, replies(said{text: "fine"}), agent.ModePTK)
	for body, says := range map[string]string{
		`{"model":`:     "not a valid Responses request",
		`{"model":"m"}`: "needs input",
		`{"input":[{"role":"robot","content":"x"}]}`:                                                                                      "robot",
		`{"input":"x","tools":[{"type":"function","name":"f","parameters":"no"}]}`:                                                        "JSON Schema object",
		`{"input":"x","tools":[{"type":"web_search"},{"type":"function"}]}`:                                                               "tools[1].name: the function needs a name",
		`{"input":"x","tools":[{"type":"function","name":"f"},{"type":"namespace","name":"n","tools":[{"type":"function","name":"f"}]}]}`: "tools[1].tools[0]: the function \\\"f\\\" is declared twice",
		`{"input":[{"type":"item_reference","id":"msg_1"}]}`:                                                                              "item references",
		`{"input":[{"type":"function_call_output","output":"x"}]}`:                                                                        "call_id",
	} {
		status, _, out := post(t, url+"/v1/responses", body)
		if status != 400 || !has(string(out), `"type":"invalid_request_error"`, says) {
			t.Errorf("%s: %d %s, want 400 saying %q", body, status, out, says)
		}
	}
	m := replies(said{text: "Listing the files now", errAfter: 3, err: &llm.Error{Kind: llm.ErrConnection, Message: "the upstream went away"}})
	url = agentGateway(t, m, agent.ModePTK)
	status, _, out := post(t, url+"/v1/responses", responsesBody(true, nil))
	r, err := responsesStream(out)
	if status != 200 || err != nil || r.Status != "failed" || r.Error == nil || !strings.Contains(r.Error.Message, "went away") {
		t.Errorf("a failure mid-stream: %d %v\n%s", status, err, out)
	}
}

// Streams at once, each with its own tools, get their own events: a
// stream's buffers (its events, its opening) go to the next streams once it
// ends, and one given back while still written or read would mix one
// client's stream into another's (run with -race). Each of the three
// events that carry the response echoes its own request's tool, and the
// stream keeps the Responses grammar.
func TestResponsesStreamsKeepTheirOwnBuffers(t *testing.T) {
	t.Parallel()
	url := agentGateway(t, replies(said{text: "Listing.\n" + ptkCall("exec_command", map[string]any{"cmd": "ls"})}), agent.ModePTK)
	const clients, each = 8, 6
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				desc := fmt.Sprintf("Runs a command for client %d, request %d.%s", c, i, strings.Repeat(" Padding.", 40*c))
				tool := maps.Clone(execTool)
				tool["description"] = desc
				status, _, out := post(t, url+"/v1/responses", responsesBody(true, map[string]any{"tools": []any{tool}}))
				if status != 200 {
					t.Errorf("status %d: %s", status, out)
					return
				}
				if _, err := responsesStream(out); err != nil {
					t.Errorf("client %d: the stream breaks the Responses grammar: %v", c, err)
					return
				}
				evs, _, err := sseParse(out)
				if err != nil {
					t.Error(err)
					return
				}
				echoes := 0
				for _, ev := range evs {
					var e struct {
						Response *struct {
							Tools []struct {
								Description string `json:"description"`
							} `json:"tools"`
						} `json:"response"`
					}
					if err := json.Unmarshal(ev.data, &e); err != nil {
						t.Error(err)
						return
					}
					if e.Response == nil {
						continue
					}
					echoes++
					if len(e.Response.Tools) != 1 || e.Response.Tools[0].Description != desc {
						t.Errorf("client %d, request %d: %s echoes another request's tools: %s", c, i, ev.name, ev.data)
					}
				}
				if echoes != 3 {
					t.Errorf("client %d: %d events carry the response, want 3", c, echoes)
				}
			}
		})
	}
	wg.Wait()
}
