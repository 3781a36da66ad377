package providertest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/splitread"
	"github.com/ptkit/ptk/llm"
)

// Provider is one provider's client as the conformance suite ([Run]) tests
// it, with the provider's own fixtures: what every provider must do is
// written once, in the suite; what its server says is in its fixtures.
type Provider struct {
	// Route is the pattern of the requests the client makes, whole and
	// streamed ("POST /v1/chat/completions").
	Route string
	// New returns a client of the API at baseURL with the options.
	New func(baseURL string, o Options) llm.Streamer
	// Path is what a server's URL takes to be the API's base URL ("/v1").
	Path string
	// Request is the request the suite sends: one user message.
	Request llm.Request
	// BadBaseURL is a base URL without its scheme, as users get it wrong.
	BadBaseURL string

	// Generate are whole answers (in testdata/GenerateDir, "generate" by
	// default): text, reasoning, native calls, usage. The first is text.
	Generate    []Case
	GenerateDir string
	// Stream are streams (in testdata/StreamDir, "stream" by default) and
	// the answers they collect into. The first is text.
	Stream    []Case
	StreamDir string
	// ReadStream, when set, reads a stream as the client does, without
	// HTTP; otherwise streams split in every way are sent over HTTP.
	ReadStream func(io.Reader) (*llm.Response, error)
	// EverySplit: ReadStream also gets each stream split in two at every
	// offset (slow under -race for many long streams; Split does it over
	// HTTP for one).
	EverySplit bool
	// Split is the Stream case sent in two writes split at every offset.
	Split int
	// WholeForStream is the Generate case a server that ignores "stream"
	// answers with; it must collect into the same answer streamed. -1: the
	// API streams from another endpoint, and no server does that.
	WholeForStream int
	// Head is the start of Stream[0], whose text is HeadText: what a
	// server sends before it hangs, for cancellation.
	Head     []byte
	HeadText string

	// Errors are failed answers and how they are classified; at least one
	// must be ErrToolsUnsupported, unless the client RejectsTools.
	Errors []ErrorCase
	// RejectsTools: the client takes no tool definitions, and fails a
	// request that has them with ErrToolsUnsupported before sending it.
	RejectsTools bool
	// StreamErrors are streams that fail.
	StreamErrors []StreamErrorCase
	// Retries are the provider's failures that are retried or not; the
	// suite adds broken connections and answers cut short.
	Retries []RetryCase
	// Retried is a failure that is retried (a 5xx).
	Retried http.HandlerFunc
	// RetriedBeforeFirstChunk are the first answers, by name, after which a
	// stream is made again (nothing has been given to the caller yet).
	RetriedBeforeFirstChunk map[string]http.HandlerFunc
}

// Options are the client settings the suite needs.
type Options struct {
	// NoRetries turns retries off.
	NoRetries bool
	// Backoff is the pause before the first retry, doubled up to 5 times
	// it; 0 is 1ms.
	Backoff time.Duration
	// HTTPClient, when set, makes the requests.
	HTTPClient *http.Client
}

// Pause returns the first pause and its cap: Backoff and 5 × Backoff.
func (o Options) Pause() (first, limit time.Duration) {
	b := o.Backoff
	if b == 0 {
		b = time.Millisecond
	}
	return b, 5 * b
}

// Case is an answer in a fixture file and the Response it reads as.
type Case struct {
	File string
	Want *llm.Response
}

// ErrorCase is a failed answer and the error it must give.
type ErrorCase struct {
	Name   string
	Status int
	Header http.Header
	Body   string
	Kind   error
	// Status200 is the status the error reports for a 200 answer that
	// holds an error.
	Status200 int
	Msg       string
	Retry     time.Duration
}

// StreamErrorCase is a stream that fails, what arrived before, and how
// many requests it takes.
type StreamErrorCase struct {
	Name     string
	H        http.HandlerFunc
	Kind     error
	Msg      string
	Want     *llm.Response
	Requests int32
	// Status, when not nil, is the status the error must report.
	Status *int
}

