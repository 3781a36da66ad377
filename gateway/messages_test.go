package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/llm"
	anthropic "github.com/ptkit/ptk/llm/anthropic/wire"
)

// sseInjection is text that would end a stream and begin a forged event,
// were it written into an event-stream as it is.
const sseInjection = "Done.\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\nevent: response.completed\r\ndata: {}\n\nDone again."

var readTool = map[string]any{"name": "Read", "description": "Read a file.", "input_schema": json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"file_path":{"type":"string"},"limit":{"type":"integer"}},"required":["file_path"],"additionalProperties":false}`)}
var bashTool = map[string]any{"name": "Bash", "description": "Run a command.", "input_schema": json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}

func messagesBody(stream bool, extra map[string]any, msgs ...any) map[string]any {
	if len(msgs) == 0 {
		msgs = []any{map[string]any{"role": "user", "content": "Read /w/a.txt"}}
	}
	b := map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": msgs, "tools": []any{readTool, bashTool}}
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

// askMessages sends a Messages request, whole or streamed, and returns the
// message (a stream rebuilt after its grammar is checked).
func askMessages(t *testing.T, url string, body map[string]any, stream bool) anthropic.Response {
	t.Helper()
	b := map[string]any{}
	for k, v := range body {
		b[k] = v
	}
	b["stream"] = stream
	status, h, out := post(t, url+"/v1/messages?beta=true", b, "anthropic-version", "2023-06-01", "anthropic-beta", "claude-code-20250219")
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	var msg anthropic.Response
	if !stream {
		if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("content type %q", ct)
		}
		if err := json.Unmarshal(out, &msg); err != nil {
			t.Fatal(err)
		}
		return msg
	}
	msg, errData, err := messagesStream(out)
	if err != nil {
		t.Fatalf("the stream breaks the Messages grammar: %v\n%s", err, out)
	}
	if errData != nil {
		t.Fatalf("the stream ended with an error: %s", errData)
	}
	return msg
}

// comparable is the message without what differs between two answers to
// the same request: ids.
func comparable(m anthropic.Response) anthropic.Response {
	m.ID = ""
	m.Content = slices.Clone(m.Content)
	for i := range m.Content {
		if m.Content[i].Type == "tool_use" {
			m.Content[i].ID = ""
			var v any
			json.Unmarshal(m.Content[i].Input, &v)
			m.Content[i].Input, _ = json.Marshal(v)
		}
	}
	return m
}

// TestMessagesAnswers: what a model writes becomes the API's content
// blocks and stop reasons, whole and streamed alike: prose, a call written
// in the PTK protocol or in Hermes' format (a tool_use block, stop
// tool_use), reasoning as thinking when asked for, a reply cut at the
// token limit (max_tokens).
func TestMessagesAnswers(t *testing.T) {
	t.Parallel()
	args := map[string]any{"file_path": "/w/a.txt"}
	cases := []struct {
		name   string
		said   said
		mode   agent.Mode
		extra  map[string]any
		want   []anthropic.Block
		reason string
	}{
		{"text", said{text: "The file holds one line."}, agent.ModePTK, nil,
			[]anthropic.Block{{Type: "text", Text: "The file holds one line."}}, "end_turn"},
		{"ptk-call", said{text: "Let me read it.\n\n" + ptkCall("Read", args)}, agent.ModePTK, nil,
			[]anthropic.Block{{Type: "text", Text: "Let me read it."}, {Type: "tool_use", Name: "Read", Input: json.RawMessage(`{"file_path":"/w/a.txt"}`)}}, "tool_use"},
		{"hermes-call-native-mode", said{text: hermesCall("Read", args)}, agent.ModeNative, nil,
			[]anthropic.Block{{Type: "tool_use", Name: "Read", Input: json.RawMessage(`{"file_path":"/w/a.txt"}`)}}, "tool_use"},
		{"two-calls", said{text: ptkCall("Read", args) + "\n" + hermesCall("Bash", map[string]any{"command": "ls"})}, agent.ModePTK, nil,
			[]anthropic.Block{{Type: "tool_use", Name: "Read", Input: json.RawMessage(`{"file_path":"/w/a.txt"}`)}, {Type: "tool_use", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}}, "tool_use"},
		{"thinking", said{reasoning: "The user wants the file.", text: "Reading."}, agent.ModePTK, map[string]any{"thinking": map[string]any{"type": "adaptive"}},
			[]anthropic.Block{{Type: "thinking", Thinking: "The user wants the file."}, {Type: "text", Text: "Reading."}}, "end_turn"},
		{"think-tags", said{text: "<think>Which file?</think>Reading."}, agent.ModePTK, map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 2000}},
			[]anthropic.Block{{Type: "thinking", Thinking: "Which file?"}, {Type: "text", Text: "Reading."}}, "end_turn"},
		{"no-thinking-asked", said{reasoning: "Hidden.", text: "Reading."}, agent.ModePTK, nil,
			[]anthropic.Block{{Type: "text", Text: "Reading."}}, "end_turn"},
		{"max-tokens", said{text: "The file is long and", finish: "length"}, agent.ModePTK, nil,
			[]anthropic.Block{{Type: "text", Text: "The file is long and"}}, "max_tokens"},
		{"no-tools", said{text: "Hi."}, agent.ModeAuto, map[string]any{"tools": nil},
			[]anthropic.Block{{Type: "text", Text: "Hi."}}, "end_turn"},
		// What a model writes cannot break out of its event's data.
		{"event-injection", said{text: sseInjection}, agent.ModePTK, nil,
			[]anthropic.Block{{Type: "text", Text: sseInjection}}, "end_turn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := replies(c.said)
			url := agentGateway(t, m, c.mode)
			body := messagesBody(false, c.extra)
			whole := askMessages(t, url, body, false)
			streamed := askMessages(t, url, body, true)
			if whole.Type != "message" || whole.Role != "assistant" || !strings.HasPrefix(whole.ID, "msg_") || whole.Model != "local-model" {
				t.Errorf("the message %+v is not an assistant message of the model served", whole)
			}
			want := anthropic.Response{Type: "message", Role: "assistant", Model: "local-model", Content: c.want, StopReason: &c.reason,
				Usage: anthropic.Usage{InputTokens: 100, OutputTokens: 20}}
			if d := cmp.Diff(comparable(want), comparable(whole)); d != "" {
				t.Errorf("whole answer (-want +got):\n%s", d)
			}
			if d := cmp.Diff(comparable(whole), comparable(streamed)); d != "" {
				t.Errorf("streamed and whole answers differ (-whole +streamed):\n%s", d)
			}
			for _, b := range whole.Content {
				if b.Type == "tool_use" && !strings.HasPrefix(b.ID, "call_") {
					t.Errorf("tool_use id %q", b.ID)
				}
			}
		})
	}
}

// TestMessagesConversation: what Claude Code sends back is what the model
// reads: the system prompt as blocks and a system message inside messages
// as its instructions; an assistant turn's text and tool_use; a user turn
// of tool_results (content as a string or blocks, is_error, an image the
// model cannot be shown) followed by text; thinking blocks left out.
func TestMessagesConversation(t *testing.T) {
	t.Parallel()
	m := replies(said{text: "Done."})
	url := agentGateway(t, m, agent.ModePTK)
	msgs := []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Fix the typo in a.txt"}}},
		map[string]any{"role": "system", "content": []any{map[string]any{"type": "text", "text": "Primary working directory: /w"}}},
		map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "thinking", "thinking": "secret plan", "signature": "sig"},
			map[string]any{"type": "text", "text": "Reading both."},
			map[string]any{"type": "tool_use", "id": "toolu_01", "name": "Read", "input": map[string]any{"file_path": "/w/a.txt"}},
			map[string]any{"type": "tool_use", "id": "toolu_02", "name": "Bash", "input": map[string]any{"command": "ls /w"}},
		}},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_01", "content": []any{
				map[string]any{"type": "text", "text": "1\thelo world"},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
			}},
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_02", "content": "ls: cannot access", "is_error": true},
			map[string]any{"type": "text", "text": "Go on."},
		}},
	}
	body := messagesBody(false, map[string]any{"system": []any{map[string]any{"type": "text", "text": "You are a coding agent.", "cache_control": map[string]any{"type": "ephemeral"}}},
		"metadata": map[string]any{"user_id": "u"}, "context_management": map[string]any{"edits": []any{}}, "output_config": map[string]any{"effort": "medium"}}, msgs...)
	askMessages(t, url, body, false)
	req := m.last()
	sys := systemPrompt(req)
	if !has(sys, "You are a coding agent.", "Primary working directory: /w", "Read", "Bash", "<PTK_CALL>") {
		t.Errorf("system prompt lacks the instructions, the system message or the tools:\n%s", sys)
	}
	var all strings.Builder
	for _, msg := range req.Messages[1:] {
		all.WriteString(string(msg.Role) + ": " + msg.Content + "\n")
	}
	got := all.String()
	if !has(got, "Fix the typo in a.txt", "Reading both.", `"file_path"`, "helo world", "image not shown", "ls: cannot access", "PTK_ERROR", "Go on.") {
		t.Errorf("the conversation the model read lacks a turn:\n%s", got)
	}
	if strings.Contains(got, "secret plan") {
		t.Errorf("a thinking block passed back reached the model:\n%s", got)
	}
	if roles := fmt.Sprint(len(req.Messages)); roles != "5" { // system, user, assistant, results, user
		t.Errorf("%s messages, want 5:\n%s", roles, got)
	}
}

// TestMessagesToolChoice: tool_choice any and tool make a model that
// answered in prose ask again, none keeps its call from the client, and
// disable_parallel_tool_use lets one call through.
func TestMessagesToolChoice(t *testing.T) {
	t.Parallel()
	args := map[string]any{"file_path": "/w/a.txt"}
	cases := []struct {
		name   string
		choice map[string]any
		said   []said
		tools  []string
		reason string
	}{
		{"any", map[string]any{"type": "any"}, []said{{text: "I would read it."}, {text: ptkCall("Read", args)}}, []string{"Read"}, "tool_use"},
		{"tool", map[string]any{"type": "tool", "name": "Bash"}, []said{{text: ptkCall("Read", args)}, {text: ptkCall("Bash", map[string]any{"command": "cat /w/a.txt"})}}, []string{"Bash"}, "tool_use"},
		{"none", map[string]any{"type": "none"}, []said{{text: "It says hello."}}, nil, "end_turn"},
		{"single", map[string]any{"type": "auto", "disable_parallel_tool_use": true}, []said{{text: ptkCall("Read", args) + ptkCall("Bash", map[string]any{"command": "ls"})}}, []string{"Read"}, "tool_use"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := agentGateway(t, replies(c.said...), agent.ModePTK)
			for _, stream := range []bool{false, true} {
				msg := askMessages(t, url, messagesBody(false, map[string]any{"tool_choice": c.choice}), stream)
				var tools []string
				for _, b := range msg.Content {
					if b.Type == "tool_use" {
						tools = append(tools, b.Name)
					}
				}
				if !slices.Equal(tools, c.tools) || msg.Stop() != c.reason {
					t.Errorf("stream %v: calls %v, stop %s; want %v, %s", stream, tools, msg.Stop(), c.tools, c.reason)
				}
			}
		})
	}
}

// TestMessagesErrors: bad requests, keys and upstream failures get
// Anthropic's error shape and status, before a stream and in it.
func TestMessagesErrors(t *testing.T) {
	t.Parallel()
	failing := replies(said{err: &llm.Error{Kind: llm.ErrRateLimited, Status: 429, Message: "slow down", RetryAfter: 3 * time.Second}})
	cases := []struct {
		name    string
		model   *textModel
		body    any
		headers []string
		status  int
		typ     string
		says    string
	}{
		{"not-json", nil, `{"model":`, nil, 400, "invalid_request_error", "not a valid Messages request"},
		{"no-max-tokens", nil, messagesBody(false, map[string]any{"max_tokens": nil}), nil, 400, "invalid_request_error", "max_tokens"},
		{"no-messages", nil, messagesBody(false, map[string]any{"messages": []any{}}), nil, 400, "invalid_request_error", "messages"},
		{"bad-role", nil, messagesBody(false, nil, map[string]any{"role": "robot", "content": "hi"}), nil, 400, "invalid_request_error", "robot"},
		{"bad-content", nil, messagesBody(false, nil, map[string]any{"role": "user", "content": 7}), nil, 400, "invalid_request_error", "content"},
		{"unknown-choice", nil, messagesBody(false, map[string]any{"tool_choice": map[string]any{"type": "tool", "name": "Nope"}}), nil, 400, "invalid_request_error", "Nope"},
		{"schema-not-object", nil, messagesBody(false, map[string]any{"tools": []any{map[string]any{"name": "X", "input_schema": "string"}}}), nil, 400, "invalid_request_error", "input_schema"},
		{"no-key", nil, messagesBody(false, nil), nil, 401, "authentication_error", "x-api-key"},
		{"wrong-key", nil, messagesBody(false, nil), []string{"x-api-key", "sk-wrong"}, 401, "authentication_error", "API key"},
		{"rate-limited", failing, messagesBody(false, nil), []string{"x-api-key", "sk-right"}, 429, "rate_limit_error", "slow down"},
		{"too-large", nil, messagesBody(false, nil, map[string]any{"role": "user", "content": strings.Repeat("a", 70<<10)}), nil, 413, "request_too_large", "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := c.model
			if m == nil {
				m = replies(said{text: "fine"})
			}
			url := agentGateway(t, m, agent.ModePTK, func(cfg *gateway.Config) {
				if c.status == 401 || c.headers != nil {
					cfg.APIKeys = []string{"sk-right"}
				}
				cfg.MaxBodyBytes = 64 << 10
			})
			status, h, out := post(t, url+"/v1/messages", c.body, c.headers...)
			var e anthropic.ErrorBody
			if err := json.Unmarshal(out, &e); err != nil || status != c.status || e.Type != "error" || e.Error.Type != c.typ || !strings.Contains(e.Error.Message, c.says) {
				t.Errorf("got %d %s, want %d with an error of type %s that says %q", status, out, c.status, c.typ, c.says)
			}
			if c.status == 429 && h.Get("Retry-After") != "3" {
				t.Errorf("Retry-After %q, want 3", h.Get("Retry-After"))
			}
		})
	}
	t.Run("keys", func(t *testing.T) {
		t.Parallel()
		url := agentGateway(t, replies(said{text: "fine"}), agent.ModePTK, func(cfg *gateway.Config) { cfg.APIKeys = []string{"sk-right"} })
		for _, h := range [][]string{{"x-api-key", "sk-right"}, {"Authorization", "Bearer sk-right"}} {
			if status, _, out := post(t, url+"/v1/messages", messagesBody(false, nil), h...); status != 200 {
				t.Errorf("%s: %d %s", h[0], status, out)
			}
		}
	})
	t.Run("mid-stream", func(t *testing.T) {
		t.Parallel()
		m := replies(said{text: "Reading the file now, then", errAfter: 4, err: &llm.Error{Kind: llm.ErrConnection, Message: "the upstream went away"}})
		url := agentGateway(t, m, agent.ModePTK)
		status, _, out := post(t, url+"/v1/messages", messagesBody(true, nil))
		msg, errData, err := messagesStream(out)
		if err != nil || status != 200 || errData == nil {
			t.Fatalf("status %d, %v, error event %s:\n%s", status, err, errData, out)
		}
		var e anthropic.ErrorBody
		json.Unmarshal(errData, &e)
		if e.Error.Type != "api_error" || !strings.Contains(e.Error.Message, "went away") || len(msg.Content) == 0 {
			t.Errorf("error event %s after %d blocks", errData, len(msg.Content))
		}
	})
}

// TestMessagesModels: Claude Code's model names reach the gateway's
// model; a map renames; a model the gateway does not serve with no default
// is a clear 404; /v1/models and count_tokens answer in Anthropic's shape.
func TestMessagesModels(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var resolved []string
	m := replies(said{text: "ok"})
	configure := func(def string) func(cfg *gateway.Config) {
		return func(cfg *gateway.Config) {
			cfg.DefaultModel = def
			cfg.ModelMap = gateway.ModelMap{{Pattern: "claude-haiku-*", Model: "qwen3:1.7b"}}
			cfg.Serves = func(name string) bool { return name == "qwen3:8b" || name == "qwen3:1.7b" || name == "llama3" }
			cfg.Models = func(context.Context) ([]string, error) { return []string{"qwen3:8b", "llama3"}, nil }
			cfg.Resolve = func(name string) (gateway.Upstream, error) {
				mu.Lock()
				resolved = append(resolved, name)
				mu.Unlock()
				return gateway.Upstream{Model: m, Mode: agent.ModePTK}, nil
			}
		}
	}
	url := agentGateway(t, m, agent.ModePTK, configure("qwen3:8b"))
	for asked, want := range map[string]string{"claude-opus-5-5": "qwen3:8b", "claude-haiku-4-5-20251001": "qwen3:1.7b", "llama3": "llama3", "": "qwen3:8b"} {
		msg := askMessages(t, url, messagesBody(false, map[string]any{"model": asked}), false)
		if msg.Model != want {
			t.Errorf("asked for %q: served %q, want %q", asked, msg.Model, want)
		}
	}
	mu.Lock()
	if slices.Contains(resolved, "claude-opus-5-5") {
		t.Errorf("a name the gateway does not serve was resolved: %v", resolved)
	}
	mu.Unlock()

	bare := agentGateway(t, m, agent.ModePTK, configure(""))
	status, _, out := post(t, bare+"/v1/messages", messagesBody(false, map[string]any{"model": "claude-opus-5-5"}))
	var e anthropic.ErrorBody
	if json.Unmarshal(out, &e); status != 404 || e.Error.Type != "not_found_error" || !has(e.Error.Message, "claude-opus-5-5", "--model-map") {
		t.Errorf("a model not served, no default: %d %s", status, out)
	}

	status, list := get(t, url+"/v1/models", "anthropic-version", "2023-06-01")
	var ml anthropic.ModelList
	if err := json.Unmarshal(list, &ml); err != nil || status != 200 || len(ml.Data) != 2 || ml.Data[0].Type != "model" || ml.Data[0].ID != "qwen3:8b" ||
		ml.Data[0].CreatedAt == "" || ml.FirstID == nil || *ml.LastID != "llama3" || ml.HasMore {
		t.Errorf("Anthropic's model list: %d %s", status, list)
	}
	status, list = get(t, url+"/v1/models")
	if status != 200 || !has(string(list), `"object":"list"`, `"id":"llama3","object":"model"`) {
		t.Errorf("OpenAI's model list: %d %s", status, list)
	}
	status, one := get(t, url+"/v1/models/claude-haiku-4-5", "anthropic-version", "2023-06-01")
	if status != 200 || !has(string(one), `"id":"claude-haiku-4-5"`, `"type":"model"`) {
		t.Errorf("a mapped model: %d %s", status, one)
	}
	if status, one = get(t, url+"/v1/models/gpt-4o", "anthropic-version", "2023-06-01"); status != 404 || !has(string(one), "not_found_error") {
		t.Errorf("a model not served: %d %s", status, one)
	}

	status, h, out := post(t, url+"/v1/messages/count_tokens", messagesBody(false, map[string]any{"max_tokens": nil}), "anthropic-version", "2023-06-01")
	var ct anthropic.CountTokens
	if err := json.Unmarshal(out, &ct); err != nil || status != 200 || ct.InputTokens < 100 || !strings.HasPrefix(h.Get("Ptk-Token-Count"), "estimate") {
		t.Errorf("count_tokens: %d %s %q", status, out, h.Get("Ptk-Token-Count"))
	}
}

// TestClaudeCodeRequest: the request Claude Code 2.1.328 sent, as it sent
// it, is served: its twelve tools reach the model but the deferred one,
// its system blocks and its system message are the instructions.
func TestClaudeCodeRequest(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../llm/anthropic/wire/testdata/claude-code-2.1.328.json")
	if err != nil {
		t.Fatal(err)
	}
	m := replies(said{text: "Hello from the local model."})
	url := agentGateway(t, m, agent.ModePTK)
	status, _, out := post(t, url+"/v1/messages?beta=true", data, "anthropic-version", "2023-06-01", "x-api-key", "sk-test")
	msg, errData, err := messagesStream(out)
	if status != 200 || err != nil || errData != nil {
		t.Fatalf("status %d, %v %s:\n%s", status, err, errData, out)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "Hello from the local model." {
		t.Errorf("content %+v", msg.Content)
	}
	sys := systemPrompt(m.last())
	for _, tool := range []string{"Agent", "Bash", "Edit", "Read", "Write", "ToolSearch"} {
		if !strings.Contains(sys, "\""+tool+"\"") && !strings.Contains(sys, tool+"(") && !strings.Contains(sys, "## "+tool) && !strings.Contains(sys, tool) {
			t.Errorf("the model is not shown the tool %s", tool)
		}
	}
	if strings.Contains(sys, "DeferredToolPlaceholder") {
		t.Error("the model is shown a deferred tool no search has found")
	}
	if !has(sys, "You are a Claude agent", "# Environment") {
		t.Error("the system prompt lacks Claude Code's system blocks or its system message")
	}
}
