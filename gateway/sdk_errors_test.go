package gateway_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/llm"
)

// apiError checks that err is the SDK's error for an answer with the
// status, type and code (code "" for none), whose message holds says, and
// returns it.
func apiError(t *testing.T, err error, status int, typ, code, says string) *openai.Error {
	t.Helper()
	var ae *openai.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T), want an *openai.Error with status %d", err, err, status)
	}
	if ae.StatusCode != status || ae.Type != typ || ae.Code != code || !strings.Contains(ae.Message, says) {
		t.Errorf("error %d type %q code %q message %q; want %d, %q, %q and a message with %q", ae.StatusCode, ae.Type, ae.Code, ae.Message, status, typ, code, says)
	}
	if !ae.JSON.Param.Valid() && !strings.Contains(ae.RawJSON(), `"param"`) {
		t.Errorf("error body %s has no param", ae.RawJSON())
	}
	return ae
}

// TestSDKRequestErrors: requests the gateway refuses before asking the
// model get OpenAI's error shape and status, whole or streamed, and never
// reach the upstream.
func TestSDKRequestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		configure func(*gateway.Config)
		key       string
		params    func() openai.ChatCompletionNewParams
		opts      []option.RequestOption
		status    int
		typ, code string
		says      string
	}{{
		name:      "wrong API key",
		configure: func(c *gateway.Config) { c.APIKeys = []string{"sk-right", "sk-other"} },
		key:       "sk-wrong",
		status:    401, typ: "invalid_request_error", code: "invalid_api_key", says: "API key",
	}, {
		name:   "malformed JSON",
		opts:   []option.RequestOption{option.WithRequestBody("application/json", []byte(`{"model": "gemma:2b", "messages": [{"role": "user", "content": "hi"}`))},
		status: 400, typ: "invalid_request_error", says: "not a valid chat completion request",
	}, {
		name: "no messages",
		params: func() openai.ChatCompletionNewParams {
			return openai.ChatCompletionNewParams{Model: modelName, Tools: bothTools}
		},
		status: 400, typ: "invalid_request_error", says: "messages",
	}, {
		name: "tool_choice names an undeclared function",
		params: func() openai.ChatCompletionNewParams {
			p := chat("What time is it?", weatherTool)
			p.ToolChoice = namedChoice("get_time")
			return p
		},
		status: 400, typ: "invalid_request_error", says: `"get_time"`,
	}, {
		name: "tool_choice required without tools",
		params: func() openai.ChatCompletionNewParams {
			p := chat("What time is it?")
			p.ToolChoice = toolChoice("required")
			return p
		},
		status: 400, typ: "invalid_request_error", says: "needs tools",
	}, {
		name: "a tool declared twice",
		params: func() openai.ChatCompletionNewParams {
			return chat("What time is it?", timeTool, weatherTool, timeTool)
		},
		status: 400, typ: "invalid_request_error", says: "declared twice",
	}, {
		name: "tool result without its call's id",
		params: func() openai.ChatCompletionNewParams {
			p := chat("What is the weather in Paris?", weatherTool)
			p.Messages = append(p.Messages, openai.ToolMessage("sunny", ""))
			return p
		},
		status: 400, typ: "invalid_request_error", says: "tool_call_id",
	}, {
		name:      "body too big",
		configure: func(c *gateway.Config) { c.MaxBodyBytes = 2 << 10 },
		params:    func() openai.ChatCompletionNewParams { return chat(strings.Repeat("Paris? ", 2000), weatherTool) },
		status:    413, typ: "invalid_request_error", says: "2 KiB",
	}, {
		name: "unknown model",
		configure: func(c *gateway.Config) {
			resolve := c.Resolve
			c.Resolve = func(name string) (gateway.Upstream, error) {
				if name != modelName {
					return gateway.Upstream{}, &llm.Error{Kind: llm.ErrModelNotFound, Message: "no model " + name}
				}
				return resolve(name)
			}
		},
		params: func() openai.ChatCompletionNewParams {
			p := chat("hi", weatherTool)
			p.Model = "gemma:7b"
			return p
		},
		status: 404, typ: "invalid_request_error", code: "model_not_found", says: "gemma:7b",
	}}
	for _, tt := range tests {
		for _, w := range bothWays {
			t.Run(tt.name+"/"+w.name, func(t *testing.T) {
				t.Parallel()
				up := newUpstream(t)
				var configure []func(*gateway.Config)
				if tt.configure != nil {
					configure = append(configure, tt.configure)
				}
				g := newGateway(t, up, agent.ModeAuto, configure...)
				c := g.client
				if tt.key != "" {
					c = sdkClient(g.url, tt.key)
				}
				p := chat("What is the weather in Paris?", weatherTool)
				if tt.params != nil {
					p = tt.params()
				}
				var err error
				if w.stream {
					s := c.Chat.Completions.NewStreaming(t.Context(), p, tt.opts...)
					for s.Next() {
						t.Errorf("chunk %s", s.Current().RawJSON())
					}
					err = s.Err()
					s.Close()
				} else {
					_, err = c.Chat.Completions.New(t.Context(), p, tt.opts...)
				}
				apiError(t, err, tt.status, tt.typ, tt.code, tt.says)
				if n := len(up.requests()); n != 0 {
					t.Errorf("the upstream got %d requests, want none", n)
				}
			})
		}
	}
}

