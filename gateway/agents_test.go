package gateway_test

// Helpers of the agents' APIs' tests (Anthropic Messages, Responses): a
// scripted model that writes its calls as text, a gateway in front of it,
// and plain HTTP.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/llm"
)

// said is what a textModel says to one request.
type said struct {
	text, reasoning string
	// finish is the finish reason ("stop" when empty).
	finish string
	usage  ptk.Usage
	// err fails the call; errAfter fails a stream after that many pieces.
	err      error
	errAfter int
	// wait is how long the model thinks before its first piece; block
	// makes it wait for the request's end; a stream stalls after
	// stallAfter pieces, until the request's end.
	wait       time.Duration
	block      bool
	stallAfter int
}

// textModel is a chat model whose replies a function of the request
// writes, tool calls included, as text: streamed in pieces of chunk bytes
// (3 when 0). It records the requests it was sent and how many calls are
// in flight.
type textModel struct {
	reply func(req llm.Request) said
	chunk int

	mu       sync.Mutex
	requests []llm.Request
	inFlight int
	ended    chan struct{} // receives when a call ends
}

var _ llm.Streamer = (*textModel)(nil)

func newTextModel(reply func(llm.Request) said) *textModel {
	return &textModel{reply: reply, ended: make(chan struct{}, 64)}
}

// replies returns a model that says each of ss in turn (the last one again
// past the end).
func replies(ss ...said) *textModel {
	var mu sync.Mutex
	i := 0
	return newTextModel(func(llm.Request) said {
		mu.Lock()
		defer mu.Unlock()
		s := ss[min(i, len(ss)-1)]
		i++
		return s
	})
}

func (m *textModel) begin(req llm.Request) said {
	m.mu.Lock()
	req.Messages = append([]ptk.Message(nil), req.Messages...)
	m.requests = append(m.requests, req)
	m.inFlight++
	m.mu.Unlock()
	return m.reply(req)
}

func (m *textModel) end() {
	m.mu.Lock()
	m.inFlight--
	m.mu.Unlock()
	select {
	case m.ended <- struct{}{}:
	default:
	}
}

// last returns the last request the model was sent.
func (m *textModel) last() llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		return llm.Request{}
	}
	return m.requests[len(m.requests)-1]
}

func (s said) response(req llm.Request) *llm.Response {
	finish := s.finish
	if finish == "" {
		finish = "stop"
	}
	u := s.usage
	if u == (ptk.Usage{}) {
		u = ptk.Usage{PromptTokens: 100, CompletionTokens: 20}
	}
	return &llm.Response{Content: s.text, Reasoning: s.reasoning, FinishReason: finish, Usage: u, Model: req.Model}
}

func (s said) think(ctx context.Context) error {
	if s.block {
		<-ctx.Done()
		return ctx.Err()
	}
	if s.wait > 0 {
		select {
		case <-time.After(s.wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (m *textModel) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	s := m.begin(req)
	defer m.end()
	if err := s.think(ctx); err != nil {
		return nil, err
	}
	if s.err != nil {
		return nil, s.err
	}
	return s.response(req), nil
}

func (m *textModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		s := m.begin(req)
		defer m.end()
		if err := s.think(ctx); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		if s.err != nil && s.errAfter == 0 {
			yield(llm.Chunk{}, s.err)
			return
		}
		n := m.chunk
		if n <= 0 {
			n = 3
		}
		sent := 0
		piece := func(c llm.Chunk) bool {
			if err := ctx.Err(); err != nil {
				yield(llm.Chunk{}, err)
				return false
			}
			if s.err != nil && sent == s.errAfter {
				yield(llm.Chunk{}, s.err)
				return false
			}
			if s.stallAfter > 0 && sent == s.stallAfter {
				<-ctx.Done()
				yield(llm.Chunk{}, ctx.Err())
				return false
			}
			sent++
			return yield(c, nil)
		}
		for _, p := range benchPieces(s.reasoning, n) {
			if !piece(llm.Chunk{Reasoning: p}) {
				return
			}
		}
		for _, p := range benchPieces(s.text, n) {
			if !piece(llm.Chunk{Text: p}) {
				return
			}
		}
		r := s.response(req)
		piece(llm.Chunk{Usage: &r.Usage, FinishReason: r.FinishReason, Model: r.Model})
	}
}

// agentGateway starts a gateway in front of model, served in mode, and
// returns its base URL (no /v1).
func agentGateway(t *testing.T, model llm.Model, mode agent.Mode, configure ...func(*gateway.Config)) string {
	t.Helper()
	cfg := gateway.Config{
		DefaultModel: "local-model",
		Resolve: func(name string) (gateway.Upstream, error) {
			return gateway.Upstream{Model: model, Mode: mode}, nil
		},
		Serves: func(name string) bool { return name == "local-model" },
		Logger: slog.New(slog.DiscardHandler),
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
	return srv.URL
}

// post sends body (JSON text, or a value to encode) with the headers
// (name, value pairs) and returns the answer's status, headers and body.
func post(t *testing.T, url string, body any, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	var data []byte
	switch b := body.(type) {
	case string:
		data = []byte(b)
	case []byte:
		data = b
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

// get sends a GET with the headers.
func get(t *testing.T, url string, headers ...string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// ptkCall is a call written in the PTK protocol; hermesCall the same in
// the Hermes (Qwen) format models drift into.
func ptkCall(tool string, args any) string {
	a, _ := json.Marshal(args)
	return "<PTK_CALL>\n" + `{"tool": "` + tool + `", "args": ` + string(a) + "}\n</PTK_CALL>"
}

func hermesCall(tool string, args any) string {
	a, _ := json.Marshal(args)
	return "<tool_call>\n" + `{"name": "` + tool + `", "arguments": ` + string(a) + "}\n</tool_call>"
}

// lastUser is the text of the last user message a model was sent.
func lastUser(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == ptk.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

// systemPrompt is the system message a model was sent.
func systemPrompt(req llm.Request) string {
	if len(req.Messages) > 0 && req.Messages[0].Role == ptk.RoleSystem {
		return req.Messages[0].Content
	}
	return ""
}

func jsonObj(s string) map[string]any {
	var v map[string]any
	json.Unmarshal([]byte(s), &v)
	return v
}

func has(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