// RetryCase is a server's behaviour and how the client's call ends.
type RetryCase struct {
	Name string
	// H is the server's handler; Ok is an answer that succeeds.
	H        func(ok http.HandlerFunc) http.HandlerFunc
	Kind     error // nil: success
	Requests int32
	MinTime  time.Duration
}

// Run runs the conformance suite over p.
func Run(t *testing.T, p Provider) {
	s := &suite{p: p}
	for _, c := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"Generate", s.generate},
		{"Stream", s.stream},
		{"StreamArrival", s.streamArrival},
		{"StreamSplitOverHTTP", s.streamSplit},
		{"StreamJSONAnswer", s.streamJSON},
		{"Errors", s.errors},
		{"LongErrorBody", s.longErrorBody},
		{"StreamErrors", s.streamErrors},
		{"Retries", s.retries},
		{"StreamRetriesBeforeTheFirstChunk", s.streamRetries},
		{"NoRetryAfterCancel", s.noRetryAfterCancel},
		{"NoRetryPastDeadline", s.noRetryPastDeadline},
		{"CanceledBeforeTheCall", s.canceledBeforeTheCall},
		{"StreamCancel", s.streamCancel},
		{"StreamBreak", s.streamBreak},
		{"StreamDeadline", s.streamDeadline},
		{"ConnectionRefused", s.connectionRefused},
		{"BadBaseURL", s.badBaseURL},
		{"InvalidParameters", s.invalidParameters},
		{"ConcurrentUse", s.concurrentUse},
		{"WithHTTPClient", s.withHTTPClient},
	} {
		t.Run(c.name, c.f)
	}
}

type suite struct{ p Provider }

// serve starts a server that answers with h and returns a client of it and
// the count of requests.
func (s *suite) serve(t *testing.T, h http.HandlerFunc, o Options) (llm.Streamer, *atomic.Int32) {
	t.Helper()
	url, n := Serve(t, s.p.Route, h)
	return s.p.New(url+s.p.Path, o), n
}

// whole and events read the fixture files of whole answers and of streams.
func (s *suite) whole(t *testing.T, file string) []byte {
	return Testdata(t, filepath.Join(cmp.Or(s.p.GenerateDir, "generate"), file))
}

func (s *suite) events(t *testing.T, file string) []byte {
	return Testdata(t, filepath.Join(cmp.Or(s.p.StreamDir, "stream"), file))
}

// ok answers with the first whole answer.
func (s *suite) ok(t *testing.T) http.HandlerFunc {
	return Reply(http.StatusOK, string(s.whole(t, s.p.Generate[0].File)))
}

func (s *suite) generate(t *testing.T) {
	for _, tt := range s.p.Generate {
		t.Run(tt.File, func(t *testing.T) {
			c, n := s.serve(t, Reply(http.StatusOK, string(s.whole(t, tt.File))), Options{})
			got, err := c.Generate(t.Context(), s.p.Request)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if n.Load() != 1 {
				t.Errorf("%d requests, want 1", n.Load())
			}
		})
	}
}

func (s *suite) stream(t *testing.T) {
	for _, tt := range s.p.Stream {
		t.Run(tt.File, func(t *testing.T) {
			c, n := s.serve(t, SSE(s.events(t, tt.File)), Options{})
			got, err := llm.Collect(c.Stream(t.Context(), s.p.Request))
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if n.Load() != 1 {
				t.Errorf("%d requests, want 1", n.Load())
			}
		})
	}
}

// streamArrival reads each stream whole, a byte at a time, 1 to 3 bytes at
// a time and (EverySplit) split in two at every offset: the answer is the
// same.
func (s *suite) streamArrival(t *testing.T) {
	for _, tt := range s.p.Stream {
		t.Run(tt.File, func(t *testing.T) {
			t.Parallel()
			read := s.p.ReadStream
			if read == nil {
				read = s.overHTTP(t)
			}
			for how, r := range splitread.Readers(s.events(t, tt.File), s.p.EverySplit) {
				got, err := read(r())
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				if diff := gocmp.Diff(tt.Want, got); diff != "" {
					t.Fatalf("%s: response (-want +got):\n%s", how, diff)
				}
			}
		})
	}
}

