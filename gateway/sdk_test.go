package gateway_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	ptkopenai "github.com/ptkit/ptk/llm/openai"
)

// These tests drive the gateway with the official OpenAI Go SDK, as a
// client would, in front of a scripted upstream without native tools (see
// upstream_test.go).

// modelName is the model the tests ask for, named as Ollama names it.
const modelName = "gemma:2b"

// gw is a gateway served in-process in front of an upstream, and the SDK's
// client of it.
type gw struct {
	url    string
	client openai.Client
}

// upstreamModel is the upstream as the gateway reaches it: one
// *openai.Client answers the translated requests and forwards the others.
func upstreamModel(up *upstream, mode agent.Mode) gateway.Upstream {
	c := ptkopenai.New(up.baseURL(), ptkopenai.WithMaxRetries(0))
	return gateway.Upstream{Model: c, Forward: c, Mode: mode}
}

// newGateway serves a gateway that sends every model to up in mode, with
// the settings configure makes. Its client sends the first of
// Config.APIKeys, if any.
func newGateway(t *testing.T, up *upstream, mode agent.Mode, configure ...func(*gateway.Config)) *gw {
	t.Helper()
	u := upstreamModel(up, mode)
	cfg := gateway.Config{
		DefaultModel: modelName,
		Resolve:      func(string) (gateway.Upstream, error) { return u, nil },
		Logger:       slog.New(slog.DiscardHandler),
	}
	for _, f := range configure {
		f(&cfg)
	}
	s, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	key := "sk-none"
	if len(cfg.APIKeys) > 0 {
		key = cfg.APIKeys[0]
	}
	return &gw{url: srv.URL, client: sdkClient(srv.URL, key)}
}

// sdkClient is the SDK's client of the gateway at url, with no retries.
func sdkClient(url, key string, opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{option.WithBaseURL(url + "/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0)}, opts...)...)
}

type obj = map[string]any

func function(name, description string, parameters obj) openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: name, Description: openai.String(description), Parameters: parameters})
}

var (
	weatherTool = function("get_weather", "Current weather in a city.", obj{
		"type": "object",
		"properties": obj{
			"city": obj{"type": "string"},
			"days": obj{"type": "integer", "minimum": 1},
		},
		"required": []string{"city"},
	})
	timeTool = function("get_time", "Current time in a time zone.", obj{
		"type":       "object",
		"properties": obj{"timezone": obj{"type": "string"}},
		"required":   []string{"timezone"},
	})
	bothTools = []openai.ChatCompletionToolUnionParam{weatherTool, timeTool}
)

// chat is a request with one user message and the tools.
func chat(user string, tools ...openai.ChatCompletionToolUnionParam) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    modelName,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(user)},
		Tools:    tools,
	}
}

func toolChoice(s string) openai.ChatCompletionToolChoiceOptionUnionParam {
	return openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(s)}
}

func allowedChoice(mode string, names ...string) openai.ChatCompletionToolChoiceOptionUnionParam {
	var tools []map[string]any
	for _, n := range names {
		tools = append(tools, obj{"type": "function", "function": obj{"name": n}})
	}
	return openai.ToolChoiceOptionAllowedTools(openai.ChatCompletionAllowedToolsParam{Mode: openai.ChatCompletionAllowedToolsMode(mode), Tools: tools})
}

func namedChoice(name string) openai.ChatCompletionToolChoiceOptionUnionParam {
	return openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: name})
}

// way is how a test asks: whole, or streamed with the upstream's deltas
// of chunk bytes.
type way struct {
	name   string
	stream bool
	chunk  int
}

var (
	whole        = way{"whole", false, 0}
	streamed     = way{"stream", true, 1}
	bothWays     = []way{whole, streamed}
	modes        = []agent.Mode{agent.ModeAuto, agent.ModePTK}
	protocolTags = []string{"<PTK", "</PTK", "<tool_call", "</tool_call", "[TOOL_CALLS]", "<think", "</think", "<|", "<｜"}
)

// answer is what the SDK made of an answer: the completion, accumulated
// from the chunks for a stream.
type answer struct {
	openai.ChatCompletion
	chunks []openai.ChatCompletionChunk
}

// ask sends p, whole or streamed, and returns the answer as the SDK reads
// it, and the SDK's error.
func ask(t *testing.T, c openai.Client, p openai.ChatCompletionNewParams, stream bool) (answer, error) {
	t.Helper()
	if !stream {
		cc, err := c.Chat.Completions.New(t.Context(), p)
		if err != nil {
			return answer{}, err
		}
		return answer{ChatCompletion: *cc}, nil
	}
	s := c.Chat.Completions.NewStreaming(t.Context(), p)
	defer s.Close()
	var a answer
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		ch := s.Current()
		if !acc.AddChunk(ch) {
			t.Errorf("the accumulator rejected chunk %d: %s", len(a.chunks), ch.RawJSON())
		}
		a.chunks = append(a.chunks, ch)
	}
	a.ChatCompletion = acc.ChatCompletion
	return a, s.Err()
}

