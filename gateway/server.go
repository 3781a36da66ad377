package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/httpguard"
	"github.com/ptkit/ptk/llm"
	anthropicwire "github.com/ptkit/ptk/llm/anthropic/wire"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/tool"
)

// Defaults of the limits in Config.
const (
	DefaultMaxBodyBytes    = 16 << 20
	DefaultTimeout         = 10 * time.Minute
	DefaultMaxConcurrent   = 64
	DefaultShutdownTimeout = 30 * time.Second
	DefaultBodyIdleTimeout = 10 * time.Second
	DefaultMinBodyRate     = 1024
)

// Config configures a Server.
type Config struct {
	// Resolve says where a model is served: name is the model a request
	// names, or DefaultModel when it names none. An error is answered 400
	// (404 when it wraps llm.ErrModelNotFound).
	Resolve func(name string) (Upstream, error)
	// DefaultModel is the model of a request that names none.
	DefaultModel string
	// Models lists the models GET /v1/models returns. Nil lists
	// DefaultModel alone.
	Models func(ctx context.Context) ([]string, error)
	// ModelMap renames the model a request asks for before Resolve sees
	// it, in every API (ptk serve --model-map).
	ModelMap ModelMap
	// Serves reports whether the gateway serves a model of this name to
	// the agents' APIs (Anthropic Messages and Responses) when ModelMap
	// does not rename it. A name it does not serve (claude-sonnet-4-5,
	// which Claude Code asks for, or a hosted model of the catalog) is
	// served by DefaultModel, never sent on as it is, and the log line says
	// which was asked. Nil serves every name as it is asked.
	Serves func(name string) bool

	// APIKeys are the keys a client must send as "Authorization: Bearer
	// KEY". Empty: no key is asked for.
	APIKeys []string
	// AllowedHosts and AllowedOrigins widen what the server's guard lets
	// in (see package httpguard): a reverse proxy's name, a published
	// address; the origin of a page the operator trusts. The guard refuses
	// what a web page the user opens could send: a Host that does not name
	// the server (DNS rebinding), a body that is not JSON (a cross-site
	// text/plain POST) and an Origin of another site. "*" in AllowedHosts
	// gives up the Host check.
	AllowedHosts, AllowedOrigins []string

	// Tools are run by the gateway itself, for requests that declare no
	// tools of their own: the model calls them, the gateway runs them and
	// loops, and the client sees only the answer. Approver decides on the
	// calls of tools that are not read-only (nil denies them).
	Tools    []ptk.Tool
	Approver tool.Approver
	// MaxIterations caps the model calls of a request served with Tools
	// (default agent.DefaultMaxIterations).
	MaxIterations int

	// MaxBodyBytes caps a request's body (default DefaultMaxBodyBytes);
	// past it the answer is 413.
	MaxBodyBytes int64
	// Timeout caps the time a request may take, upstream calls included
	// (default DefaultTimeout); past it the answer is 504.
	Timeout time.Duration
	// MaxConcurrent caps the chat requests served at once (default
	// DefaultMaxConcurrent); past it the answer is 429 with Retry-After. A
	// request takes its place once its body has arrived, so clients that
	// send their bodies slowly cannot lock the others out.
	MaxConcurrent int
	// BodyIdleTimeout is how long a request's body may send nothing
	// (default DefaultBodyIdleTimeout), and MinBodyRate the bytes per
	// second it must average after that (default DefaultMinBodyRate); a
	// slower body is answered 408. Timeout covers the body too.
	BodyIdleTimeout time.Duration
	MinBodyRate     float64
	// KeepAlive is how often a stream of the Anthropic Messages or
	// Responses API says it is alive while the model has nothing to send
	// (an Anthropic ping event, an event-stream comment), beginning the
	// stream if need be (default DefaultKeepAlive; below zero: never).
	KeepAlive time.Duration
	// ShutdownTimeout is how long Serve waits for requests in flight when
	// its context ends (default DefaultShutdownTimeout).
	ShutdownTimeout time.Duration

	// Conversations keeps the conversations of the Responses API's stored
	// responses, for a later request's previous_response_id: the trace
	// store (trace.Store), so that every replica on one PostgreSQL finds
	// them. Nil keeps them in the server's memory, the oldest forgotten
	// past DefaultMemoryResponses.
	Conversations agent.Store

	// Logger receives one line per request (default slog.Default()).
	Logger *slog.Logger

	// NativeTools remembers the models that rejected native tools, for
	// upstreams in auto mode (default: the server's own, which forgets a
	// rejection after an hour, since an upstream may be upgraded while the
	// gateway runs). The caller may share one with its other users.
	NativeTools *llm.NativeTools

	// Observe, when set, is called as each request of the model APIs
	// starts and returns what sees it (nil: nothing), the agent run of a
	// request served with Tools, and its end: a trace recorder. Unset, a
	// request costs nothing more.
	Observe func() Observer
}