// TestSDKTooManyRequests: past MaxConcurrent requests in flight, a request
// is answered 429 with Retry-After at once; once one ends, the next is
// served.
func TestSDKTooManyRequests(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}), make(chan struct{})
	up := newUpstream(t, reply{text: parisCall, arrived: arrived, release: release}, say(clockCall))
	g := newGateway(t, up, agent.ModePTK, func(c *gateway.Config) { c.MaxConcurrent = 1 })
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	p := chat("What is the weather in Paris?", bothTools...)
	first := make(chan error, 1)
	go func() {
		_, err := g.client.Chat.Completions.New(t.Context(), p)
		first <- err
	}()
	<-arrived
	for _, stream := range []bool{false, true} {
		_, err := ask(t, g.client, p, stream)
		ae := apiError(t, err, 429, "rate_limit_error", "rate_limit_exceeded", "try again")
		if ra := ae.Response.Header.Get("Retry-After"); ra != "1" {
			t.Errorf("Retry-After %q, want 1", ra)
		}
	}
	close(release)
	released = true
	if err := <-first; err != nil {
		t.Fatalf("the request in flight failed: %v", err)
	}
	mustAsk(t, g.client, p, false)
	if n := len(up.requests()); n != 2 {
		t.Errorf("the upstream got %d requests, want 2", n)
	}
}

// TestSDKUpstreamErrors: an upstream that fails gives 502 with its
// message; a request it refused keeps its 4xx; its rate limit is passed
// on with its Retry-After.
func TestSDKUpstreamErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		reply     reply
		down      bool
		status    int
		typ, code string
		says      string
		retry     string
	}{
		{name: "500", reply: reply{status: 500, errorMsg: "llama runner process has terminated: CUDA out of memory"}, status: 502, typ: "upstream_error", says: "CUDA out of memory"},
		{name: "503", reply: reply{status: 503, errorMsg: "server busy, please try again"}, status: 502, typ: "upstream_error", says: "server busy"},
		{name: "429", reply: reply{status: 429, errorMsg: "too many requests", header: map[string]string{"Retry-After": "7"}}, status: 429, typ: "rate_limit_error", code: "rate_limit_exceeded", says: "too many requests", retry: "7"},
		{name: "400", reply: reply{status: 400, errorMsg: "prompt is too long: 9000 tokens > 8192 context"}, status: 400, typ: "invalid_request_error", says: "prompt is too long"},
		{name: "404 model", reply: reply{status: 404, errorMsg: `model "gemma:2b" not found, try pulling it first`}, status: 404, typ: "invalid_request_error", code: "model_not_found", says: "try pulling it first"},
		// Streamed, the page reads as an event stream without events.
		{name: "200 not JSON", reply: reply{raw: "<html>Bad Gateway</html>", contentType: "text/html"}, status: 502, typ: "upstream_error", says: "upstream: "},
		{name: "down", down: true, status: 502, typ: "upstream_error", says: "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			each(t, bothWays, func(t *testing.T, mode agent.Mode, w way) {
				up := newUpstream(t, tt.reply)
				if tt.down {
					up.srv.Close()
				}
				g := newGateway(t, up, mode)
				_, err := ask(t, g.client, chat("What is the weather in Paris?", bothTools...), w.stream)
				ae := apiError(t, err, tt.status, tt.typ, tt.code, tt.says)
				if tt.retry != "" && ae.Response.Header.Get("Retry-After") != tt.retry {
					t.Errorf("Retry-After %q, want %q", ae.Response.Header.Get("Retry-After"), tt.retry)
				}
			})
		})
	}
}

