package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic"
	"github.com/ptkit/ptk/llm/completion"
	"github.com/ptkit/ptk/llm/gemini"
	"github.com/ptkit/ptk/llm/openai"
)

// TestProvidersAgree runs one conversation through every provider client,
// in native mode and in ptk mode, answered whole and streamed: the user asks
// for the weather in two cities, the model calls get_weather twice in one
// reply, then answers. Each provider is an httptest server that speaks its
// wire format, plays the model's side of the conversation and checks that
// the results of both calls came back in the provider's form. Every
// combination must run the same tools with the same arguments, in the same
// order, and end with the same answer and the same usage.
func TestProvidersAgree(t *testing.T) {
	for _, p := range providers {
		for _, mode := range p.modes {
			for _, stream := range []bool{false, true} {
				name := p.name + "/" + string(mode) + "/whole"
				if stream {
					name = p.name + "/" + string(mode) + "/streamed"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					m := &fakeModel{native: mode == agent.ModeNative, stream: stream, ids: p.ids}
					url := serve(t, p, m)
					var (
						mu  sync.Mutex
						ran []string
					)
					res, err := agent.Run(t.Context(), agent.Prompt(question), agent.Options{
						Model:       p.model(url),
						ModelName:   p.modelName,
						Mode:        mode,
						StreamModel: stream,
						Tools:       []ptk.Tool{weatherTool(&mu, &ran)},
						MaxParallel: 1, // the two calls run one after the other, in call order
						Timeout:     10 * time.Second,
					})
					if err != nil {
						t.Fatalf("Run: %v", err)
					}
					if !res.Success || res.Content != answer {
						t.Errorf("success %v, content %q; want true, %q", res.Success, res.Content, answer)
					}
					if res.Iterations != 2 || m.requests() != 2 {
						t.Errorf("%d iterations, %d requests; want 2, 2", res.Iterations, m.requests())
					}
					if res.Mode != mode {
						t.Errorf("mode %s, want %s", res.Mode, mode)
					}
					mu.Lock()
					if !slices.Equal(ran, []string{"Paris", "Oslo"}) {
						t.Errorf("the tool ran for %q, want Paris then Oslo", ran)
					}
					mu.Unlock()
					var calls []string
					for _, c := range res.ToolCalls {
						calls = append(calls, fmt.Sprintf("%s %s -> %q (error %v)", c.Call.Tool, canonical(string(c.Call.Args)), c.Result.Content, c.Result.IsError))
					}
					want := []string{
						`get_weather {"city":"Paris"} -> "sunny" (error false)`,
						`get_weather {"city":"Oslo"} -> "rainy" (error false)`,
					}
					if !slices.Equal(calls, want) {
						t.Errorf("tool calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
					}
					if mode == agent.ModeNative {
						for i, c := range res.ToolCalls {
							if i < len(p.ids) && c.Call.ID != p.ids[i] {
								t.Errorf("call %d has id %q, the provider gave it %q", i, c.Call.ID, p.ids[i])
							}
						}
					}
					if sum := usages[0].Add(usages[1]); res.Usage != sum || res.Usage.TotalTokens() == 0 {
						t.Errorf("usage %+v, want %+v", res.Usage, sum)
					}
				})
			}
		}
	}
}

// The conversation --------------------------------------------------------

const (
	question = "What is the weather in Paris and in Oslo?"
	preamble = "Let me check both cities."
	answer   = "Paris is sunny and Oslo is rainy."
	apiKey   = "sk-test-1234"
)

// ptkCalls is the first reply of a model taught the text protocol.
const ptkCalls = preamble + "\n" +
	`<PTK_CALL>{"tool": "get_weather", "args": {"city": "Paris"}}</PTK_CALL>` + "\n" +
	`<PTK_CALL>{"tool": "get_weather", "args": {"city": "Oslo"}}</PTK_CALL>`