// Upstream is where one model is served.
type Upstream struct {
	// Model answers the requests the gateway translates: in the text
	// protocol, and natively when Forward is nil.
	Model llm.Model
	// Name is the model's name upstream, sent in every request.
	Name string
	// Mode is how the model calls tools: agent.ModeNative passes tools
	// through, agent.ModePTK teaches the model the text protocol, and
	// agent.ModeAuto (or empty) passes them through until the upstream
	// rejects them, then uses the protocol for that model from then on.
	Mode agent.Mode
	// Forward, when not nil, is an OpenAI-compatible endpoint: a request
	// the gateway does not translate is sent to it as it came (only its
	// model named again), and its answer is copied back as it is.
	Forward Forwarder
}

// Forwarder sends a Chat Completions request as it is; *openai.Client is
// one.
type Forwarder interface {
	Forward(ctx context.Context, body []byte, stream bool) (*http.Response, error)
}

// Server is the gateway: an http.Handler that serves
//
//	POST /v1/chat/completions          OpenAI's Chat Completions
//	POST /v1/messages                  Anthropic's Messages (Claude Code)
//	POST /v1/messages/count_tokens     an estimate of a Messages prompt's tokens
//	POST /v1/responses                 OpenAI's Responses (Codex)
//	GET  /v1/models, /v1/models/{id}   in OpenAI's or Anthropic's shape
//	GET  /healthz
//
// Every request passes httpguard's checks first (see
// Config.AllowedHosts), so that web pages the user opens cannot use it. It
// is safe for concurrent use.
type Server struct {
	cfg     Config
	sem     chan struct{}
	handler http.Handler
	memory  *memoryResponses
	started time.Time
	// ptk is the text protocol's formatter, with the system prompts the
	// server wrote lately; parsers the parsers it made lately, by their
	// tools.
	ptk     cachedPTK
	parsers *protocol.ParserCache
}

var _ http.Handler = (*Server)(nil)

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Resolve == nil {
		return nil, errors.New("gateway: Config.Resolve is nil")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = agent.DefaultMaxIterations
	}
	if cfg.NativeTools == nil {
		cfg.NativeTools = &llm.NativeTools{TTL: rejectMemory}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BodyIdleTimeout <= 0 {
		cfg.BodyIdleTimeout = DefaultBodyIdleTimeout
	}
	if cfg.MinBodyRate <= 0 {
		cfg.MinBodyRate = DefaultMinBodyRate
	}
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	s := &Server{cfg: cfg, sem: make(chan struct{}, cfg.MaxConcurrent), memory: &memoryResponses{max: DefaultMemoryResponses}, started: time.Now(),
		ptk: cachedPTK{cache: &promptCache{maxBytes: promptCacheBytes}}, parsers: protocol.NewParserCache(0)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	mux.HandleFunc("POST /v1/responses", s.responsesEndpoint)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /v1/models/{id...}", s.model)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	guard := httpguard.Guard(httpguard.Options{Hosts: cfg.AllowedHosts, Origins: cfg.AllowedOrigins})
	s.handler = LogRequests(cfg.Logger)(guard(RequireKey(cfg.APIKeys)(mux)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		msg := "no route " + r.Method + " " + r.URL.Path + ": the gateway serves POST /v1/chat/completions, POST /v1/messages, POST /v1/messages/count_tokens, POST /v1/responses, GET /v1/models and GET /healthz"
		if anthropicPath(r) {
			writeJSON(w, http.StatusNotFound, anthropicwire.NewError(http.StatusNotFound, msg))
			return
		}
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", msg)
	})
	return s, nil
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Serve serves on ln until ctx ends, then stops taking connections and
// waits up to ShutdownTimeout for the requests in flight, streams included,
// before it closes what is left. It returns nil after a clean shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.cfg.BodyIdleTimeout,
		IdleTimeout:       2 * time.Minute,
		// Requests in flight keep their context when ctx ends: they drain.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		hs.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// models serves GET /v1/models in the shape of the client's API:
// Anthropic's for a request that says its anthropic-version, OpenAI's
// otherwise.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	names, ok := s.modelNames(w, r)
	if !ok {
		return
	}
	if anthropicPath(r) {
		out := anthropicwire.ModelList{Data: []anthropicwire.Model{}}
		for _, n := range names {
			out.Data = append(out.Data, s.anthropicModel(n))
		}
		if len(names) > 0 {
			out.FirstID, out.LastID = &names[0], &names[len(names)-1]
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	out := struct {
		Object string        `json:"object"`
		Data   []openaiModel `json:"data"`
	}{Object: "list", Data: []openaiModel{}}
	for _, n := range names {
		out.Data = append(out.Data, openaiModel{ID: n, Object: "model", OwnedBy: "ptk"})
	}
	writeJSON(w, http.StatusOK, out)
}

// model serves GET /v1/models/{id}: a model the gateway lists, or one it
// serves under that name.
func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	names, ok := s.modelNames(w, r)
	if !ok {
		return
	}
	if !slices.Contains(names, id) && (s.cfg.Serves == nil || !s.cfg.Serves(id)) {
		if _, mapped := s.cfg.ModelMap.Map(id); !mapped {
			e := &httpError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found", msg: "the gateway does not serve the model " + strconv.Quote(id)}
			if anthropicPath(r) {
				writeJSON(w, e.status, anthropicwire.NewError(e.status, e.msg))
				return
			}
			e.write(w)
			return
		}
	}
	if anthropicPath(r) {
		writeJSON(w, http.StatusOK, s.anthropicModel(id))
		return
	}
	writeJSON(w, http.StatusOK, openaiModel{ID: id, Object: "model", OwnedBy: "ptk"})
}

// modelNames lists the models; on failure it answers 502 itself.
func (s *Server) modelNames(w http.ResponseWriter, r *http.Request) ([]string, bool) {
	names := []string{s.cfg.DefaultModel}
	if s.cfg.Models != nil {
		var err error
		if names, err = s.cfg.Models(r.Context()); err != nil {
			msg := "listing the models: " + err.Error()
			if anthropicPath(r) {
				writeJSON(w, http.StatusBadGateway, anthropicwire.NewError(http.StatusBadGateway, msg))
			} else {
				writeError(w, http.StatusBadGateway, "upstream_error", "", msg)
			}
			return nil, false
		}
	}
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "" }), true
}