// TestSDKStreamBreaks: an upstream stream that fails after the answer has
// begun ends the client's stream with an error event that says why, which
// the SDK raises; before the answer has begun (a stream that must call a
// tool holds its text), the status says it.
func TestSDKStreamBreaks(t *testing.T) {
	t.Parallel()
	const text = "Let me think about the weather in Paris first.\n"
	tests := []struct {
		name   string
		reply  reply
		choice string
		says   string
		status int // the error's status when the stream had not begun
	}{
		{name: "error event", reply: reply{text: text, streamError: "model runner has unexpectedly stopped"}, says: "model runner has unexpectedly stopped"},
		{name: "cut", reply: reply{text: text, cut: true}, says: "ended before the answer was complete"},
		{name: "error event, text held", reply: reply{text: text, streamError: "model runner has unexpectedly stopped"}, choice: "required", says: "model runner has unexpectedly stopped", status: 502},
	}
	for _, tt := range tests {
		for _, mode := range modes {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				t.Parallel()
				up := startUpstream(t, &upstream{chunk: 1, script: []reply{tt.reply}})
				g := newGateway(t, up, mode)
				p := chat("What is the weather in Paris?", bothTools...)
				if tt.choice != "" {
					p.ToolChoice = toolChoice(tt.choice)
				}
				a, err := ask(t, g.client, p, true)
				if tt.status != 0 {
					apiError(t, err, tt.status, "upstream_error", "", tt.says)
					return
				}
				var se *ssestream.StreamError
				if !errors.As(err, &se) || !strings.Contains(se.Message, tt.says) {
					t.Fatalf("error %v (%T), want the SDK's stream error saying %q", err, err, tt.says)
				}
				if !strings.HasPrefix(text, a.content()) || a.content() == "" {
					t.Errorf("content before the error %q, want a beginning of %q", a.content(), text)
				}
				for _, ch := range a.chunks {
					if len(ch.Choices) > 0 && ch.Choices[0].FinishReason != "" {
						t.Errorf("a broken stream finished: %s", ch.RawJSON())
					}
				}
			})
		}
	}
}

// TestSDKTimeout: past Config.Timeout the answer is 504, or, once a stream
// has begun, an error event that says so.
func TestSDKTimeout(t *testing.T) {
	t.Parallel()
	for _, w := range []way{whole, streamed, {"stream after text", true, 0}} {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			hang := make(chan struct{})
			rep := reply{text: parisCall, arrived: make(chan struct{}), release: hang}
			if w.name == "stream after text" {
				rep = reply{text: "The weather in Paris is\n", stall: hang}
			}
			up := newUpstream(t, rep)
			g := newGateway(t, up, agent.ModePTK, func(c *gateway.Config) { c.Timeout = 100 * time.Millisecond })
			t.Cleanup(func() { close(hang) })
			a, err := ask(t, g.client, chat("What is the weather in Paris?", bothTools...), w.stream)
			if rep.stall == nil {
				apiError(t, err, 504, "timeout", "", "time limit")
				return
			}
			var se *ssestream.StreamError
			if !errors.As(err, &se) || !strings.Contains(se.Message, "time limit") {
				t.Fatalf("error %v (%T), want the SDK's stream error about the time limit", err, err)
			}
			if a.content() != "The weather in Paris is" {
				t.Errorf("content before the timeout %q", a.content())
			}
		})
	}
}

