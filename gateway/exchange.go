package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
)

// The gateway serves three APIs over one model turn: Chat Completions
// (chat.go), Anthropic Messages (messages.go) and OpenAI Responses
// (responses.go). Each is an api: it reads its request into an exchange,
// which serves it the same way whichever API it came in (ptk.go, tools.go),
// and writes the answer through its own responder.

// An api is one of the wire formats the gateway serves.
type api interface {
	// read decodes and checks the body, and sets what the exchange serves
	// by: the model asked for, the tools, the tool choice, stream and
	// single.
	read(x *exchange, body []byte) *httpError
	// request returns the request for the model without its messages: the
	// sampling settings and the fields passed on. native says whether the
	// model gets native tools.
	request(x *exchange, native bool) (llm.Request, *httpError)
	// conversation returns the request's conversation: the text of its
	// system messages, wherever they are, as instructions, and the other
	// turns.
	conversation(x *exchange) (instructions string, msgs []ptk.Message, herr *httpError)
	// respond returns the writer of the answer.
	respond(x *exchange, w http.ResponseWriter) responder
	// writeError answers with an error, in the API's shape; when the
	// answer has begun (a stream), it ends it with the error instead.
	writeError(x *exchange, w http.ResponseWriter, e *httpError)
}

// A forwarder is an api whose requests can pass through to an
// OpenAI-compatible upstream as they came (Chat Completions').
type forwarder interface {
	forward(x *exchange, ctx context.Context, w http.ResponseWriter, read bool) error
}

// A responder writes one answer in its API's shape: whole, or as a stream
// of events when the client asked for one. Text, reasoning and calls are
// given to it as they come; finish ends the answer.
type responder interface {
	// streaming reports whether the answer is a stream.
	streaming() bool
	addText(s string)
	addReasoning(s string)
	// addCall adds a complete call: read from text, or native and checked.
	addCall(c ptk.Call)
	// addCallDelta passes on a piece of a native call in a stream, as it
	// came: the first piece of a call carries its id and name.
	addCallDelta(index int, id, name, args string)
	// separate makes the next text, if there was text before, start a new
	// paragraph: the text of a second reply to the same request.
	separate()
	// flush sends what a stream has written since it last did: the
	// exchange calls it before it waits (for the model, for a tool), so
	// that the events of one step go out in one write. finish flushes
	// itself.
	flush()
	// hasText reports whether text was given.
	hasText() bool
	// callCount is the number of calls given.
	callCount() int
	// finish ends the answer: upstream is the model's finish reason as its
	// provider said it ("stop", "length", "end_turn"...), u the usage of
	// the whole request.
	finish(upstream string, u ptk.Usage)
	// stop ends what the responder does on its own (a stream's
	// keep-alive): nothing is written once it returns. The exchange calls
	// it when the request ends, however it ends.
	stop()
}

// exchange is one request in flight, whichever its API, and what the log
// line says of it.
type exchange struct {
	s   *Server
	api api
	up  Upstream
	// asked is the model the request named; name the one served (asked,
	// or what Config.ModelMap or the default made of it).
	asked, name string
	tools       []ptk.ToolInfo
	// parser reads calls of tools (toolsParser), once looked up.
	parser    *protocol.Parser
	parserErr error
	// toolTurns: the conversation holds calls or tool results.
	toolTurns bool
	choice    toolChoice
	// otherTool says why a declared tool cannot be taught in the text
	// protocol, if one cannot; choices is the number of choices asked for
	// (Chat Completions' n).
	otherTool string
	choices   int
	// stream: the client asked for a stream; single: for one call at most.
	stream, single bool

	mode   string
	calls  int
	usage  ptk.Usage
	status int
	err    string
	// wrote: the answer has begun; an error can no longer change its
	// status. A stream's keep-alive may begin it from another goroutine.
	wrote atomic.Bool
	// out is the answer's writer, once there is one.
	out responder
	// obs sees the request (Config.Observe), when set.
	obs Observer
}

// respond returns the writer of the answer, and keeps it to stop it when
// the request ends. A writer made before, for an answer that was given up
// before it began (an upstream that rejected native tools), is stopped
// first, so that its keep-alive cannot begin a second stream.
func (x *exchange) respond(w http.ResponseWriter) responder {
	if x.out != nil {
		x.out.stop()
	}
	x.out = x.api.respond(x, w)
	return x.out
}

// end sends the last of a stream. With no Observer it is left in the
// connection's buffer: as the handler returns, net/http writes it with the
// stream's end (its last, empty chunk) in one write, as it does a whole
// answer, where a flush here made that two writes and two reads for the
// client, on the path of every streamed answer. An Observer's Done, which
// comes before the handler returns, may be slow (a trace written to a
// store): the stream's last events are flushed before it.
func (x *exchange) end(rc *http.ResponseController) {
	if x.obs != nil {
		rc.Flush()
	}
}

