package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
)

// How a request was served, as the log line says it.
const (
	modeNative      = "native"       // passed through as it came
	modeNativeText  = "native-text"  // passed through, calls the model wrote as text read out of the answer
	modeTranslated  = "native-llm"   // native tools through the llm.Model, calls written as text read too
	modePTK         = "ptk"          // tools taught as the text protocol
	modeServerTools = "server-tools" // the gateway ran its own tools
)

// exchange is one chat request in flight, and what the log line says of it.
type exchange struct {
	s     *Server
	body  []byte
	req   chatRequest
	up    Upstream
	name  string
	tools []ptk.ToolInfo
	// toolTurns: the conversation holds calls or tool results.
	toolTurns bool
	choice    toolChoice
	// otherTool says why a declared tool is not a function, if one is not.
	otherTool string

	mode   string
	calls  int
	usage  ptk.Usage
	status int
	err    string
	// wrote: the answer has begun; an error can no longer change its status.
	wrote bool
}

// chat serves POST /v1/chat/completions.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	x := &exchange{s: s, status: http.StatusOK}
	defer func() {
		Annotate(w, x.status, x.err,
			slog.String("model", x.name), slog.String("mode", x.mode), slog.Bool("stream", x.req.Stream),
			slog.Int("calls", x.calls), slog.Int("prompt_tokens", x.usage.PromptTokens),
			slog.Int("completion_tokens", x.usage.CompletionTokens))
	}()
	// The request's time counts from its start: reading the body too.
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	br := &bodyReader{r: http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), rc: http.NewResponseController(w),
		start: time.Now(), deadline: deadline, idle: s.cfg.BodyIdleTimeout, minRate: s.cfg.MinBodyRate}
	body, err := io.ReadAll(br)
	br.done()
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			x.fail(w, &httpError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error",
				msg: "the request body is larger than the gateway's limit of " + byteSize(tooBig.Limit)})
		case errors.Is(err, errSlowBody):
			w.Header().Set("Connection", "close")
			x.fail(w, &httpError{status: http.StatusRequestTimeout, typ: "invalid_request_error", code: "request_timeout",
				msg: fmt.Sprintf("the request body did not arrive in time (nothing for %s, or less than %.0f bytes a second)", s.cfg.BodyIdleTimeout, s.cfg.MinBodyRate)})
		default:
			x.fail(w, badRequest("reading the request body: %v", err))
		}
		return
	}
	// A place among the requests served at once is taken only now that the
	// body is here.
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	default:
		x.fail(w, &httpError{status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "rate_limit_exceeded",
			msg: "the gateway is serving as many requests as it may; try again shortly", retryAfter: time.Second})
		return
	}
	x.body = body
	if herr := x.read(); herr != nil {
		x.fail(w, herr)
		return
	}
	if err := x.serve(ctx, w); err != nil {
		if r.Context().Err() != nil && ctx.Err() != context.DeadlineExceeded {
			x.status, x.err = 499, "the client went away"
			return
		}
		x.fail(w, upstreamError(ctx, err))
	}
}

// fail answers with the error, or, when the answer has begun (a stream),
// ends it with the error as its last event.
func (x *exchange) fail(w http.ResponseWriter, e *httpError) {
	x.err = e.msg
	if x.wrote {
		writeStreamError(w, e)
		return
	}
	x.status = e.status
	e.write(w)
}