// TestSDKGarbageOutput: whatever the model writes, the answer is a 200
// the SDK reads: binary junk and deep brackets are text, a call cut off is
// asked again with the reason, or, when the model ran out of tokens,
// answered with finish_reason "length"; a huge reply comes back whole.
func TestSDKGarbageOutput(t *testing.T) {
	t.Parallel()
	var junk strings.Builder
	for i := range 4096 {
		junk.WriteByte(byte(i * 7))
	}
	huge := strings.Repeat("Paris is the capital of France; the weather there is mild. ", 1<<14) // 960 KiB
	cutOff := "I'll check.\n<PTK_CALL>{\"tool\": \"get_weather\", \"args\": {\"city\": \"Par"
	tests := []struct {
		name    string
		reply   reply
		chunk   int
		reasked string // what the re-ask says, when there is one
		calls   []call
		finish  string
		content func(string) bool
	}{
		{name: "binary junk", reply: say(junk.String()), chunk: 1, finish: "stop", content: func(s string) bool { return len(s) > 3000 }},
		{name: "empty", reply: say(""), chunk: 1, finish: "stop", content: func(s string) bool { return s == "" }},
		{name: "deep brackets", reply: say(strings.Repeat("[", 20000) + strings.Repeat(`{"tool": `, 5000)), chunk: 64, finish: "stop", content: func(s string) bool { return len(s) == 20000+9*5000-1 }},
		{name: "unterminated PTK call", reply: say(cutOff), chunk: 1, reasked: "the call is cut off", calls: []call{{"get_weather", `{"city":"Paris"}`}}, finish: "tool_calls"},
		{name: "unterminated Hermes call", reply: say(`<tool_call>{"name": "get_weather", "arguments": {"city"`), chunk: 1, reasked: "the call is cut off", calls: []call{{"get_weather", `{"city":"Paris"}`}}, finish: "tool_calls"},
		{name: "opening tag alone", reply: say("<PTK_CALL>"), chunk: 1, reasked: "cut off right after its opening tag", calls: []call{{"get_weather", `{"city":"Paris"}`}}, finish: "tool_calls"},
		{name: "cut off at the token limit", reply: reply{text: cutOff, finish: "length"}, chunk: 1, finish: "length", content: func(s string) bool { return s == "I'll check." }},
		{name: "huge", reply: say(huge), chunk: 4096, finish: "stop", content: func(s string) bool { return s == strings.TrimSpace(huge) }},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name + "/whole"
			if stream {
				name = tt.name + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				up := startUpstream(t, &upstream{chunk: tt.chunk, script: []reply{tt.reply, say(parisCall)}})
				g := newGateway(t, up, agent.ModePTK)
				a, err := ask(t, g.client, chat("What is the weather in Paris?", bothTools...), stream)
				if err != nil {
					t.Fatalf("the SDK failed: %v (%s)", err, errorText(err))
				}
				if got := a.calls(t); !slices.Equal(got, tt.calls) {
					t.Errorf("calls %v, want %v", got, tt.calls)
				}
				if a.finish() != tt.finish {
					t.Errorf("finish_reason %q, want %q", a.finish(), tt.finish)
				}
				if !utf8.ValidString(a.content()) || tt.content != nil && !tt.content(a.content()) {
					t.Errorf("content %.200q (%d bytes) is not what the model wrote", a.content(), len(a.content()))
				}
				reqs := up.requests()
				switch {
				case tt.reasked == "" && len(reqs) != 1:
					t.Errorf("the upstream got %d requests, want 1", len(reqs))
				case tt.reasked != "" && (len(reqs) != 2 || !strings.Contains(reqs[1].content(-1), tt.reasked)):
					t.Errorf("the upstream got %d requests, want a re-ask saying %q", len(reqs), tt.reasked)
				}
			})
		}
	}
}

// TestSDKClientGoesAway: when the client gives up, whole or in the middle
// of a stream, the gateway gives up its upstream request too.
func TestSDKClientGoesAway(t *testing.T) {
	t.Parallel()
	for _, w := range bothWays {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			wait, gone := make(chan struct{}), make(chan struct{})
			rep := reply{text: parisCall, arrived: make(chan struct{}), release: wait, gone: gone}
			if w.stream {
				rep = reply{text: "The weather in Paris is\n", stall: wait, gone: gone}
			}
			up := newUpstream(t, rep)
			g := newGateway(t, up, agent.ModePTK)
			t.Cleanup(func() { close(wait) })
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			p := chat("What is the weather in Paris?", bothTools...)
			if !w.stream {
				errc := make(chan error, 1)
				go func() {
					_, err := g.client.Chat.Completions.New(ctx, p)
					errc <- err
				}()
				<-rep.arrived
				cancel()
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Errorf("error %v, want context.Canceled", err)
				}
			} else {
				s := g.client.Chat.Completions.NewStreaming(ctx, p)
				for s.Next() {
					if ch := s.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
						break
					}
				}
				cancel()
				s.Close()
			}
			<-gone
		})
	}
}

// A tool the text protocol cannot teach (type "retrieval") sent in auto
// mode to an upstream that rejects tools gets the gateway's own 400 that
// says why, not the upstream's rejection of tools passed through.
func TestAutoModeOtherToolTypes(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, say("unused"))
	g := newGateway(t, up, agent.ModeAuto)
	body := `{"model":"gemma:2b","messages":[{"role":"user","content":"find it"}],"tools":[{"type":"retrieval"}]}`
	resp, err := http.Post(g.url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `tools of type \"retrieval\" cannot be taught in the text protocol`) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}
