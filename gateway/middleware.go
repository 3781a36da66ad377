package gateway

import (
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	anthropicwire "github.com/ptkit/ptk/llm/anthropic/wire"
)

// Middleware wraps a handler, the way the gateway's key check and request
// log wrap its routes: each is testable alone and reusable by a program that
// embeds the gateway behind its own mux.
type Middleware func(http.Handler) http.Handler

// RequireKey answers 401 to a request that does not carry one of keys as
// "Authorization: Bearer KEY" or, as Anthropic's clients send it,
// "x-api-key: KEY" (health checks excepted). Keys are compared by their
// SHA-256, so the time taken says nothing about them. The answer has the
// shape of the API asked: Anthropic's for /v1/messages, OpenAI's
// otherwise. No keys: every request passes.
func RequireKey(keys []string) Middleware {
	sums := make(map[[32]byte]bool, len(keys))
	for _, k := range keys {
		sums[sha256.Sum256([]byte(k))] = true
	}
	return func(next http.Handler) http.Handler {
		if len(sums) == 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/healthz" && !sums[sha256.Sum256([]byte(clientKey(r)))] {
				const msg = "missing or wrong API key: send it as \"Authorization: Bearer KEY\" or \"x-api-key: KEY\""
				if anthropicPath(r) {
					writeJSON(w, http.StatusUnauthorized, anthropicwire.NewError(http.StatusUnauthorized, msg))
					return
				}
				writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", msg)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// clientKey is the key a client sent: its x-api-key header, else its
// Bearer token.
func clientKey(r *http.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	return bearer(r)
}

// anthropicPath reports whether r is a request of Anthropic's API, whose
// errors have Anthropic's shape: /v1/messages and what is under it, or a
// request that says its anthropic-version.
func anthropicPath(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/v1/messages") || r.Header.Get("Anthropic-Version") != ""
}

// bearer is the token of r's "Authorization: Bearer" header, "" when none.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return ""
	}
	return h[len(prefix):]
}

// LogRequests logs one line per request to log: method, path, status and
// latency, and what the handler adds with Annotate (a chat completion's
// model, mode, stream, calls, tokens and error). Health checks are logged at
// debug level, since probes make many.
func LogRequests(log *slog.Logger) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			lw := &logWriter{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(lw, r)
			level := slog.LevelInfo
			if r.URL.Path == "/healthz" {
				level = slog.LevelDebug
			}
			attrs := append(lw.line[:0], slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", lw.status))
			attrs = append(attrs, lw.attrs...)
			attrs = append(attrs, slog.Float64("latency_ms", float64(time.Since(start).Microseconds())/1000))
			if lw.err != "" || len(lw.attrs) > 0 {
				attrs = append(attrs, slog.String("error", lw.err))
			}
			log.LogAttrs(r.Context(), level, "request", attrs...)
		})
	}
}

// logWriter records what the request log says of an answer.
type logWriter struct {
	http.ResponseWriter
	status int
	attrs  []slog.Attr
	err    string
	// extra and line hold the handler's attributes and the line's, so
	// that a request's log costs no allocation of its own.
	extra [8]slog.Attr
	line  [16]slog.Attr
}