// overHTTP returns a ReadStream that has a server send what it reads, as
// it reads it.
func (s *suite) overHTTP(t *testing.T) func(io.Reader) (*llm.Response, error) {
	var next atomic.Pointer[io.Reader] // the readers are of several types
	c, _ := s.serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		in := *next.Load()
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
			if err != nil {
				return
			}
		}
	}, Options{})
	return func(r io.Reader) (*llm.Response, error) {
		next.Store(&r)
		return llm.Collect(c.Stream(t.Context(), s.p.Request))
	}
}

// streamSplit has the server send a stream in two flushed writes, split at
// every offset.
func (s *suite) streamSplit(t *testing.T) {
	t.Parallel()
	tt := s.p.Stream[s.p.Split]
	in := s.events(t, tt.File)
	var split atomic.Int64
	c, _ := s.serve(t, func(w http.ResponseWriter, r *http.Request) {
		i := split.Load()
		SSE(in[:i], in[i:])(w, r)
	}, Options{})
	for i := range len(in) + 1 {
		split.Store(int64(i))
		got, err := llm.Collect(c.Stream(t.Context(), s.p.Request))
		if err != nil {
			t.Fatalf("split at %d: %v", i, err)
		}
		if diff := gocmp.Diff(tt.Want, got); diff != "" {
			t.Fatalf("split at %d: response (-want +got):\n%s", i, diff)
		}
	}
}

// streamJSON: a server that ignores "stream": true answers whole.
func (s *suite) streamJSON(t *testing.T) {
	if s.p.WholeForStream < 0 {
		t.Skip("the API streams from another endpoint")
	}
	tt := s.p.Generate[s.p.WholeForStream]
	c, _ := s.serve(t, Reply(http.StatusOK, string(s.whole(t, tt.File))), Options{})
	got, err := llm.Collect(c.Stream(t.Context(), s.p.Request))
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(tt.Want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

func (s *suite) errors(t *testing.T) {
	tools := false
	for _, tt := range s.p.Errors {
		tools = tools || tt.Kind == llm.ErrToolsUnsupported
		t.Run(tt.Name, func(t *testing.T) {
			c, _ := s.serve(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.Header {
					w.Header()[k] = v
				}
				Reply(tt.Status, tt.Body)(w, r)
			}, Options{NoRetries: true})
			_, err := c.Generate(t.Context(), s.p.Request)
			e := CheckError(t, err, tt.Kind, tt.Msg)
			want := tt.Status
			if tt.Status == http.StatusOK {
				want = tt.Status200
			}
			if e.Status != want {
				t.Errorf("status = %d, want %d", e.Status, want)
			}
			if e.RetryAfter != tt.Retry {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.Retry)
			}
		})
	}
	if !tools && !s.p.RejectsTools {
		t.Error("no case of a server that rejects tools (ErrToolsUnsupported)")
	}
}

func (s *suite) longErrorBody(t *testing.T) {
	body := strings.Repeat("é", 1000)
	c, _ := s.serve(t, Reply(http.StatusBadRequest, body), Options{NoRetries: true})
	_, err := c.Generate(t.Context(), s.p.Request)
	e := CheckError(t, err, llm.ErrBadRequest, "éé")
	if len(e.Message) > 510 || !strings.HasSuffix(e.Message, "é…") {
		t.Errorf("message of %d bytes ends %q, want about 500 ending in whole runes and …", len(e.Message), e.Message[max(len(e.Message)-8, 0):])
	}
}

