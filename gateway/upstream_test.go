package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// upstream is a scripted model server that speaks the Chat Completions wire
// format as Ollama's /v1 endpoint writes it, for a model without native
// tool calling: a request that declares tools is answered 400 "… does not
// support tools", as Ollama answers it, and uses no reply of the script;
// any other request gets the next reply, whole or as a stream. It records
// every request it gets, rejected or not.
//
// With tools set it is a server that takes tools, for pass-through tests:
// its replies are then usually written as they are (reply.raw).
type upstream struct {
	t   testing.TB
	srv *httptest.Server
	// chunk is the most bytes of content a stream's delta carries; 0 sends
	// the whole text in one delta. A delta always holds whole runes, as a
	// tokenizer's pieces do.
	chunk int
	// tools: the model takes native tool definitions.
	tools bool

	mu     sync.Mutex
	script []reply
	got    []upstreamRequest
}

// reply is one scripted answer.
type reply struct {
	text   string
	finish string // "stop" when empty
	// prompt and completion are the usage it reports; 0 reports the
	// defaults of usage.
	prompt, completion int

	// status, when set, answers with this status and errorMsg, in
	// Ollama's error shape.
	status   int
	errorMsg string
	// raw, when set, is the whole answer, written as it is with
	// contentType ("application/json" when empty).
	raw, contentType string

	// arrived, when not nil, is closed when the request arrives; the
	// answer then waits for release to close, or for the request to end.
	arrived, release chan struct{}
	// gone, when not nil, is closed when the request ends while it waits
	// (for release or stall): the gateway gave up on it.
	gone chan struct{}

	// header is set on the answer.
	header map[string]string

	// In a stream, after the text: stall, when not nil, waits for it to
	// close (or for the request to end); streamError sends an error event
	// with this message instead of the finish; cut ends the body without a
	// finish or [DONE].
	stall       chan struct{}
	streamError string
	cut         bool
}

// usage is the usage a reply reports: by default 100 prompt tokens and
// one completion token per 4 bytes of text, at least 1.
func (r reply) usage() (prompt, completion int) {
	prompt, completion = r.prompt, r.completion
	if prompt == 0 {
		prompt = 100
	}
	if completion == 0 {
		completion = max(1, len(r.text)/4)
	}
	return prompt, completion
}

// abandoned says that the request ended while its answer waited.
func (r reply) abandoned() {
	if r.gone != nil {
		close(r.gone)
	}
}

// say is a reply with this text and the default usage.
func say(text string) reply { return reply{text: text} }