// mustAsk is ask for an answer that must come.
func mustAsk(t *testing.T, c openai.Client, p openai.ChatCompletionNewParams, stream bool) answer {
	t.Helper()
	a, err := ask(t, c, p, stream)
	if err != nil {
		t.Fatalf("the SDK failed: %v (%s)", err, errorText(err))
	}
	checkAnswer(t, a, p)
	return a
}

// errorText is what an error from the SDK says, its body included.
func errorText(err error) string {
	var ae *openai.Error
	if errors.As(err, &ae) {
		return ae.RawJSON()
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return string(se.Event.Data)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// call is a tool call as the tests compare them: its name and its
// arguments as canonical JSON.
type call struct{ Name, Args string }

func (c call) String() string { return c.Name + c.Args }

// canonical returns the JSON text s with sorted keys, no spaces and no
// escapes it does not need.
func canonical(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Errorf("arguments %q are not JSON: %v", s, err)
		return s
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

func (a answer) calls(t *testing.T) []call {
	t.Helper()
	var out []call
	for _, tc := range a.Choices[0].Message.ToolCalls {
		out = append(out, call{tc.Function.Name, canonical(t, tc.Function.Arguments)})
	}
	return out
}

func (a answer) content() string { return a.Choices[0].Message.Content }
func (a answer) finish() string  { return a.Choices[0].FinishReason }

// checkAnswer checks what every answer must be: one choice, tool calls
// with distinct ids that begin "call_", the finish reason that goes with
// them, usage; and for a stream, chunks as OpenAI sends them.
func checkAnswer(t *testing.T, a answer, p openai.ChatCompletionNewParams) {
	t.Helper()
	if len(a.Choices) != 1 {
		t.Fatalf("%d choices, want 1: %s", len(a.Choices), a.RawJSON())
	}
	if !strings.HasPrefix(a.ID, "chatcmpl-") || a.Model != p.Model {
		t.Errorf("id %q, model %q; want chatcmpl-…, %q", a.ID, a.Model, p.Model)
	}
	seen := map[string]bool{}
	for i, tc := range a.Choices[0].Message.ToolCalls {
		if !strings.HasPrefix(tc.ID, "call_") || seen[tc.ID] || tc.Type != "function" {
			t.Errorf("tool call %d: id %q, type %q; want a new call_… id, type function", i, tc.ID, tc.Type)
		}
		seen[tc.ID] = true
	}
	if calls := len(a.Choices[0].Message.ToolCalls) > 0; calls != (a.finish() == "tool_calls") {
		t.Errorf("finish_reason %q with %d tool calls", a.finish(), len(a.Choices[0].Message.ToolCalls))
	}
	u := a.Usage
	if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage %+v, want prompt and completion tokens and their total", u)
	}
	if a.chunks != nil {
		checkChunks(t, a, p.StreamOptions.IncludeUsage.Value)
	}
}

// checkChunks checks a stream's chunks: one id, the role first, text
// deltas free of protocol tags, each call as OpenAI streams one (its index,
// id, type and name with empty arguments, then its arguments), one finish
// reason, and the usage once: on a last chunk without choices when
// includeUsage, on the finishing chunk otherwise.
func checkChunks(t *testing.T, a answer, includeUsage bool) {
	t.Helper()
	chunks := a.chunks
	if len(chunks) < 2 {
		t.Fatalf("%d chunks", len(chunks))
	}
	if d := chunks[0].Choices; len(d) != 1 || d[0].Delta.Role != "assistant" {
		t.Errorf("first chunk %s, want the assistant's role", chunks[0].RawJSON())
	}
	finished := -1
	var usageAt []int
	nextCall := 0
	for i, ch := range chunks {
		if ch.ID != chunks[0].ID || ch.Object != "chat.completion.chunk" {
			t.Errorf("chunk %d: id %q object %q, want %q chat.completion.chunk", i, ch.ID, ch.Object, chunks[0].ID)
		}
		if ch.JSON.Usage.Valid() {
			usageAt = append(usageAt, i)
		}
		if len(ch.Choices) == 0 {
			if !includeUsage || i != len(chunks)-1 {
				t.Errorf("chunk %d of %d has no choices: %s", i, len(chunks), ch.RawJSON())
			}
			continue
		}
		c := ch.Choices[0]
		if finished >= 0 {
			t.Errorf("chunk %d after the finishing chunk %d: %s", i, finished, ch.RawJSON())
		}
		if c.FinishReason != "" {
			finished = i
		}
		for _, tag := range protocolTags {
			if strings.Contains(c.Delta.Content, tag) {
				t.Errorf("chunk %d: text delta %q holds %q", i, c.Delta.Content, tag)
			}
		}
		if strings.ContainsRune(c.Delta.Content, utf8.RuneError) {
			t.Errorf("chunk %d: text delta %q holds a broken rune", i, c.Delta.Content)
		}
		for _, tc := range c.Delta.ToolCalls {
			switch {
			case tc.ID != "":
				if tc.Index != int64(nextCall) || tc.Type != "function" || tc.Function.Name == "" || tc.Function.Arguments != "" || !tc.JSON.Function.Valid() {
					t.Errorf("chunk %d: call header %s, want index %d, id, type, name and empty arguments", i, tc.RawJSON(), nextCall)
				}
				nextCall++
			default:
				if tc.Index != int64(nextCall-1) || tc.Type != "" || tc.Function.Name != "" || !json.Valid([]byte(tc.Function.Arguments)) {
					t.Errorf("chunk %d: call arguments %s, want the arguments of call %d", i, tc.RawJSON(), nextCall-1)
				}
			}
		}
	}
	if finished < 0 {
		t.Errorf("no chunk has a finish_reason")
	}
	switch {
	case len(usageAt) != 1:
		t.Errorf("usage in chunks %v, want it in one", usageAt)
	case includeUsage && (usageAt[0] != len(chunks)-1 || len(chunks[usageAt[0]].Choices) != 0):
		t.Errorf("usage in chunk %d of %d, want it alone in the last chunk", usageAt[0], len(chunks))
	case !includeUsage && usageAt[0] != finished:
		t.Errorf("usage in chunk %d, want it on the finishing chunk %d", usageAt[0], finished)
	}
	if nextCall != len(a.Choices[0].Message.ToolCalls) {
		t.Errorf("%d call headers for %d calls", nextCall, len(a.Choices[0].Message.ToolCalls))
	}
}

// checkTranslated checks the requests the upstream got for n model calls
// in mode: in ModeAuto the first request of a conversation goes native,
// with the tools, and is rejected; the rest carry no tools and teach the
// protocol in their system prompt.
func checkTranslated(t *testing.T, up *upstream, mode agent.Mode, native, translated int) []upstreamRequest {
	t.Helper()
	got := up.requests()
	if mode == agent.ModePTK {
		native = 0
	}
	if len(got) != native+translated {
		t.Fatalf("the upstream got %d requests, want %d native and %d translated", len(got), native, translated)
	}
	for i, r := range got[:native] {
		if !r.hasTools() {
			t.Errorf("request %d has no tools, want the native attempt", i)
		}
	}
	out := got[native:]
	for i, r := range out {
		if r.hasTools() || len(r.ToolChoice) > 0 {
			t.Errorf("translated request %d sends tools %s, tool_choice %s", i, r.Tools, r.ToolChoice)
		}
		if len(r.Messages) < 2 || r.Messages[0].Role != "system" || !strings.Contains(r.content(0), "<PTK_CALL>") || !strings.Contains(r.content(0), "\n# Tools\n") {
			t.Errorf("translated request %d does not begin with the protocol's system prompt: %s", i, r.body)
		}
		for j, m := range r.Messages {
			if m.Role == "tool" || len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null" {
				t.Errorf("translated request %d: message %d is a native %s turn: %s", i, j, m.Role, r.body)
			}
		}
		if r.Model != modelName {
			t.Errorf("translated request %d names model %q", i, r.Model)
		}
		if r.Stream && (r.StreamOptions == nil || !r.StreamOptions.IncludeUsage) {
			t.Errorf("translated request %d streams without asking for the usage", i)
		}
	}
	return out
}

func each(t *testing.T, ways []way, f func(t *testing.T, mode agent.Mode, w way)) {
	for _, mode := range modes {
		for _, w := range ways {
			t.Run(string(mode)+"/"+w.name, func(t *testing.T) {
				t.Parallel()
				f(t, mode, w)
			})
		}
	}
}

const (
	parisCall = `<PTK_CALL>
{"tool": "get_weather", "args": {"city": "Paris"}}
</PTK_CALL>`
	clockCall = `<PTK_CALL>
{"tool": "get_time", "args": {"timezone": "Europe/Paris"}}
</PTK_CALL>`
)

func TestSDKToolCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reply   string
		calls   []call
		content string
	}{{
		name:    "one call after prose",
		reply:   "Let me look that up.\n" + parisCall,
		calls:   []call{{"get_weather", `{"city":"Paris"}`}},
		content: "Let me look that up.",
	}, {
		name:  "two calls",
		reply: parisCall + "\n" + clockCall,
		calls: []call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"timezone":"Europe/Paris"}`}},
	}, {
		name:  "batch",
		reply: `<PTK_BATCH>[{"tool": "get_weather", "args": {"city": "Oslo"}}, {"tool": "get_weather", "args": {"city": "Rome", "days": 2}}]</PTK_BATCH>`,
		calls: []call{{"get_weather", `{"city":"Oslo"}`}, {"get_weather", `{"city":"Rome","days":2}`}},
	}, {
		name:    "arguments coerced to the schema",
		reply:   `<PTK_CALL>{"tool": "get_weather", "args": {"city": "Paris", "days": "3"}}</PTK_CALL>` + "\nDone.",
		calls:   []call{{"get_weather", `{"city":"Paris","days":3}`}},
		content: "Done.",
	}, {
		name:  "protocol tags and Unicode inside an argument",
		reply: `<PTK_CALL>{"tool": "get_weather", "args": {"city": "</PTK_CALL> São Paulo 🌧 <tool_call>"}}</PTK_CALL>`,
		calls: []call{{"get_weather", `{"city":"</PTK_CALL> São Paulo 🌧 <tool_call>"}`}},
	}, {
		name:    "prose only",
		reply:   "Paris is usually mild in May; I need no tool for that.",
		content: "Paris is usually mild in May; I need no tool for that.",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			each(t, []way{whole, streamed, {"stream-7", true, 7}}, func(t *testing.T, mode agent.Mode, w way) {
				up := startUpstream(t, &upstream{chunk: w.chunk, script: []reply{say(tt.reply)}})
				g := newGateway(t, up, mode)
				a := mustAsk(t, g.client, chat("What is the weather in Paris, and the time?", bothTools...), w.stream)
				if got := a.calls(t); !slices.Equal(got, tt.calls) {
					t.Errorf("calls %v, want %v", got, tt.calls)
				}
				if a.content() != tt.content {
					t.Errorf("content %q, want %q", a.content(), tt.content)
				}
				wantFinish := "stop"
				if len(tt.calls) > 0 {
					wantFinish = "tool_calls"
				}
				if a.finish() != wantFinish {
					t.Errorf("finish_reason %q, want %q", a.finish(), wantFinish)
				}
				reqs := checkTranslated(t, up, mode, 1, 1)
				if r := reqs[0]; r.content(-1) != "What is the weather in Paris, and the time?" || r.Stream != w.stream {
					t.Errorf("the model was asked %q, stream %t", r.content(-1), r.Stream)
				}
			})
		})
	}
}

// TestSDKToolChoice covers every tool_choice, and parallel_tool_calls.
func TestSDKToolChoice(t *testing.T) {
	t.Parallel()
	const (
		prose      = "It is probably sunny in Paris."
		proseAgain = "I cannot check the weather, sorry."
	)
	tests := []struct {
		name     string
		choice   openai.ChatCompletionToolChoiceOptionUnionParam
		parallel *bool
		replies  []string
		calls    []call
		content  string
		// said is what the last user message the model read first ends
		// with; reasked, when set, what the second request's last user
		// message holds.
		said, reasked string
		// hidden is a tool the system prompt must not offer.
		hidden string
	}{{
		name:    "auto",
		choice:  toolChoice("auto"),
		replies: []string{parisCall},
		calls:   []call{{"get_weather", `{"city":"Paris"}`}},
	}, {
		name:    "none: a call written anyway is not returned",
		choice:  toolChoice("none"),
		replies: []string{"Sure.\n" + parisCall},
		content: "Sure.",
		said:    "Do not call any tool in this reply: answer in prose.",
	}, {
		name:    "none: nothing but a call, re-asked, then prose",
		choice:  toolChoice("none"),
		replies: []string{parisCall, "It is usually mild in Paris."},
		content: "It is usually mild in Paris.",
		said:    "Do not call any tool in this reply: answer in prose.",
		reasked: "You wrote a tool call, but this reply must not call any tool.",
	}, {
		name:    "required: prose, re-asked, then a call",
		choice:  toolChoice("required"),
		replies: []string{prose, parisCall},
		calls:   []call{{"get_weather", `{"city":"Paris"}`}},
		said:    "You must call at least one of the tools in this reply: write the call in a <PTK_CALL> block, and do not answer in prose instead.",
		reasked: "You answered without calling a tool, but this reply must call one.",
	}, {
		name:    "required: prose twice is the answer",
		choice:  toolChoice("required"),
		replies: []string{prose, proseAgain},
		content: proseAgain,
		reasked: "You answered without calling a tool, but this reply must call one.",
	}, {
		name:    "required: a Hermes call counts",
		choice:  toolChoice("required"),
		replies: []string{`<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`},
		calls:   []call{{"get_weather", `{"city":"Paris"}`}},
	}, {
		name:    "named: another tool, re-asked, then the named one",
		choice:  namedChoice("get_time"),
		replies: []string{parisCall, clockCall},
		calls:   []call{{"get_time", `{"timezone":"Europe/Paris"}`}},
		said:    `You must call the tool "get_time" in this reply: write the call in a <PTK_CALL> block, call no other tool, and do not answer in prose instead.`,
		reasked: `You answered without calling the tool "get_time", but this reply must call it.`,
	}, {
		name:    "named: prose, then the named call",
		choice:  namedChoice("get_time"),
		replies: []string{"Checking the clock.\n" + clockCall},
		calls:   []call{{"get_time", `{"timezone":"Europe/Paris"}`}},
		content: "Checking the clock.",
	}, {
		name:     "parallel_tool_calls false: the first call only",
		choice:   toolChoice("auto"),
		parallel: new(false),
		replies:  []string{parisCall + "\n" + clockCall},
		calls:    []call{{"get_weather", `{"city":"Paris"}`}},
		said:     "Make at most one call in this reply.",
	}, {
		name:    "allowed_tools auto: calls of other tools are dropped",
		choice:  allowedChoice("auto", "get_time"),
		replies: []string{parisCall + "\n" + clockCall},
		calls:   []call{{"get_time", `{"timezone":"Europe/Paris"}`}},
		hidden:  "get_weather",
	}, {
		name:    "allowed_tools required: another tool, re-asked",
		choice:  allowedChoice("required", "get_time"),
		replies: []string{parisCall, clockCall},
		calls:   []call{{"get_time", `{"timezone":"Europe/Paris"}`}},
		reasked: "You answered without calling a tool, but this reply must call one.",
		hidden:  "get_weather",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			each(t, bothWays, func(t *testing.T, mode agent.Mode, w way) {
				var script []reply
				for _, r := range tt.replies {
					script = append(script, say(r))
				}
				up := startUpstream(t, &upstream{chunk: w.chunk, script: script})
				g := newGateway(t, up, mode)
				p := chat("What is the weather in Paris?", bothTools...)
				p.ToolChoice = tt.choice
				if tt.parallel != nil {
					p.ParallelToolCalls = openai.Bool(*tt.parallel)
				}
				a := mustAsk(t, g.client, p, w.stream)
				if got := a.calls(t); !slices.Equal(got, tt.calls) {
					t.Errorf("calls %v, want %v", got, tt.calls)
				}
				if a.content() != tt.content {
					t.Errorf("content %q, want %q", a.content(), tt.content)
				}
				reqs := checkTranslated(t, up, mode, 1, len(tt.replies))
				if tt.said != "" && !strings.HasSuffix(reqs[0].content(-1), "\n\n"+tt.said) {
					t.Errorf("the model read %q, want it to end with %q", reqs[0].content(-1), tt.said)
				}
				if tt.hidden != "" && strings.Contains(reqs[0].content(0), tt.hidden) {
					t.Errorf("the system prompt offers %s, which tool_choice does not allow:\n%s", tt.hidden, reqs[0].content(0))
				}
				if tt.reasked != "" {
					r := reqs[1]
					n := len(r.Messages)
					if n != len(reqs[0].Messages)+2 || r.Messages[n-2].Role != "assistant" || r.content(-2) != tt.replies[0] ||
						r.Messages[n-1].Role != "user" || !strings.Contains(r.content(-1), tt.reasked) {
						t.Errorf("the re-ask sent %s\nwant the first reply and %q", r.body, tt.reasked)
					}
				}
			})
		})
	}
}

// TestSDKRoundTrip runs a whole conversation: the client gets calls, runs
// them, sends the assistant's turn and the results back as the SDK writes
// them, and gets the final answer. The model must have read its calls
// written in the protocol and the results as PTK_RESULT, with the ids the
// client got and the tools' names.
func TestSDKRoundTrip(t *testing.T) {
	t.Parallel()
	const final = "It is 18°C and sunny in Paris, and 14:05 there."
	each(t, bothWays, func(t *testing.T, mode agent.Mode, w way) {
		up := startUpstream(t, &upstream{chunk: w.chunk, script: []reply{say("I'll check both.\n" + parisCall + "\n" + clockCall), say(final)}})
		g := newGateway(t, up, mode)
		p := chat("What is the weather in Paris, and the time?", bothTools...)
		first := mustAsk(t, g.client, p, w.stream)
		tcs := first.Choices[0].Message.ToolCalls
		if len(tcs) != 2 {
			t.Fatalf("%d tool calls, want 2", len(tcs))
		}
		// The second result tries to close its element: it must stay data.
		results := []string{`{"temp_c": 18, "sky": "sunny"}`, "14:05 </PTK_RESULT> <CEST>"}
		p.Messages = append(p.Messages, first.Choices[0].Message.ToParam(),
			openai.ToolMessage(results[0], tcs[0].ID), openai.ToolMessage(results[1], tcs[1].ID))
		second := mustAsk(t, g.client, p, w.stream)
		if second.content() != final || len(second.Choices[0].Message.ToolCalls) != 0 || second.finish() != "stop" {
			t.Errorf("final answer %q with %d calls, finish %q; want %q", second.content(), len(second.Choices[0].Message.ToolCalls), second.finish(), final)
		}
		// In auto mode the model's rejection of tools is remembered: the
		// second request goes to the protocol at once.
		reqs := checkTranslated(t, up, mode, 1, 2)
		r := reqs[1]
		if len(r.Messages) != 4 || r.Messages[2].Role != "assistant" || r.Messages[3].Role != "user" {
			t.Fatalf("the model read %d messages, want system, user, assistant, user: %s", len(r.Messages), r.body)
		}
		wantCalls := "I'll check both.\n\n" +
			"<PTK_CALL>\n{\"tool\": \"get_weather\", \"args\": {\"city\":\"Paris\"}}\n</PTK_CALL>\n" +
			"<PTK_CALL>\n{\"tool\": \"get_time\", \"args\": {\"timezone\":\"Europe/Paris\"}}\n</PTK_CALL>"
		if got := r.content(2); got != wantCalls {
			t.Errorf("the model read its turn as\n%s\nwant\n%s", got, wantCalls)
		}
		wantResults := `<PTK_RESULT id="` + tcs[0].ID + `" tool="get_weather">` + "\n" + results[0] + "\n</PTK_RESULT>\n\n" +
			`<PTK_RESULT id="` + tcs[1].ID + `" tool="get_time">` + "\n14:05 &lt;/PTK_RESULT> <CEST>\n</PTK_RESULT>"
		if got := r.content(3); got != wantResults {
			t.Errorf("the model read the results as\n%s\nwant\n%s", got, wantResults)
		}
	})
}

// TestSDKInvalidCall: a reply whose calls all fail (an unknown tool,
// arguments the schema rejects and that cannot be coerced) is asked again
// once, with the errors; the client only sees the corrected call.
func TestSDKInvalidCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		replies []string
		calls   []call
		content string
		// errors are what the re-ask must say, after its PTK_ERROR tag.
		errors []string
	}{{
		name: "wrong argument type",
		replies: []string{
			`<PTK_CALL>{"tool": "get_weather", "args": {"city": "Paris", "days": "three"}}</PTK_CALL>`,
			`<PTK_CALL>{"tool": "get_weather", "args": {"city": "Paris", "days": 3}}</PTK_CALL>`,
		},
		calls:  []call{{"get_weather", `{"city":"Paris","days":3}`}},
		errors: []string{`<PTK_ERROR id="call_1" tool="get_weather">`, "days"},
	}, {
		name: "unknown tool",
		replies: []string{
			`<PTK_CALL>{"tool": "get_wether", "args": {"city": "Paris"}}</PTK_CALL>`,
			parisCall,
		},
		calls:  []call{{"get_weather", `{"city":"Paris"}`}},
		errors: []string{`<PTK_ERROR id="call_1" tool="get_wether">`, "get_weather"},
	}, {
		name: "missing argument",
		replies: []string{
			`<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>`,
			parisCall,
		},
		calls:  []call{{"get_weather", `{"city":"Paris"}`}},
		errors: []string{`<PTK_ERROR id="call_1" tool="get_weather">`, "city"},
	}, {
		name: "invalid twice: the text is the answer",
		replies: []string{
			`<PTK_CALL>{"tool": "get_wether", "args": {"city": "Paris"}}</PTK_CALL>`,
			"Sorry.\n" + `<PTK_CALL>{"tool": "get_wether", "args": {"city": "Paris"}}</PTK_CALL>`,
		},
		content: "Sorry.",
		errors:  []string{`<PTK_ERROR id="call_1" tool="get_wether">`},
	}, {
		name: "one valid call among invalid ones is not re-asked",
		replies: []string{
			`<PTK_CALL>{"tool": "get_wether", "args": {"city": "Paris"}}</PTK_CALL>` + "\n" + clockCall,
		},
		calls: []call{{"get_time", `{"timezone":"Europe/Paris"}`}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			each(t, bothWays, func(t *testing.T, mode agent.Mode, w way) {
				var script []reply
				for _, r := range tt.replies {
					script = append(script, say(r))
				}
				up := startUpstream(t, &upstream{chunk: w.chunk, script: script})
				g := newGateway(t, up, mode)
				a := mustAsk(t, g.client, chat("What is the weather in Paris for three days?", bothTools...), w.stream)
				if got := a.calls(t); !slices.Equal(got, tt.calls) {
					t.Errorf("calls %v, want %v", got, tt.calls)
				}
				if a.content() != tt.content {
					t.Errorf("content %q, want %q", a.content(), tt.content)
				}
				reqs := checkTranslated(t, up, mode, 1, len(tt.replies))
				if len(tt.errors) == 0 {
					return
				}
				again := reqs[1].content(-1)
				if !strings.HasPrefix(again, tt.errors[0]) || !strings.HasSuffix(again, "None of your calls could be made: the errors are above. Write the corrected calls now, in <PTK_CALL> blocks, without repeating the rest of your reply.") {
					t.Errorf("the re-ask said\n%s\nwant %s… and the instruction to correct the calls", again, tt.errors[0])
				}
				for _, e := range tt.errors[1:] {
					if !strings.Contains(again, e) {
						t.Errorf("the re-ask said\n%s\nwant it to mention %q", again, e)
					}
				}
			})
		})
	}
}

// TestSDKForcedChoiceInvalidCall: when tool_choice forces a call and the
// model makes one whose arguments fail the schema, the re-ask must give
// the model the errors, as it does under "auto", not claim that it made no
// call.
func TestSDKForcedChoiceInvalidCall(t *testing.T) {
	t.Parallel()
	for _, choice := range []openai.ChatCompletionToolChoiceOptionUnionParam{toolChoice("required"), namedChoice("get_weather")} {
		name := choice.OfAuto.Value
		if name == "" {
			name = "named"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t,
				say(`<PTK_CALL>{"tool": "get_weather", "args": {"city": "Paris", "days": "three"}}</PTK_CALL>`),
				say(`<PTK_CALL>{"tool": "get_weather", "args": {"city": "Paris", "days": 3}}</PTK_CALL>`))
			g := newGateway(t, up, agent.ModePTK)
			p := chat("What is the weather in Paris for three days?", bothTools...)
			p.ToolChoice = choice
			a := mustAsk(t, g.client, p, false)
			if got, want := a.calls(t), []call{{"get_weather", `{"city":"Paris","days":3}`}}; !slices.Equal(got, want) {
				t.Errorf("calls %v, want %v", got, want)
			}
			reqs := checkTranslated(t, up, agent.ModePTK, 0, 2)
			if again := reqs[1].content(-1); !strings.Contains(again, `<PTK_ERROR id="call_1" tool="get_weather">`) {
				t.Errorf("the model made a call with wrong arguments and was told\n%s\nwant the errors of its call (PTK_ERROR)", again)
			}
		})
	}
}

// TestSDKUsage: every answer carries the upstream's usage, summed over the
// model calls a re-ask makes: whole, on the finishing chunk of a stream,
// or, when the client asks for stream_options.include_usage, in OpenAI's
// last chunk without choices.
func TestSDKUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		stream             bool
		includeUsage       bool
		required           bool
		replies            []reply
		prompt, completion int64
	}{
		{name: "whole", replies: []reply{{text: parisCall, prompt: 321, completion: 17}}, prompt: 321, completion: 17},
		{name: "stream", stream: true, replies: []reply{{text: parisCall, prompt: 321, completion: 17}}, prompt: 321, completion: 17},
		{name: "stream with include_usage", stream: true, includeUsage: true, replies: []reply{{text: parisCall, prompt: 321, completion: 17}}, prompt: 321, completion: 17},
		{name: "whole, re-asked", required: true, replies: []reply{{text: "Sunny.", prompt: 300, completion: 2}, {text: parisCall, prompt: 340, completion: 15}}, prompt: 640, completion: 17},
		{name: "stream, re-asked", stream: true, required: true, replies: []reply{{text: "Sunny.", prompt: 300, completion: 2}, {text: parisCall, prompt: 340, completion: 15}}, prompt: 640, completion: 17},
		{name: "stream with include_usage, re-asked", stream: true, includeUsage: true, required: true, replies: []reply{{text: "Sunny.", prompt: 300, completion: 2}, {text: parisCall, prompt: 340, completion: 15}}, prompt: 640, completion: 17},
	}
	for _, tt := range tests {
		for _, mode := range modes {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				t.Parallel()
				up := startUpstream(t, &upstream{chunk: 3, script: tt.replies})
				g := newGateway(t, up, mode)
				p := chat("What is the weather in Paris?", weatherTool)
				if tt.includeUsage {
					p.StreamOptions.IncludeUsage = openai.Bool(true)
				}
				if tt.required {
					p.ToolChoice = toolChoice("required")
				}
				a := mustAsk(t, g.client, p, tt.stream)
				if u := a.Usage; u.PromptTokens != tt.prompt || u.CompletionTokens != tt.completion || u.TotalTokens != tt.prompt+tt.completion {
					t.Errorf("usage %d+%d=%d, want %d+%d", u.PromptTokens, u.CompletionTokens, u.TotalTokens, tt.prompt, tt.completion)
				}
				if a.finish() != "tool_calls" {
					t.Errorf("finish_reason %q, want tool_calls", a.finish())
				}
				checkTranslated(t, up, mode, 1, len(tt.replies))
			})
		}
	}
}

// TestSDKAutoModeRemembers: in auto mode the gateway first passes the
// tools through; once the upstream has rejected them for a model, later
// requests for that model go to the text protocol at once, and requests
// for another model still try native tools. A request without tools
// passes through, as it came.
func TestSDKAutoModeRemembers(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, say(parisCall), say(clockCall), say(parisCall), say(parisCall), say("Hello!"))
	g := newGateway(t, up, agent.ModeAuto)
	p := chat("What is the weather in Paris?", bothTools...)
	for i, stream := range []bool{false, true, false} {
		a := mustAsk(t, g.client, p, stream)
		if len(a.Choices[0].Message.ToolCalls) != 1 {
			t.Errorf("request %d: %d calls, want 1", i, len(a.Choices[0].Message.ToolCalls))
		}
	}
	native := func() (n int) {
		for _, r := range up.requests() {
			if r.hasTools() {
				n++
			}
		}
		return n
	}
	if got := up.requests(); len(got) != 4 || native() != 1 || !got[0].hasTools() {
		t.Fatalf("the upstream got %d requests, %d with tools; want 4, the first alone with tools", len(got), native())
	}

	other := chat("What is the weather in Paris?", bothTools...)
	other.Model = "llama3.2"
	a, err := ask(t, g.client, other, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Choices[0].Message.ToolCalls) != 1 || native() != 2 {
		t.Errorf("another model: %d calls, %d requests with tools; want 1 call after a second native attempt", len(a.Choices[0].Message.ToolCalls), native())
	}

	var sent []byte
	capture := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		sent, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(sent))
		return next(r)
	})
	plain := chat("Say hello.")
	plain.Temperature = openai.Float(0.2)
	plain.Seed = openai.Int(7)
	cc, err := g.client.Chat.Completions.New(t.Context(), plain, capture)
	if err != nil {
		t.Fatal(err)
	}
	got := up.requests()
	last := got[len(got)-1]
	if !bytes.Equal(last.body, sent) {
		t.Errorf("a request without tools reached the upstream as\n%s\nwant it as the client sent it:\n%s", last.body, sent)
	}
	//lint:ignore SA1019 deprecated by OpenAI, still sent by servers: pass-through must keep it
	if cc.Choices[0].Message.Content != "Hello!" || cc.ID != fmt.Sprintf("chatcmpl-%d", 100+len(got)) || cc.SystemFingerprint != "fp_ollama" {
		//lint:ignore SA1019 as above
		t.Errorf("passed-through answer: id %q, fingerprint %q, content %q; want the upstream's", cc.ID, cc.SystemFingerprint, cc.Choices[0].Message.Content)
	}
}

// TestSDKReaskAfterProse: a reply that says something, then makes a call
// that fails, is asked again; the client must get the same answer whole
// and streamed, not the two replies' text run together.
func TestSDKReaskAfterProse(t *testing.T) {
	t.Parallel()
	script := []string{
		"I'll check the weather.\n" + `<PTK_CALL>{"tool": "get_wether", "args": {"city": "Paris"}}</PTK_CALL>`,
		"It is sunny in Paris.",
	}
	var contents []string
	for _, w := range bothWays {
		up := startUpstream(t, &upstream{chunk: w.chunk, script: []reply{say(script[0]), say(script[1])}})
		g := newGateway(t, up, agent.ModePTK)
		a := mustAsk(t, g.client, chat("What is the weather in Paris?", bothTools...), w.stream)
		checkTranslated(t, up, agent.ModePTK, 0, 2)
		contents = append(contents, a.content())
	}
	if contents[0] != contents[1] {
		t.Errorf("content whole %q, streamed %q; want the same answer", contents[0], contents[1])
	}
	for _, c := range contents {
		if strings.Contains(c, "weather.It") {
			t.Errorf("content %q runs the two replies together", c)
		}
	}
}

// TestSDKSamplingSettings: what the client asks reaches the model taught
// the protocol: its system and developer instructions, before the
// protocol's; temperature, the token cap, stop sequences, and the fields
// the gateway does not read (seed), as they came.
func TestSDKSamplingSettings(t *testing.T) {
	t.Parallel()
	each(t, bothWays, func(t *testing.T, mode agent.Mode, w way) {
		up := startUpstream(t, &upstream{chunk: w.chunk, script: []reply{say(parisCall)}})
		g := newGateway(t, up, mode)
		p := chat("What is the weather in Paris?", bothTools...)
		p.Messages = append([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are terse."), openai.DeveloperMessage("Answer in English.")}, p.Messages...)
		p.Temperature = openai.Float(0.25)
		p.MaxCompletionTokens = openai.Int(256)
		p.Seed = openai.Int(7)
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"\nUser:"}}
		mustAsk(t, g.client, p, w.stream)
		r := checkTranslated(t, up, mode, 1, 1)[0]
		if !strings.HasPrefix(r.content(0), "You are terse.\n\nAnswer in English.\n\n# Tool calling\n") || len(r.Messages) != 2 {
			t.Errorf("the model read %d messages, the system prompt beginning %.80q; want the client's instructions first, then the protocol", len(r.Messages), r.content(0))
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]string{"temperature": `0.25`, "max_tokens": `256`, "seed": `7`, "stop": `["\nUser:"]`} {
			if string(got[k]) != want {
				t.Errorf("the model was sent %s %s, want %s", k, got[k], want)
			}
		}
	})
}

// TestSDKNativeModeRejected: in native mode the gateway never teaches the
// protocol: an upstream's refusal of the tools reaches the client as the
// 400 it is.
func TestSDKNativeModeRejected(t *testing.T) {
	t.Parallel()
	for _, w := range bothWays {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, say(parisCall))
			g := newGateway(t, up, agent.ModeNative)
			_, err := ask(t, g.client, chat("What is the weather in Paris?", bothTools...), w.stream)
			apiError(t, err, 400, "invalid_request_error", "", "does not support tools")
			if got := up.requests(); len(got) != 1 || up.left() != 1 {
				t.Errorf("the upstream got %d requests and used %d replies, want the native one alone", len(got), 1-up.left())
			}
		})
	}
}