func (s *suite) streamErrors(t *testing.T) {
	for _, tt := range s.p.StreamErrors {
		t.Run(tt.Name, func(t *testing.T) {
			c, n := s.serve(t, tt.H, Options{})
			got, err := llm.Collect(c.Stream(t.Context(), s.p.Request))
			e := CheckError(t, err, tt.Kind, tt.Msg)
			if tt.Status != nil && e.Status != *tt.Status {
				t.Errorf("status = %d, want %d", e.Status, *tt.Status)
			}
			if diff := gocmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("what arrived (-want +got):\n%s", diff)
			}
			if n.Load() != tt.Requests {
				t.Errorf("%d requests, want %d", n.Load(), tt.Requests)
			}
		})
	}
}

// abort breaks the connection.
func abort(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }

// cutShort sends the start of an answer whose length says more, then
// breaks the connection.
func cutShort(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Length", "1000")
	w.Write([]byte(`{"id":"1","choices":[{"message":`))
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

func (s *suite) retries(t *testing.T) {
	t.Parallel()
	cases := append(s.p.Retries[:len(s.p.Retries):len(s.p.Retries)],
		RetryCase{Name: "connection reset, then success", H: func(ok http.HandlerFunc) http.HandlerFunc { return Counting(ok, abort) }, Requests: 2},
		RetryCase{Name: "connection reset three times", H: func(http.HandlerFunc) http.HandlerFunc { return abort }, Kind: llm.ErrConnection, Requests: 3},
		RetryCase{Name: "answer cut short three times", H: func(http.HandlerFunc) http.HandlerFunc { return cutShort }, Kind: llm.ErrConnection, Requests: 3},
	)
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			c, n := s.serve(t, tt.H(s.ok(t)), Options{})
			start := time.Now()
			resp, err := c.Generate(t.Context(), s.p.Request)
			if tt.Kind == nil {
				if err != nil || resp.Content == "" {
					t.Fatalf("Generate = %v, %v; want the answer", resp, err)
				}
			} else if !errors.Is(err, tt.Kind) {
				t.Fatalf("err = %v, want %v", err, tt.Kind)
			}
			if n.Load() != tt.Requests {
				t.Errorf("%d requests, want %d", n.Load(), tt.Requests)
			}
			if d := time.Since(start); d < tt.MinTime {
				t.Errorf("took %v, want at least %v", d, tt.MinTime)
			}
		})
	}
}

func (s *suite) streamRetries(t *testing.T) {
	want := s.p.Stream[0]
	for name, first := range s.p.RetriedBeforeFirstChunk {
		t.Run(name, func(t *testing.T) {
			c, n := s.serve(t, Counting(SSE(s.events(t, want.File)), first), Options{})
			got, err := llm.Collect(c.Stream(t.Context(), s.p.Request))
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(want.Want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if n.Load() != 2 {
				t.Errorf("%d requests, want 2", n.Load())
			}
		})
	}
}

func (s *suite) noRetryAfterCancel(t *testing.T) {
	c, n := s.serve(t, s.p.Retried, Options{Backoff: 10 * time.Second})
	ctx, cancel := context.WithCancel(t.Context())
	// Cancel once the first request has been answered (a fixed delay
	// could come before it on a loaded machine), during the 10 s pause.
	var canceled atomic.Int64
	go func() {
		for n.Load() < 1 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		canceled.Store(time.Now().UnixNano())
		cancel()
	}()
	_, err := c.Generate(ctx, s.p.Request)
	if !errors.Is(err, context.Canceled) || llm.Retryable(err) {
		t.Fatalf("err = %v, want context.Canceled, not retryable", err)
	}
	if d := time.Since(time.Unix(0, canceled.Load())); d > time.Second {
		t.Errorf("Generate returned %v after the cancel", d)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}
}

// noRetryPastDeadline: a pause that would outlast the deadline is not
// taken; the error comes back at once.
func (s *suite) noRetryPastDeadline(t *testing.T) {
	c, n := s.serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		Reply(http.StatusTooManyRequests, `{"error":{"message":"slow down"}}`)(w, r)
	}, Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := c.Generate(ctx, s.p.Request)
	if e := CheckError(t, err, llm.ErrRateLimited, "slow down"); e.RetryAfter != 30*time.Second {
		t.Errorf("RetryAfter = %v, want 30s", e.RetryAfter)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}
}