// upstreamRequest is a request the upstream got.
type upstreamRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    *string         `json:"content"`
		ToolCalls  json.RawMessage `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools         json.RawMessage `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`

	body []byte
}

// content is the text of the i-th message (from the end when i < 0).
func (r upstreamRequest) content(i int) string {
	if i < 0 {
		i += len(r.Messages)
	}
	if i < 0 || i >= len(r.Messages) || r.Messages[i].Content == nil {
		return ""
	}
	return *r.Messages[i].Content
}

// hasTools reports whether the request declared tools.
func (r upstreamRequest) hasTools() bool {
	return len(r.Tools) > 0 && string(r.Tools) != "null" && string(r.Tools) != "[]"
}

// newUpstream starts a model server without native tools that answers
// with the replies, in order, each whole or as a stream in one delta.
func newUpstream(t testing.TB, replies ...reply) *upstream {
	return startUpstream(t, &upstream{script: replies})
}

// startUpstream starts u, configured and scripted; the server stops at the
// end of the test.
func startUpstream(t testing.TB, u *upstream) *upstream {
	u.t = t
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// baseURL is the base URL of its API, as openai.New takes it.
func (u *upstream) baseURL() string { return u.srv.URL + "/v1" }

// requests returns the requests it got, in order.
func (u *upstream) requests() []upstreamRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]upstreamRequest(nil), u.got...)
}

// left is how many replies of the script are unused.
func (u *upstream) left() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.script)
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeUpstreamError(w, http.StatusNotFound, "404 page not found")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req upstreamRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeUpstreamError(w, http.StatusBadRequest, "invalid request: "+err.Error())
		return
	}
	req.body = body
	u.mu.Lock()
	u.got = append(u.got, req)
	n := len(u.got)
	if req.hasTools() && !u.tools {
		u.mu.Unlock()
		writeUpstreamError(w, http.StatusBadRequest, "registry.ollama.ai/library/"+req.Model+" does not support tools")
		return
	}
	if len(u.script) == 0 {
		u.mu.Unlock()
		u.t.Errorf("upstream: request %d has no scripted reply; it asked:\n%s", n, body)
		writeUpstreamError(w, http.StatusInternalServerError, "the test scripted no reply for this request")
		return
	}
	rep := u.script[0]
	u.script = u.script[1:]
	u.mu.Unlock()

	if rep.arrived != nil {
		close(rep.arrived)
		select {
		case <-rep.release:
		case <-r.Context().Done():
			rep.abandoned()
			return
		}
	}
	id := "chatcmpl-" + strconv.Itoa(100+n)
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	switch {
	case rep.status != 0:
		writeUpstreamError(w, rep.status, rep.errorMsg)
	case rep.raw != "":
		ct := rep.contentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		io.WriteString(w, rep.raw)
	case req.Stream:
		u.stream(r.Context(), w, req, rep, id)
	default:
		u.whole(w, req, rep, id)
	}
}

// The Chat Completions answer as Ollama writes it.
type (
	wireAnswer struct {
		ID                string       `json:"id"`
		Object            string       `json:"object"`
		Created           int64        `json:"created"`
		Model             string       `json:"model"`
		SystemFingerprint string       `json:"system_fingerprint"`
		Choices           []wireChoice `json:"choices"`
		Usage             *wireUsage   `json:"usage,omitempty"`
	}
	wireChoice struct {
		Index        int          `json:"index"`
		Message      *wireMessage `json:"message,omitempty"`
		Delta        *wireMessage `json:"delta,omitempty"`
		FinishReason *string      `json:"finish_reason"`
	}
	wireMessage struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

// upstreamCreated is the creation time of every answer.
const upstreamCreated = 1751030412

func (rep reply) wireUsage() *wireUsage {
	p, c := rep.usage()
	return &wireUsage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

func (rep reply) finishReason() *string {
	if rep.finish != "" {
		return &rep.finish
	}
	stop := "stop"
	return &stop
}

func (u *upstream) whole(w http.ResponseWriter, req upstreamRequest, rep reply, id string) {
	a := wireAnswer{ID: id, Object: "chat.completion", Created: upstreamCreated, Model: req.Model, SystemFingerprint: "fp_ollama",
		Choices: []wireChoice{{Message: &wireMessage{Role: "assistant", Content: rep.text}, FinishReason: rep.finishReason()}},
		Usage:   rep.wireUsage()}
	b, err := json.Marshal(a)
	if err != nil {
		u.t.Errorf("upstream: %v", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// stream writes the reply as Ollama streams one: a chunk per piece of the
// text, a chunk with the finish reason, the usage in a last chunk without
// choices when the request asks for it, then [DONE].
func (u *upstream) stream(ctx context.Context, w http.ResponseWriter, req upstreamRequest, rep reply, id string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() { http.NewResponseController(w).Flush() }
	event := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			u.t.Errorf("upstream: %v", err)
		}
		w.Write([]byte("data: "))
		w.Write(b)
		w.Write([]byte("\n\n"))
		flush()
	}
	chunk := func(content string, finish *string) wireAnswer {
		return wireAnswer{ID: id, Object: "chat.completion.chunk", Created: upstreamCreated, Model: req.Model, SystemFingerprint: "fp_ollama",
			Choices: []wireChoice{{Delta: &wireMessage{Role: "assistant", Content: content}, FinishReason: finish}}}
	}
	for _, piece := range pieces(rep.text, u.chunk) {
		event(chunk(piece, nil))
	}
	if rep.stall != nil {
		select {
		case <-rep.stall:
		case <-ctx.Done():
			rep.abandoned()
			return
		}
	}
	switch {
	case rep.cut:
		return
	case rep.streamError != "":
		event(map[string]any{"error": map[string]any{"message": rep.streamError, "type": "api_error", "param": nil, "code": nil}})
		return
	}
	last := chunk("", rep.finishReason())
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		event(last)
		event(wireAnswer{ID: id, Object: "chat.completion.chunk", Created: upstreamCreated, Model: req.Model, SystemFingerprint: "fp_ollama",
			Choices: []wireChoice{}, Usage: rep.wireUsage()})
	} else {
		event(last)
	}
	io.WriteString(w, "data: [DONE]\n\n")
	flush()
}

// pieces splits s into pieces of at most size bytes (all of s when size is
// 0) that hold whole runes: a rune longer than size is a piece alone.
func pieces(s string, size int) []string {
	if size <= 0 || len(s) <= size {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	var out []string
	for len(s) > 0 {
		n := 0
		for n < len(s) {
			_, w := utf8.DecodeRuneInString(s[n:])
			if n > 0 && n+w > size {
				break
			}
			n += w
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// writeUpstreamError answers in the error shape of Ollama's /v1 endpoint.
func writeUpstreamError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "api_error", "param": nil, "code": nil}})
	w.Write(b)
}

func TestPieces(t *testing.T) {
	tests := []struct {
		s    string
		size int
		want []string
	}{
		{"", 1, nil},
		{"abc", 0, []string{"abc"}},
		{"abc", 1, []string{"a", "b", "c"}},
		{"abcde", 2, []string{"ab", "cd", "e"}},
		{"a민b", 1, []string{"a", "민", "b"}},
		{"a민b", 4, []string{"a민", "b"}},
	}
	for _, tt := range tests {
		got := pieces(tt.s, tt.size)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("pieces(%q, %d) = %q, want %q", tt.s, tt.size, got, tt.want)
		}
	}
}