// read decodes and checks the request, and resolves its model.
func (x *exchange) read() *httpError {
	if err := json.Unmarshal(x.body, &x.req); err != nil {
		return badRequest("the request body is not a valid chat completion request: %v", err)
	}
	r := &x.req
	if len(r.Messages) == 0 {
		return badRequest("messages must hold at least one message")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool", "function":
		default:
			return badRequest("messages[%d]: unknown role %s (want system, developer, user, assistant or tool)", i, strconv.Quote(m.Role))
		}
		if m.Role == "tool" || m.Role == "function" || len(m.ToolCalls) > 0 {
			x.toolTurns = true
		}
		if m.Role == "tool" && m.ToolCallID == "" {
			return badRequest("messages[%d]: a tool message needs the tool_call_id of the call it answers", i)
		}
	}
	seen := make(map[string]bool, len(r.Tools))
	for i, t := range r.Tools {
		name := t.Function.Name
		if t.Type != "" && t.Type != "function" {
			// Only an upstream with native tools can take it.
			x.otherTool = "tools[" + strconv.Itoa(i) + "]: tools of type " + strconv.Quote(t.Type) + " cannot be taught in the text protocol (only \"function\")"
			continue
		}
		switch {
		case name == "":
			return badRequest("tools[%d]: the function needs a name", i)
		case seen[name]:
			return badRequest("tools[%d]: the function %s is declared twice", i, strconv.Quote(name))
		}
		seen[name] = true
		params := bytes.TrimSpace(t.Function.Parameters)
		if string(params) == "null" {
			params = nil
		}
		if len(params) > 0 && params[0] != '{' {
			return badRequest("tools[%d]: the parameters of %s must be a JSON Schema object", i, strconv.Quote(name))
		}
		x.tools = append(x.tools, ptk.ToolInfo{Name: name, Description: t.Function.Description, Parameters: json.RawMessage(params)})
	}
	c, herr := parseToolChoice(r.ToolChoice, seen)
	if herr != nil {
		return herr
	}
	x.choice = c
	x.name = r.Model
	if x.name == "" {
		x.name = x.s.cfg.DefaultModel
	}
	if x.name == "" {
		return badRequest("the request names no model, and the gateway has no default model")
	}
	up, err := x.s.cfg.Resolve(x.name)
	if err != nil {
		if errors.Is(err, llm.ErrModelNotFound) {
			return &httpError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found", msg: err.Error()}
		}
		return badRequest("model %s: %v", strconv.Quote(x.name), err)
	}
	if up.Name == "" {
		up.Name = x.name
	}
	if up.Model == nil {
		return &httpError{status: http.StatusInternalServerError, typ: "server_error", msg: "the gateway is misconfigured: model " + strconv.Quote(x.name) + " has no Upstream.Model"}
	}
	x.up = up
	return nil
}

// serve answers the request: with the gateway's own tools, in the text
// protocol, natively through the model, or passed through as it came.
func (x *exchange) serve(ctx context.Context, w http.ResponseWriter) error {
	if len(x.s.cfg.Tools) > 0 && len(x.tools) == 0 && !x.toolTurns {
		return x.serveTools(ctx, w)
	}
	// A tool of another type than function is passed through in native
	// and auto modes; an upstream that rejects tools then gets the text
	// protocol's answer (which says it cannot teach such a tool), not its
	// own rejection passed on.
	translate := len(x.tools) > 0 || x.toolTurns || x.otherTool != ""
	switch {
	case x.up.Forward != nil && (!translate || x.up.Mode == agent.ModeNative):
		return x.forward(ctx, w, false)
	case !translate:
		return x.serveModel(ctx, w)
	case x.usePTK():
		return x.servePTK(ctx, w)
	}
	// Native tools, with the calls a model writes as text read too: a server
	// without a tool parser takes the tools and answers in text.
	var err error
	if x.up.Forward != nil {
		err = x.forward(ctx, w, true)
	} else {
		err = x.serveModel(ctx, w)
	}
	if err != nil && !x.wrote && x.up.Mode != agent.ModeNative && errors.Is(err, llm.ErrToolsUnsupported) && ctx.Err() == nil {
		x.s.cfg.NativeTools.Reject(x.up.Model, x.up.Name)
		return x.servePTK(ctx, w)
	}
	return err
}

// usePTK reports whether the model is to be taught the text protocol.
func (x *exchange) usePTK() bool {
	switch x.up.Mode {
	case agent.ModePTK:
		return true
	case agent.ModeNative:
		return false
	}
	return x.s.cfg.NativeTools.Rejected(x.up.Model, x.up.Name)
}

// rejectMemory is how long the gateway remembers that a model rejected
// native tools: an upstream may be upgraded, or its model changed, while the
// gateway runs.
const rejectMemory = time.Hour

// setModel returns body with its "model" set to name.
func setModel(body []byte, name string) ([]byte, error) {
	return setFields(body, obj{"model": marshal(name)})
}

// readStats reads a whole answer's, or a chunk's, usage and new calls.
func (x *exchange) readStats(data []byte) {
	if !bytes.Contains(data, []byte(`"usage"`)) && !bytes.Contains(data, []byte(`"tool_calls"`)) {
		return
	}
	var v struct {
		Choices []struct {
			Message struct {
				ToolCalls []json.RawMessage `json:"tool_calls"`
			} `json:"message"`
			Delta struct {
				ToolCalls []struct {
					ID string `json:"id"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(data, &v) != nil {
		return
	}
	for _, c := range v.Choices {
		x.calls += len(c.Message.ToolCalls)
		for _, d := range c.Delta.ToolCalls {
			if d.ID != "" {
				x.calls++
			}
		}
	}
	x.readUsage(v.Usage)
}

// readUsage reads a usage object, when there is one, for the log line.
func (x *exchange) readUsage(raw json.RawMessage) {
	var u struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	}
	if hasValue(raw) && json.Unmarshal(raw, &u) == nil {
		x.usage = ptk.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	}
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(int(n>>20)) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(int(n>>10)) + " KiB"
	}
	return strconv.Itoa(int(n)) + " bytes"
}