// handle serves one request of the API a: the body is read within the
// gateway's limits, a place among the requests served at once is taken,
// and the request is read and served. agentAPI says that a model the
// gateway does not serve is served by the default one (Config.Serves).
func (s *Server) handle(w http.ResponseWriter, r *http.Request, a api, agentAPI bool) {
	x := &exchange{s: s, api: a, status: http.StatusOK}
	if s.cfg.Observe != nil {
		x.obs = s.cfg.Observe()
	}
	defer func() {
		if x.out != nil {
			x.out.stop()
		}
		if x.obs != nil {
			x.obs.Done(x.exchange(r))
		}
		attrs := []slog.Attr{slog.String("model", x.name), slog.String("mode", x.mode), slog.Bool("stream", x.stream),
			slog.Int("calls", x.calls), slog.Int("prompt_tokens", x.usage.PromptTokens),
			slog.Int("completion_tokens", x.usage.CompletionTokens)}
		if x.asked != "" && x.asked != x.name {
			attrs = append(attrs, slog.String("asked", x.asked))
		}
		Annotate(w, x.status, x.err, attrs...)
	}()
	// The request's time counts from its start: reading the body too.
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	body, herr := s.readBody(ctx, w, r)
	if herr != nil {
		x.fail(w, herr)
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
	if herr := a.read(x, body); herr != nil {
		x.fail(w, herr)
		return
	}
	if herr := x.resolve(agentAPI); herr != nil {
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

// readBody reads a request's body with the gateway's limits: its size, and
// the pace at which it must arrive.
func (s *Server) readBody(ctx context.Context, w http.ResponseWriter, r *http.Request) ([]byte, *httpError) {
	deadline, _ := ctx.Deadline()
	br := &bodyReader{r: http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), rc: http.NewResponseController(w),
		start: time.Now(), deadline: deadline, idle: s.cfg.BodyIdleTimeout, minRate: s.cfg.MinBodyRate}
	body, err := readAll(br, r.ContentLength, s.cfg.MaxBodyBytes)
	br.end(err)
	if err == nil {
		return body, nil
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, &httpError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error",
			msg: "the request body is larger than the gateway's limit of " + byteSize(tooBig.Limit)}
	case errors.Is(err, errSlowBody):
		w.Header().Set("Connection", "close")
		return nil, &httpError{status: http.StatusRequestTimeout, typ: "invalid_request_error", code: "request_timeout",
			msg: fmt.Sprintf("the request body did not arrive in time (nothing for %s, or less than %.0f bytes a second)", s.cfg.BodyIdleTimeout, s.cfg.MinBodyRate)}
	}
	return nil, badRequest("reading the request body: %v", err)
}

// bodyHint caps the room made at once for a body from its Content-Length:
// a client may declare more than it sends.
const bodyHint = 1 << 20

// readAll reads r to its end as io.ReadAll does, first making room for the
// body its Content-Length declares (up to the limit, and bodyHint): a
// 2.5 KB request took io.ReadAll's 512-byte start three reallocations and
// as many reads, each of which sets the connection's deadline.
func readAll(r io.Reader, declared, limit int64) ([]byte, error) {
	n := int64(512)
	if declared > 0 {
		// One byte more, so that the read that finds the end needs no room.
		n = min(declared, limit, bodyHint) + 1
	}
	b := make([]byte, 0, n)
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// fail answers with the error, or, when the answer has begun (a stream),
// ends it with the error as its last event.
func (x *exchange) fail(w http.ResponseWriter, e *httpError) {
	x.err = e.msg
	if !x.wrote.Load() {
		x.status = e.status
	}
	if x.api == nil {
		e.write(w)
		return
	}
	x.api.writeError(x, w, e)
}

// resolve finds where the model is served: the model the request names
// (the default one when it names none), renamed by Config.ModelMap; for the
// agents' APIs, the default one in place of a model the gateway does not
// serve (Config.Serves), such as the claude-* names Claude Code asks for.
func (x *exchange) resolve(agentAPI bool) *httpError {
	cfg := &x.s.cfg
	name := x.asked
	if name == "" {
		name = cfg.DefaultModel
	}
	if to, ok := cfg.ModelMap.Map(name); ok {
		name = to
	} else if agentAPI && name != cfg.DefaultModel && cfg.Serves != nil && !cfg.Serves(name) {
		if cfg.DefaultModel == "" {
			return &httpError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found",
				msg: "the gateway does not serve the model " + strconv.Quote(name) + ", and has no default model: map it to one (--model-map) or set one (--model)"}
		}
		name = cfg.DefaultModel
	}
	x.name = name
	if x.name == "" {
		return badRequest("the request names no model, and the gateway has no default model")
	}
	up, err := cfg.Resolve(x.name)
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
	fw, canForward := x.api.(forwarder)
	canForward = canForward && x.up.Forward != nil
	switch {
	case canForward && (!translate || x.up.Mode == agent.ModeNative):
		return fw.forward(x, ctx, w, false)
	case !translate:
		return x.serveModel(ctx, w)
	case x.usePTK():
		return x.servePTK(ctx, w)
	}
	// Native tools, with the calls a model writes as text read too: a server
	// without a tool parser takes the tools and answers in text.
	var err error
	if canForward {
		err = fw.forward(x, ctx, w, true)
	} else {
		err = x.serveModel(ctx, w)
	}
	if err != nil && !x.wrote.Load() && x.up.Mode != agent.ModeNative && errors.Is(err, llm.ErrToolsUnsupported) && ctx.Err() == nil {
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

// translatable reports what in the request the gateway cannot translate
// for the model (it passes through only): a tool that is not a function,
// more than one choice.
func (x *exchange) translatable() *httpError {
	if x.otherTool != "" {
		return badRequest("%s", x.otherTool)
	}
	if x.choices > 1 {
		return badRequest("n = %d: the gateway asks the model for one choice here; leave n out or set it to 1", x.choices)
	}
	return nil
}