// openaiModel is a model in OpenAI's shape.
type openaiModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// anthropicModel is a model in Anthropic's shape; it was "created" when
// the gateway started.
func (s *Server) anthropicModel(id string) anthropicwire.Model {
	return anthropicwire.Model{Type: "model", ID: id, DisplayName: id, CreatedAt: s.started.UTC().Format(time.RFC3339)}
}

// writeJSON writes v as the JSON answer, HTML characters left as they are.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b := getJSONBuf()
	encodeJSON(b, nil, v)
	w.Write(b.Bytes())
	putJSONBuf(b)
}

// writeError writes an error answer in the OpenAI shape.
func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	var e apiError
	e.Error.Message, e.Error.Type = msg, typ
	if code != "" {
		e.Error.Code = &code
	}
	writeJSON(w, status, e)
}

// httpError is an error answer: its status and what it says.
type httpError struct {
	status     int
	typ, code  string
	msg        string
	retryAfter time.Duration
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) *httpError {
	return &httpError{status: http.StatusBadRequest, typ: "invalid_request_error", msg: fmt.Sprintf(format, args...)}
}

// upstreamError turns a failed upstream call into the answer the client
// gets: a request the upstream found wrong keeps its 4xx status and
// message, a rate limit its 429 and Retry-After, an expired request is 504,
// and any other failure is 502 with the upstream's message.
func upstreamError(ctx context.Context, err error) *httpError {
	var he *httpError
	if errors.As(err, &he) {
		return he
	}
	if ctx.Err() == context.DeadlineExceeded {
		return &httpError{status: http.StatusGatewayTimeout, typ: "timeout", msg: "the request took longer than the gateway's time limit: " + err.Error()}
	}
	var le *llm.Error
	if !errors.As(err, &le) {
		return &httpError{status: http.StatusBadGateway, typ: "upstream_error", msg: "upstream: " + err.Error()}
	}
	switch {
	case errors.Is(err, llm.ErrRateLimited):
		return &httpError{status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "rate_limit_exceeded", msg: "upstream: " + le.Error(), retryAfter: le.RetryAfter}
	case errors.Is(err, llm.ErrModelNotFound):
		return &httpError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found", msg: "upstream: " + le.Error()}
	case (errors.Is(err, llm.ErrBadRequest) || errors.Is(err, llm.ErrToolsUnsupported) || errors.Is(err, llm.ErrContextLength)) && le.Status >= 400 && le.Status < 500:
		return &httpError{status: le.Status, typ: "invalid_request_error", msg: "upstream: " + le.Error()}
	}
	return &httpError{status: http.StatusBadGateway, typ: "upstream_error", msg: "upstream: " + le.Error()}
}

func (e *httpError) write(w http.ResponseWriter) {
	e.retryHeader(w)
	writeError(w, e.status, e.typ, e.code, e.msg)
}

// retryHeader sets Retry-After on a 429 answer.
func (e *httpError) retryHeader(w http.ResponseWriter) {
	if e.status == http.StatusTooManyRequests {
		secs := max(1, int((e.retryAfter+time.Second-1)/time.Second))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
}