// ptkResults matches the results of both calls in the text protocol.
var ptkResults = regexp.MustCompile(`<PTK_RESULT id="([^"]+)" tool="get_weather">\s*sunny\s*</PTK_RESULT>\s*` +
	`<PTK_RESULT id="([^"]+)" tool="get_weather">\s*rainy\s*</PTK_RESULT>`)

// usages are the token counts of the model's two answers, the second with
// part of its prompt read from the cache.
var usages = [2]ptk.Usage{
	{PromptTokens: 412, CompletionTokens: 38},
	{PromptTokens: 531, CompletionTokens: 12, CacheReadTokens: 384},
}

// weatherTool answers get_weather and records the cities it ran for.
func weatherTool(mu *sync.Mutex, ran *[]string) ptk.Tool {
	forecast := map[string]string{"Paris": "sunny", "Oslo": "rainy"}
	return ptk.NewTool(ptk.ToolInfo{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		ReadOnly:    true,
	}, func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
		var a struct {
			City string `json:"city"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return ptk.Result{}, err
		}
		mu.Lock()
		*ran = append(*ran, a.City)
		mu.Unlock()
		if f, ok := forecast[a.City]; ok {
			return ptk.Result{Content: f}, nil
		}
		return ptk.Result{Content: "unknown city " + a.City, IsError: true}, nil
	})
}

// request is what a provider's server read of one request, in a form
// common to the providers.
type request struct {
	stream bool
	// streamUsage reports that a stream should end with the usage (OpenAI's
	// stream_options.include_usage; the others always send it).
	streamUsage bool
	tools       []string // the native tool definitions, by name
	system      string
	user        string   // the text of the last user turn
	assistant   string   // the text of the last assistant turn
	calls       []call   // the native calls of the last assistant turn
	results     []result // the native tool results
}

type call struct{ id, name, args string }

type result struct{ id, content string }

// reply is the model's answer, which a provider's server writes in its
// wire format.
type reply struct {
	text  string
	calls []call // native calls
	usage ptk.Usage
}

// fakeModel is the model's side of the conversation, the same behind every
// provider. It answers by turn: native calls or PTK_CALL blocks, then the
// answer, and checks on the second turn that both results came back.
type fakeModel struct {
	native, stream bool
	ids            [2]string // the ids of the native calls

	mu sync.Mutex
	n  int // the requests received
}

func (m *fakeModel) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

func (m *fakeModel) answer(req request) (reply, error) {
	m.mu.Lock()
	m.n++
	turn := m.n
	m.mu.Unlock()
	if req.stream != m.stream {
		return reply{}, fmt.Errorf("stream %v, want %v", req.stream, m.stream)
	}
	if m.native && !slices.Equal(req.tools, []string{"get_weather"}) {
		return reply{}, fmt.Errorf("native mode: tools %q, want get_weather", req.tools)
	}
	if !m.native {
		if len(req.tools) > 0 {
			return reply{}, fmt.Errorf("ptk mode: native tools %q sent", req.tools)
		}
		if !strings.Contains(req.system, "<PTK_CALL>") || !strings.Contains(req.system, "## get_weather") {
			return reply{}, fmt.Errorf("ptk mode: the system prompt does not teach the protocol and the tool:\n%s", req.system)
		}
	}
	switch turn {
	case 1:
		if req.user != question || req.assistant != "" || len(req.calls)+len(req.results) > 0 {
			return reply{}, fmt.Errorf("first request: user %q, assistant %q, calls %v, results %v; want only the question", req.user, req.assistant, req.calls, req.results)
		}
		if !m.native {
			return reply{text: ptkCalls, usage: usages[0]}, nil
		}
		return reply{text: preamble, calls: m.calls(), usage: usages[0]}, nil
	case 2:
		if err := m.checkResults(req); err != nil {
			return reply{}, err
		}
		return reply{text: answer, usage: usages[1]}, nil
	}
	return reply{}, fmt.Errorf("request %d: the conversation has two model calls", turn)
}

func (m *fakeModel) calls() []call {
	return []call{
		{m.ids[0], "get_weather", `{"city": "Paris"}`},
		{m.ids[1], "get_weather", `{"city": "Oslo"}`},
	}
}

// checkResults checks the second request: the first answer as the model
// wrote it, then the results of both calls, in the mode's form.
func (m *fakeModel) checkResults(req request) error {
	if !m.native {
		if strings.TrimSpace(req.assistant) != ptkCalls {
			return fmt.Errorf("ptk mode: the first answer came back as %q, want %q", req.assistant, ptkCalls)
		}
		if len(req.calls)+len(req.results) > 0 {
			return fmt.Errorf("ptk mode: native calls %v and results %v sent", req.calls, req.results)
		}
		ids := ptkResults.FindStringSubmatch(req.user)
		if ids == nil || ids[1] == ids[2] {
			return fmt.Errorf("ptk mode: the last user turn does not hold the results of both calls:\n%s", req.user)
		}
		return nil
	}
	if req.assistant != preamble {
		return fmt.Errorf("native mode: the first answer's text came back as %q, want %q", req.assistant, preamble)
	}
	want := m.calls()
	ok := len(req.calls) == len(want)
	for i := 0; ok && i < len(want); i++ {
		c := req.calls[i]
		ok = c.id == want[i].id && c.name == want[i].name && canonical(c.args) == canonical(want[i].args)
	}
	if !ok {
		return fmt.Errorf("native mode: the first answer's calls came back as %v, want %v", req.calls, want)
	}
	if wantResults := []result{{m.ids[0], "sunny"}, {m.ids[1], "rainy"}}; !slices.Equal(req.results, wantResults) {
		return fmt.Errorf("native mode: results %v, want %v", req.results, wantResults)
	}
	return nil
}

// The providers -----------------------------------------------------------

// provider is a provider's client and a server that speaks its wire format.
type provider struct {
	name      string
	modelName string
	model     func(url string) llm.Model
	modes     []agent.Mode
	// route is the method and path the client posts to.
	route string
	// ids are the ids the provider gives the two native calls.
	ids   [2]string
	read  func(*http.Request) (request, error)
	write func(http.ResponseWriter, request, reply)
}

var bothModes = []agent.Mode{agent.ModeNative, agent.ModePTK}

var providers = []provider{{
	name:      "openai",
	modelName: "gpt-4o",
	model: func(url string) llm.Model {
		return openai.New(url+"/v1", openai.WithAPIKey(apiKey), openai.WithMaxRetries(0))
	},
	modes: bothModes,
	route: "POST /v1/chat/completions",
	ids:   [2]string{"call_3PqV8tYk2mHn0aZ1xQwErT5u", "call_Xk9bN2cV7dLq4sWe1rTy6uIo"},
	read:  readOpenAI,
	write: writeOpenAI,
}, {
	name:      "anthropic",
	modelName: "claude-sonnet-4-5",
	model: func(url string) llm.Model {
		return anthropic.New(url, anthropic.WithAPIKey(apiKey), anthropic.WithMaxRetries(0))
	},
	modes: bothModes,
	route: "POST /v1/messages",
	ids:   [2]string{"toolu_01A09q90qw90lq917835lq9", "toolu_01NRLabsLyVHZPKxbKvkfSMn"},
	read:  readAnthropic,
	write: writeAnthropic,
}, {
	name:      "gemini",
	modelName: geminiModel,
	model: func(url string) llm.Model {
		return gemini.New(url, gemini.WithAPIKey(apiKey), gemini.WithMaxRetries(0))
	},
	modes: bothModes,
	route: "POST /v1beta/models/{call}",
	ids:   [2]string{"0k3xq7ga", "w9f2bq1c"},
	read:  readGemini,
	write: writeGemini,
}, {
	name: "llamacpp",
	model: func(url string) llm.Model {
		return completion.LlamaCpp(url, completion.WithAPIKey(apiKey), completion.WithMaxRetries(0))
	},
	modes: []agent.Mode{agent.ModePTK}, // text in, text out
	route: "POST /completion",
	read:  readLlamaCpp,
	write: writeLlamaCpp,
}}

// serve starts p's server, with m answering, and returns its URL. A request
// the server cannot read, or that m finds wrong, fails the test and gets a
// 400.
func serve(t *testing.T, p provider, m *fakeModel) string {
	mux := http.NewServeMux()
	mux.HandleFunc(p.route, func(w http.ResponseWriter, r *http.Request) {
		req, err := p.read(r)
		var rep reply
		if err == nil {
			rep, err = m.answer(req)
		}
		if err != nil {
			t.Errorf("%s server: %v", p.name, err)
			writeJSON(w, http.StatusBadRequest, obj{"error": obj{"type": "invalid_request_error", "message": err.Error()}})
			return
		}
		p.write(w, req, rep)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("%s server: unexpected %s %s", p.name, r.Method, r.URL)
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// OpenAI Chat Completions ---------------------------------------------------

func readOpenAI(r *http.Request) (request, error) {
	if got := r.Header.Get("Authorization"); got != "Bearer "+apiKey {
		return request{}, fmt.Errorf("Authorization %q", got)
	}
	var body struct {
		Messages []struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Stream        bool `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return request{}, err
	}
	req := request{stream: body.Stream, streamUsage: body.StreamOptions != nil && body.StreamOptions.IncludeUsage}
	for _, t := range body.Tools {
		if t.Type != "function" {
			return request{}, fmt.Errorf("tool of type %q", t.Type)
		}
		req.tools = append(req.tools, t.Function.Name)
	}
	for _, m := range body.Messages {
		var text string
		if m.Content != nil {
			text = *m.Content
		}
		switch m.Role {
		case "system":
			req.system = text
		case "user":
			req.user = text
		case "assistant":
			req.assistant, req.calls = text, nil
			for _, c := range m.ToolCalls {
				if c.Type != "function" {
					return request{}, fmt.Errorf("tool call of type %q", c.Type)
				}
				req.calls = append(req.calls, call{c.ID, c.Function.Name, c.Function.Arguments})
			}
		case "tool":
			req.results = append(req.results, result{m.ToolCallID, text})
		default:
			return request{}, fmt.Errorf("message of role %q", m.Role)
		}
	}
	return req, nil
}

func writeOpenAI(w http.ResponseWriter, req request, rep reply) {
	const id, model = "chatcmpl-B9NzQe3f5RrT0yGmK2wPxVb7hLcUa", "gpt-4o-2024-08-06"
	finish := "stop"
	if len(rep.calls) > 0 {
		finish = "tool_calls"
	}
	u := rep.usage
	usage := obj{
		"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens(),
		"prompt_tokens_details":     obj{"cached_tokens": u.CacheReadTokens, "audio_tokens": 0},
		"completion_tokens_details": obj{"reasoning_tokens": 0, "audio_tokens": 0},
	}
	if !req.stream {
		msg := obj{"role": "assistant", "content": rep.text, "refusal": nil}
		if len(rep.calls) > 0 {
			var calls []obj
			for _, c := range rep.calls {
				calls = append(calls, obj{"id": c.id, "type": "function", "function": obj{"name": c.name, "arguments": c.args}})
			}
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, obj{
			"id": id, "object": "chat.completion", "created": 1741576692, "model": model,
			"choices":            []obj{{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
			"usage":              usage,
			"system_fingerprint": "fp_f9f4fb6dbf",
		})
		return
	}
	events := startSSE(w)
	chunk := func(choices []obj, usage any) {
		events.send("", obj{
			"id": id, "object": "chat.completion.chunk", "created": 1741576692, "model": model,
			"system_fingerprint": "fp_f9f4fb6dbf", "choices": choices, "usage": usage,
		})
	}
	delta := func(d obj, finish any) {
		chunk([]obj{{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}}, nil)
	}
	delta(obj{"role": "assistant", "content": "", "refusal": nil}, nil)
	for _, s := range pieces(rep.text, 7) {
		delta(obj{"content": s}, nil)
	}
	for i, c := range rep.calls {
		delta(obj{"tool_calls": []obj{{"index": i, "id": c.id, "type": "function", "function": obj{"name": c.name, "arguments": ""}}}}, nil)
		for _, s := range pieces(c.args, 5) {
			delta(obj{"tool_calls": []obj{{"index": i, "function": obj{"arguments": s}}}}, nil)
		}
	}
	delta(obj{}, finish)
	if req.streamUsage {
		chunk([]obj{}, usage)
	}
	events.write("", "[DONE]")
}

// Anthropic Messages --------------------------------------------------------

// anthropicBlock is a content block of a request.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // a tool_result's: a string or blocks
}

// anthropicBlocks reads content that the API takes as a string or as a
// list of blocks.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, error) {
	switch {
	case len(raw) == 0:
		return nil, nil
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return []anthropicBlock{{Type: "text", Text: s}}, err
	}
	var bs []anthropicBlock
	err := json.Unmarshal(raw, &bs)
	return bs, err
}

func anthropicText(bs []anthropicBlock) string {
	var b strings.Builder
	for _, x := range bs {
		if x.Type == "text" {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}

// readAnthropic reads a request, rejecting what the API rejects: no
// max_tokens, roles that do not alternate from "user", a tool_use without a
// tool_result at the start of the next message.
func readAnthropic(r *http.Request) (request, error) {
	if got := r.Header.Get("X-Api-Key"); got != apiKey {
		return request{}, fmt.Errorf("x-api-key %q", got)
	}
	if r.Header.Get("Anthropic-Version") == "" {
		return request{}, errors.New("no anthropic-version header")
	}
	var body struct {
		MaxTokens int             `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return request{}, err
	}
	if body.MaxTokens <= 0 {
		return request{}, errors.New("max_tokens: Field required")
	}
	req := request{stream: body.Stream}
	for _, t := range body.Tools {
		if len(t.InputSchema) == 0 {
			return request{}, fmt.Errorf("tool %s: input_schema: Field required", t.Name)
		}
		req.tools = append(req.tools, t.Name)
	}
	system, err := anthropicBlocks(body.System)
	if err != nil {
		return request{}, fmt.Errorf("system: %w", err)
	}
	req.system = anthropicText(system)
	var pending []string // the tool_use ids of the last assistant message
	for i, m := range body.Messages {
		if want := [2]string{"user", "assistant"}[i%2]; m.Role != want {
			return request{}, fmt.Errorf("messages.%d: role %q, want %q: roles must alternate, from user", i, m.Role, want)
		}
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return request{}, fmt.Errorf("messages.%d: %w", i, err)
		}
		if m.Role == "assistant" {
			req.assistant, req.calls, pending = anthropicText(blocks), nil, nil
			for _, b := range blocks {
				if b.Type == "tool_use" {
					req.calls = append(req.calls, call{b.ID, b.Name, string(b.Input)})
					pending = append(pending, b.ID)
				}
			}
			continue
		}
		answered := 0
		for j, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			answered++
			if j >= len(pending) || pending[j] != b.ToolUseID {
				return request{}, fmt.Errorf("messages.%d.content.%d: unexpected tool_use_id %q: tool_result blocks must come first, one for each tool_use of the previous message", i, j, b.ToolUseID)
			}
			content, err := anthropicBlocks(b.Content)
			if err != nil {
				return request{}, fmt.Errorf("messages.%d.content.%d: %w", i, j, err)
			}
			req.results = append(req.results, result{b.ToolUseID, anthropicText(content)})
		}
		if answered < len(pending) {
			return request{}, fmt.Errorf("messages.%d: tool_use ids %q were found without tool_result blocks immediately after", i, pending)
		}
		pending = nil
		if text := anthropicText(blocks); text != "" {
			req.user = text
		}
	}
	return req, nil
}

func writeAnthropic(w http.ResponseWriter, req request, rep reply) {
	const id, model = "msg_01Aq9w938a90dw8q", "claude-sonnet-4-5-20250929"
	stop := "end_turn"
	if len(rep.calls) > 0 {
		stop = "tool_use"
	}
	u := rep.usage
	usage := func(output int) obj {
		return obj{
			"input_tokens": u.PromptTokens - u.CacheReadTokens, "cache_creation_input_tokens": 0,
			"cache_read_input_tokens": u.CacheReadTokens, "output_tokens": output,
		}
	}
	if !req.stream {
		content := []obj{}
		if rep.text != "" {
			content = append(content, obj{"type": "text", "text": rep.text})
		}
		for _, c := range rep.calls {
			content = append(content, obj{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.args)})
		}
		writeJSON(w, http.StatusOK, obj{
			"id": id, "type": "message", "role": "assistant", "model": model, "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": usage(u.CompletionTokens),
		})
		return
	}
	events := startSSE(w)
	events.send("message_start", obj{"type": "message_start", "message": obj{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []obj{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage(1),
	}})
	events.send("ping", obj{"type": "ping"})
	index := 0
	block := func(start obj, deltas []obj) {
		events.send("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": start})
		for _, d := range deltas {
			events.send("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": d})
		}
		events.send("content_block_stop", obj{"type": "content_block_stop", "index": index})
		index++
	}
	if rep.text != "" {
		var deltas []obj
		for _, s := range pieces(rep.text, 7) {
			deltas = append(deltas, obj{"type": "text_delta", "text": s})
		}
		block(obj{"type": "text", "text": ""}, deltas)
	}
	for _, c := range rep.calls {
		deltas := []obj{{"type": "input_json_delta", "partial_json": ""}}
		for _, s := range pieces(c.args, 5) {
			deltas = append(deltas, obj{"type": "input_json_delta", "partial_json": s})
		}
		block(obj{"type": "tool_use", "id": c.id, "name": c.name, "input": obj{}}, deltas)
	}
	events.send("message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": obj{"output_tokens": u.CompletionTokens}})
	events.send("message_stop", obj{"type": "message_stop"})
}

// Gemini ----------------------------------------------------------------------

// geminiModel is a Gemini 3 model: it gives its calls ids, and wants the
// first call of each model turn replayed with a thought signature.
const geminiModel = "gemini-3-flash-preview"

type geminiContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text         string `json:"text"`
		FunctionCall *struct {
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"functionCall"`
		FunctionResponse *struct {
			ID       string         `json:"id"`
			Name     string         `json:"name"`
			Response map[string]any `json:"response"`
		} `json:"functionResponse"`
		ThoughtSignature string `json:"thoughtSignature"`
	} `json:"parts"`
}

// readGemini reads a request, rejecting what the API rejects: a model turn
// whose first call has no thought signature (Gemini 3), function responses
// that do not answer the calls of the turn before.
func readGemini(r *http.Request) (request, error) {
	if got := r.Header.Get("X-Goog-Api-Key"); got != apiKey {
		return request{}, fmt.Errorf("x-goog-api-key %q", got)
	}
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	if model != geminiModel {
		return request{}, fmt.Errorf("model %q, want %q", model, geminiModel)
	}
	var req request
	switch method {
	case "generateContent":
	case "streamGenerateContent":
		if alt := r.URL.Query().Get("alt"); alt != "sse" {
			return request{}, fmt.Errorf("streamGenerateContent with alt=%q: only alt=sse answers with events", alt)
		}
		req.stream = true
	default:
		return request{}, fmt.Errorf("method %q", method)
	}
	var body struct {
		Contents          []geminiContent `json:"contents"`
		SystemInstruction *geminiContent  `json:"systemInstruction"`
		Tools             []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return request{}, err
	}
	for _, t := range body.Tools {
		for _, d := range t.FunctionDeclarations {
			req.tools = append(req.tools, d.Name)
		}
	}
	if s := body.SystemInstruction; s != nil {
		for _, p := range s.Parts {
			req.system += p.Text
		}
	}
	calls := 0 // the function calls of the last model turn
	for i, c := range body.Contents {
		var text strings.Builder
		responses := 0
		if c.Role == "model" {
			req.calls = nil
		}
		for j, p := range c.Parts {
			text.WriteString(p.Text)
			switch {
			case p.FunctionCall != nil:
				if c.Role != "model" {
					return request{}, fmt.Errorf("contents[%d]: a functionCall in a %q turn", i, c.Role)
				}
				if calls == 0 && p.ThoughtSignature == "" {
					return request{}, fmt.Errorf("contents[%d].parts[%d]: function call is missing a thought_signature", i, j)
				}
				f := p.FunctionCall
				req.calls = append(req.calls, call{f.ID, f.Name, string(f.Args)})
				calls++
			case p.FunctionResponse != nil:
				if c.Role != "user" {
					return request{}, fmt.Errorf("contents[%d]: a functionResponse in a %q turn", i, c.Role)
				}
				f := p.FunctionResponse
				content, ok := f.Response["content"].(string)
				if !ok {
					b, _ := json.Marshal(f.Response)
					content = string(b)
				}
				req.results = append(req.results, result{f.ID, content})
				responses++
			}
		}
		switch c.Role {
		case "model":
			req.assistant = text.String()
		case "user":
			if calls > 0 && responses != calls {
				return request{}, fmt.Errorf("contents[%d]: the number of function response parts (%d) is not the number of function call parts of the function call turn (%d)", i, responses, calls)
			}
			calls = 0
			if text.Len() > 0 {
				req.user = text.String()
			}
		default:
			return request{}, fmt.Errorf("contents[%d]: role %q", i, c.Role)
		}
	}
	return req, nil
}

func writeGemini(w http.ResponseWriter, req request, rep reply) {
	const responseID = "2KFbaIj8FJ6Ez7IP5cKL8QE"
	u := rep.usage
	usage := obj{"promptTokenCount": u.PromptTokens, "candidatesTokenCount": u.CompletionTokens, "totalTokenCount": u.TotalTokens()}
	if u.CacheReadTokens > 0 {
		usage["cachedContentTokenCount"] = u.CacheReadTokens
	}
	var calls []obj
	for i, c := range rep.calls {
		p := obj{"functionCall": obj{"id": c.id, "name": c.name, "args": json.RawMessage(c.args)}}
		if i == 0 {
			p["thoughtSignature"] = "EjQKMgG+Pvb7Yc0BvI1TnDu8PUgjF0UiJlCYw5lQ8KdA3PpztTw3qZ0ZqRdhgrg5ikwPy0k="
		}
		calls = append(calls, p)
	}
	response := func(parts []obj, finish string, usage obj) obj {
		candidate := obj{"content": obj{"parts": parts, "role": "model"}, "index": 0}
		if finish != "" {
			candidate["finishReason"] = finish
		}
		return obj{"candidates": []obj{candidate}, "usageMetadata": usage, "modelVersion": geminiModel, "responseId": responseID}
	}
	if !req.stream {
		parts := []obj{{"text": rep.text}}
		writeJSON(w, http.StatusOK, response(append(parts, calls...), "STOP", usage))
		return
	}
	// A stream is a whole response per event: the text in pieces, the calls
	// whole, then an empty part that ends the answer with the usage.
	events := startSSE(w)
	prompt := obj{"promptTokenCount": u.PromptTokens, "totalTokenCount": u.PromptTokens}
	for _, s := range pieces(rep.text, 7) {
		events.send("", response([]obj{{"text": s}}, "", prompt))
	}
	if len(calls) > 0 {
		events.send("", response(calls, "", prompt))
	}
	events.send("", response([]obj{{"text": ""}}, "STOP", usage))
}

// llama.cpp /completion -------------------------------------------------------

// readLlamaCpp reads a request: a prompt in the PTK transcript form, whose
// turns it reads back.
func readLlamaCpp(r *http.Request) (request, error) {
	if got := r.Header.Get("Authorization"); got != "Bearer "+apiKey {
		return request{}, fmt.Errorf("Authorization %q", got)
	}
	var body struct {
		Prompt string   `json:"prompt"`
		Stop   []string `json:"stop"`
		Stream bool     `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return request{}, err
	}
	if !slices.Contains(body.Stop, "\nUSER:") {
		return request{}, fmt.Errorf("stop %q: the model would write the user's turn", body.Stop)
	}
	if !strings.HasSuffix(body.Prompt, "\n\nASSISTANT:\n") {
		return request{}, fmt.Errorf("the prompt does not end with the assistant's cue:\n%s", body.Prompt)
	}
	req := request{stream: body.Stream}
	header, lines := "", []string(nil)
	turn := func() {
		text := strings.TrimSpace(strings.Join(lines, "\n"))
		switch header {
		case "SYSTEM":
			req.system = text
		case "USER", "TOOL":
			req.user = text
		case "ASSISTANT":
			if text != "" {
				req.assistant = text
			}
		}
	}
	for line := range strings.SplitSeq(body.Prompt, "\n") {
		if h, ok := strings.CutSuffix(line, ":"); ok && slices.Contains([]string{"SYSTEM", "USER", "ASSISTANT", "TOOL"}, h) {
			turn()
			header, lines = h, nil
			continue
		}
		lines = append(lines, line)
	}
	turn()
	return req, nil
}

func writeLlamaCpp(w http.ResponseWriter, req request, rep reply) {
	u := rep.usage
	final := obj{
		"index": 0, "content": rep.text, "tokens": []int{}, "id_slot": 0, "stop": true,
		"model": "qwen2.5-7b-instruct-q4_k_m.gguf", "tokens_predicted": u.CompletionTokens, "tokens_evaluated": u.PromptTokens,
		"stop_type": "eos", "stopping_word": "", "truncated": false, "tokens_cached": u.PromptTokens + u.CompletionTokens,
		"timings": obj{"cache_n": u.CacheReadTokens, "prompt_n": u.PromptTokens - u.CacheReadTokens, "predicted_n": u.CompletionTokens},
	}
	if !req.stream {
		writeJSON(w, http.StatusOK, final)
		return
	}
	events := startSSE(w)
	for i, s := range pieces(rep.text, 7) {
		events.send("", obj{"index": 0, "content": s, "tokens": []int{}, "stop": false, "id_slot": -1,
			"tokens_predicted": i + 1, "tokens_evaluated": u.PromptTokens})
	}
	final["content"] = ""
	events.send("", final)
}

// Wire helpers ----------------------------------------------------------------

type obj = map[string]any

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// sseWriter writes server-sent events, flushing each one.
type sseWriter struct{ w http.ResponseWriter }

func startSSE(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sseWriter{w}
}

// send writes an event whose data is v as JSON, with its type when not
// empty.
func (s sseWriter) send(event string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	s.write(event, string(b))
}

func (s sseWriter) write(event, data string) {
	if event != "" {
		fmt.Fprintf(s.w, "event: %s\n", event)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	http.NewResponseController(s.w).Flush()
}

// pieces cuts s into pieces of at most n bytes, as a stream sends it.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// canonical is JSON text with its keys sorted and no spaces.
func canonical(args string) string {
	var v any
	if json.Unmarshal([]byte(args), &v) != nil {
		return "invalid JSON: " + args
	}
	b, _ := json.Marshal(v)
	return string(b)
}