func (w *logWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController find the connection's abilities
// (flushing, deadlines) through the log.
func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// responseUnwrapper is a ResponseWriter that wraps another, as
// http.ResponseController expects of middleware.
type responseUnwrapper interface {
	Unwrap() http.ResponseWriter
}

// Annotate adds attributes to the request's log line, and sets its status
// and error as the handler saw them (a client that went away is 499; a
// stream's error comes after its 200), when w goes through LogRequests.
func Annotate(w http.ResponseWriter, status int, errMsg string, attrs ...slog.Attr) {
	for range 16 {
		if lw, ok := w.(*logWriter); ok {
			lw.attrs = append(lw.extra[:0], attrs...)
			lw.err = errMsg
			if status != 0 {
				lw.status = status
			}
			return
		}
		u, ok := w.(responseUnwrapper)
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// bodyReader reads a request body with deadlines: each read must make
// progress within idle, the body must arrive at no less than minRate bytes
// per second once idle has passed, and all of it before the request's
// deadline. A client that trickles its body cannot hold the gateway.
type bodyReader struct {
	r        io.Reader
	rc       *http.ResponseController
	start    time.Time
	deadline time.Time
	idle     time.Duration
	minRate  float64
	n        int64
}

// errSlowBody is the error of a body that arrives too slowly.
var errSlowBody = errors.New("the request body arrives too slowly")

func (b *bodyReader) Read(p []byte) (int, error) {
	now := time.Now()
	if el := now.Sub(b.start); el > b.idle && float64(b.n) < b.minRate*(el-b.idle).Seconds() {
		return 0, errSlowBody
	}
	d := now.Add(b.idle)
	if !b.deadline.IsZero() && b.deadline.Before(d) {
		d = b.deadline
	}
	b.rc.SetReadDeadline(d) // an error: the connection has no deadlines (a test recorder); the rate check still holds
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = errSlowBody
	}
	return n, err
}

// done clears the read deadline, so that a long answer is not cut.
func (b *bodyReader) done() { b.rc.SetReadDeadline(time.Time{}) }

// end ends the body's reading with err, the error that ended it (nil: read
// whole): a whole body's deadline is cleared; a failed one's moves to now,
// so that the connection's later reads fail at once — net/http reads what
// is left of a small body after the handler, to reuse the connection, and
// would otherwise wait for a client that stopped sending.
func (b *bodyReader) end(err error) {
	if err == nil || err == io.EOF {
		b.done()
		return
	}
	b.rc.SetReadDeadline(time.Now())
}

// PaceBodies holds every request body to a pace, as the gateway holds its
// own: each read must make progress within idle, and the body must average
// minRate bytes a second once idle has passed (zero values: the defaults).
// A read that misses the pace fails, and the connection with it, so a
// client that trickles a body cannot hold a connection open. For servers
// whose handlers read bodies themselves (ptk mcp --addr, through the MCP
// SDK); the deadline is lifted once the body has been read, so that a long
// answer is not cut.
func PaceBodies(idle time.Duration, minRate float64) Middleware {
	if idle <= 0 {
		idle = DefaultBodyIdleTimeout
	}
	if minRate <= 0 {
		minRate = DefaultMinBodyRate
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body != nil && r.Body != http.NoBody {
				deadline, _ := r.Context().Deadline()
				r.Body = &pacedBody{c: r.Body, b: bodyReader{r: r.Body, rc: http.NewResponseController(w),
					start: time.Now(), deadline: deadline, idle: idle, minRate: minRate}}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// pacedBody is a request body read through a bodyReader, whose deadline it
// lifts when the body ends (its end, an error, or Close).
type pacedBody struct {
	c     io.Closer
	b     bodyReader
	err   error // what ended the body: io.EOF, the pace missed, or Close
	ended bool
}

// errBodyClosed is the error of a read after the body was closed.
var errBodyClosed = errors.New("http: invalid Read on closed Body")

func (p *pacedBody) Read(buf []byte) (int, error) {
	if p.ended {
		return 0, p.err // a body that missed its pace stays failed, never an early EOF
	}
	n, err := p.b.Read(buf)
	if err != nil {
		p.err = err
		p.end()
	}
	return n, err
}

// Close closes the body (net/http reads what is left of a small one, still
// under the pace's deadline), then lifts the deadline unless a read failed.
func (p *pacedBody) Close() error {
	err := p.c.Close()
	if p.err == nil {
		p.err = io.EOF // the deadline is lifted; later reads say closed
		p.end()
		p.err = errBodyClosed
	}
	p.end()
	return err
}

// end lifts the deadline of a body read to its end; a body that failed
// keeps its connection's reads failing (the deadline moved to now), so that
// what net/http reads after the handler to reuse the connection does not
// wait for a client that stopped sending.
func (p *pacedBody) end() {
	if p.ended {
		return
	}
	p.ended = true
	p.b.end(p.err)
}