func (s *suite) canceledBeforeTheCall(t *testing.T) {
	c, n := s.serve(t, Reply(http.StatusOK, "{}"), Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Generate(ctx, s.p.Request); !errors.Is(err, context.Canceled) {
		t.Fatalf("Generate: err = %v, want context.Canceled", err)
	}
	if _, err := llm.Collect(c.Stream(ctx, s.p.Request)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream: err = %v, want context.Canceled", err)
	}
	if n.Load() != 0 {
		t.Errorf("%d requests, want 0", n.Load())
	}
}

// served makes clients of servers that answer with h.
func (s *suite) served(t *testing.T) func(h http.HandlerFunc) llm.Streamer {
	return func(h http.HandlerFunc) llm.Streamer {
		c, _ := s.serve(t, h, Options{})
		return c
	}
}

func (s *suite) streamCancel(t *testing.T) {
	StreamCancel(t, s.served(t), s.p.Request, s.p.Head, s.p.HeadText)
}

func (s *suite) streamBreak(t *testing.T) {
	StreamBreak(t, s.served(t), s.p.Request, s.p.Head)
}

func (s *suite) streamDeadline(t *testing.T) {
	StreamDeadline(t, s.served(t), s.p.Request, s.p.Head)
}

func (s *suite) connectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := s.p.New(url+s.p.Path, Options{}).Generate(t.Context(), s.p.Request)
	CheckError(t, err, llm.ErrConnection, "connection refused")
	if _, ok := errors.AsType[*net.OpError](err); !ok {
		t.Errorf("err = %v, want it to wrap the *net.OpError", err)
	}
}

func (s *suite) badBaseURL(t *testing.T) {
	_, err := s.p.New(s.p.BadBaseURL, Options{}).Generate(t.Context(), s.p.Request)
	CheckError(t, err, llm.ErrBadRequest, "base URL "+strconv.Quote(s.p.BadBaseURL)+" does not start with http:// or https://")
}

// invalidParameters: a tool whose parameters are not JSON fails the call
// before it is sent; with a client that takes no tools, any tool does.
func (s *suite) invalidParameters(t *testing.T) {
	c, n := s.serve(t, Reply(http.StatusOK, "{}"), Options{})
	req := s.p.Request
	req.Tools = []ptk.ToolInfo{{Name: "broken", Parameters: json.RawMessage(`{"type":`)}}
	kind, msg := llm.ErrBadRequest, "json"
	if s.p.RejectsTools {
		kind, msg = llm.ErrToolsUnsupported, "tool"
	}
	_, err := c.Generate(t.Context(), req)
	CheckError(t, err, kind, msg)
	_, err = llm.Collect(c.Stream(t.Context(), req))
	CheckError(t, err, kind, msg)
	if n.Load() != 0 {
		t.Errorf("%d requests, want 0", n.Load())
	}
}

// concurrentUse shares one client between goroutines (run with -race),
// half of them streaming.
func (s *suite) concurrentUse(t *testing.T) {
	whole, stream := s.ok(t), SSE(s.events(t, s.p.Stream[0].File))
	c, n := s.serve(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			stream(w, r)
		} else {
			whole(w, r)
		}
	}, Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	errs := make(chan error)
	for i := range 8 {
		go func() {
			var err error
			if i%2 == 0 {
				_, err = c.Generate(ctx, s.p.Request)
			} else {
				_, err = llm.Collect(c.Stream(ctx, s.p.Request))
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n.Load() != 8 {
		t.Errorf("%d requests, want 8", n.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (s *suite) withHTTPClient(t *testing.T) {
	var seen atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	c, _ := s.serve(t, s.ok(t), Options{HTTPClient: hc})
	if _, err := c.Generate(t.Context(), s.p.Request); err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 1 {
		t.Errorf("the given client made %d requests, want 1", seen.Load())
	}
}
