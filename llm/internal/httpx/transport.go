package httpx

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/retry"
)

// Transport is where a provider client sends its requests, with which
// http.Client and headers, and how often it tries. A client sets it up at
// construction, through its options, and does not change it after.
type Transport struct {
	// Name begins the error for a canceled or expired context:
	// "openai: context canceled".
	Name string
	// BaseURL is the base URL, without a trailing slash.
	BaseURL string
	HTTP    *http.Client
	// Header is sent with every request; it replaces a header the client
	// would set itself.
	Header http.Header
	Retry  retry.Policy

	// client is HTTP with CheckRedirect wrapped (see Client), made once
	// for the HTTP it was made of.
	client, clientOf *http.Client
}

// New returns a Transport for baseURL, trimmed of trailing slashes, with the
// defaults: DefaultClient (LocalClient for a server on this machine), no
// extra header, and 2 retries, the first after a pause bounded by 500ms,
// doubling up to 8s.
func New(name, baseURL string) Transport {
	hc := DefaultClient
	if Local(baseURL) {
		hc = LocalClient
	}
	t := Transport{
		Name:    name,
		BaseURL: strings.TrimRight(baseURL, "/"),
		HTTP:    hc,
		Header:  http.Header{},
		Retry:   retry.Policy{MaxRetries: 2, Base: 500 * time.Millisecond, Max: 8 * time.Second},
	}
	t.client, t.clientOf = t.wrap(hc), hc
	return t
}

// DefaultClient is the client of a Transport given none: the settings of
// http.DefaultTransport, but it keeps up to 128 idle connections to a host
// instead of 2. With 2, a program with many calls at once to one provider
// (a gateway) closes the other connections as their calls end and dials new
// ones, each leaving a socket in TIME_WAIT.
var DefaultClient = func() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultClient
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = 128
	// A request's headers and body go out in one write when they fit the
	// write buffer (4 KB by default: a request through the gateway, its
	// system prompt and tools, took two syscalls, a coding agent's
	// more), and a stream's events that have arrived are read in one.
	t.WriteBufferSize = 32 << 10
	t.ReadBufferSize = 16 << 10
	return &http.Client{Transport: t}
}()

// LocalClient is DefaultClient's settings for a server on this machine (a
// local model server behind the gateway): it asks for no compression,
// which would only cost CPU at both ends of a loopback connection, and
// makes its calls on the caller's goroutine (localTransport).
var LocalClient = func() *http.Client {
	t, ok := DefaultClient.Transport.(*http.Transport)
	if !ok {
		return DefaultClient
	}
	t = t.Clone()
	t.DisableCompression = true
	return &http.Client{Transport: newLocalTransport(t)}
}()

// Local reports whether rawURL names this machine: localhost, or a
// loopback address.
func Local(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// SetHTTPClient makes the requests with hc; nil keeps the one set.
func (t *Transport) SetHTTPClient(hc *http.Client) {
	if hc != nil {
		t.HTTP = hc
		t.client, t.clientOf = t.wrap(hc), hc
	}
}

// SetHeader sends a header with every request.
func (t *Transport) SetHeader(key, value string) { t.Header.Set(key, value) }

// SetMaxRetries sets how many times a failed call is made again; below 0
// is 0.
func (t *Transport) SetMaxRetries(n int) { t.Retry.MaxRetries = max(n, 0) }

// SetBackoff sets the pause before the first retry and its cap.
func (t *Transport) SetBackoff(base, max time.Duration) { t.Retry.Base, t.Retry.Max = base, max }

// JSON returns the headers of a request with a JSON body whose answer is
// JSON or, with stream, an event stream.
func JSON(stream bool) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	return h
}

// Post sends body to url with header, the headers the client sets itself
// (the transport's Header replaces them), and returns the answer if its
// status is a success. Otherwise it reads up to 1 MiB of the answer and
// returns the error fail makes of it. A url that cannot be read, or is not
// http or https (the error names BaseURL), is an ErrBadRequest; a request
// that cannot be made, an ErrConnection.
func (t *Transport) Post(ctx context.Context, url string, body []byte, header http.Header, fail func(status int, h http.Header, body []byte) *llm.Error) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err == nil && req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		err = fmt.Errorf("base URL %q does not start with http:// or https://", t.BaseURL)
	}
	if err != nil {
		return nil, BadRequest(err)
	}
	req.Header = make(http.Header, len(t.Header)+len(header))
	for k, v := range t.Header {
		req.Header[k] = slices.Clone(v)
	}
	for k, v := range header {
		if req.Header.Get(k) == "" {
			req.Header[k] = v
		}
	}
	// A redirect to another origin is not followed, whatever client is
	// used: Go drops Authorization there but not x-api-key,
	// x-goog-api-key or api-key, and the key is the user's.
	resp, err := t.Client().Do(req)
	if err != nil {
		return nil, ConnectionError(err)
	}
	if resp.StatusCode/100 == 2 {
		resp.Body = &bounded{r: resp.Body, left: MaxAnswerBytes}
		return resp, nil
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return nil, fail(resp.StatusCode, resp.Header, msg)
}

// Client is the transport's http.Client, refusing redirects to another
// origin (see sameOrigin): make every request of a provider client with it.
func (t *Transport) Client() *http.Client {
	if t.client != nil && t.clientOf == t.HTTP {
		return t.client
	}
	return t.wrap(t.HTTP)
}

// wrap returns a copy of hc that refuses redirects to another origin.
func (t *Transport) wrap(hc *http.Client) *http.Client {
	c := *hc
	c.CheckRedirect = sameOrigin(hc.CheckRedirect)
	return &c
}

// sameOrigin wraps a client's CheckRedirect (nil: Go's, ten redirects) so
// that a redirect to another scheme, host or port than the request's is
// refused.
func sameOrigin(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(r *http.Request, via []*http.Request) error {
		if from := via[0].URL; !strings.EqualFold(r.URL.Scheme, from.Scheme) || !strings.EqualFold(r.URL.Host, from.Host) {
			return fmt.Errorf("the server redirected to %s://%s, another origin than %s://%s: not followed (set the base URL to where it leads, if that is right)", r.URL.Scheme, r.URL.Host, from.Scheme, from.Host)
		}
		if next != nil {
			return next(r, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// MaxAnswerBytes bounds what is read of one answer, whole or streamed: a
// model's reply is a few megabytes at most, even streamed chunk by chunk
// with log-probabilities, and a server whose answer never ends (hostile,
// or a broken one looping) must not take ptk's memory with it.
const MaxAnswerBytes = 256 << 20

// ErrAnswerTooLong is the error of reading an answer past MaxAnswerBytes.
var ErrAnswerTooLong = fmt.Errorf("the model server's answer passed %d MiB: it was not read further", MaxAnswerBytes>>20)

// bounded is an answer's body that fails after MaxAnswerBytes.
type bounded struct {
	r    io.ReadCloser
	left int64
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, ErrAnswerTooLong
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *bounded) Close() error { return b.r.Close() }

// finished reports whether the body it bounds knows it has nothing left to
// read (see CloseStream).
func (b *bounded) finished() bool {
	f, ok := b.r.(interface{ finished() bool })
	return ok && f.finished()
}

// Do makes a call with the retry policy (see [retry.Policy.Do]); a
// canceled or expired ctx comes back as Name, ": " and ctx's error.
func (t *Transport) Do(ctx context.Context, attempt func() (started bool, err error)) error {
	err := t.Retry.Do(ctx, attempt)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	return err
}

// Call makes a call that is answered whole, with the retry policy: post
// sends the request, read reads the answer, which is closed after.
func Call[T any](ctx context.Context, t *Transport, post func() (*http.Response, error), read func(io.Reader) (T, error)) (T, error) {
	var out T
	err := t.Do(ctx, func() (bool, error) {
		resp, err := post()
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		out, err = read(resp.Body)
		return false, err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// Stream makes a call whose answer comes as it arrives, with the retry
// policy. When the sequence is read, body makes the request's body (an
// error ends the sequence) and attempt makes one attempt with it, giving
// each chunk to yield and returning retry.ErrStopped when yield asks to
// stop. A call that fails before its first chunk is made again; after it,
// an error ends the sequence. Breaking out of the loop, or canceling ctx,
// ends the attempt, which closes its connection at once.
func (t *Transport) Stream(ctx context.Context, body func() ([]byte, error), attempt func(ctx context.Context, body []byte, yield func(llm.Chunk) bool) error) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		b, err := body()
		if err == nil {
			err = t.Do(ctx, func() (bool, error) {
				started := false
				err := attempt(ctx, b, func(ch llm.Chunk) bool {
					started = true
					return yield(ch, nil)
				})
				return started, err
			})
		}
		if err != nil && err != retry.ErrStopped {
			yield(llm.Chunk{}, err)
		}
	}
}

// StreamOrWhole reads the answer to a request for a stream: an event
// stream with events or, from a server that does not stream and answers
// whole (application/json), with whole, giving yield the chunks a stream of
// it would have had: the text, reasoning and model, each call, then the
// usage and finish reason. It returns retry.ErrStopped when yield asks to
// stop.
//
// An answer of another type is read as an event stream when it begins like
// one; otherwise (the HTML page of a proxy) it is an ErrBadResponse that
// quotes it.
func StreamOrWhole(resp *http.Response, yield func(llm.Chunk) bool, events func(io.Reader, func(llm.Chunk) bool) error, whole func(io.Reader) (*llm.Response, error)) error {
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		return events(resp.Body, yield)
	case !strings.HasPrefix(ct, "application/json"):
		br := bufio.NewReader(resp.Body)
		br.Peek(1) // waits for the first bytes, and no more
		head, _ := br.Peek(br.Buffered())
		if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) == 0 || t[0] == ':' || bytes.HasPrefix(t, []byte("data")) ||
			bytes.HasPrefix(t, []byte("event")) || bytes.HasPrefix(t, []byte("id")) || bytes.HasPrefix(t, []byte("retry")) {
			return events(br, yield)
		}
		return &llm.Error{Kind: llm.ErrBadResponse, Message: "the server answered " + cmp.Or(ct, "with no Content-Type") + " instead of an event stream: " + Excerpt(head)}
	}
	r, err := whole(resp.Body)
	if err != nil {
		return err
	}
	for _, ch := range llm.Chunks(r) {
		if !yield(ch) {
			return retry.ErrStopped
		}
	}
	return nil
}

// A streamed answer's body is read to its end before it is closed, so that
// its connection goes back to the pool: net/http closes a connection whose
// body was closed before its end, and the next call then dials a new one
// (through the gateway, three streamed answers in four paid a TCP
// handshake and a connection's goroutines). The protocol's last event
// ([DONE], message_stop) comes just before the end of the body, which
// usually arrives with it or right after; a server that keeps the body
// open after it is not waited for longer than drainWait, nor read further
// than drainMax.
const (
	drainWait = 5 * time.Millisecond
	drainMax  = 64 << 10
)

// CloseStream closes the body of a streamed answer. When the stream ended
// as its protocol says (ended), the rest of the body is read first, within
// drainWait and drainMax, so that the connection can serve the next call;
// otherwise (an error, a caller that stopped reading) it is closed at once.
//
// A body that knows it was read to its end (the local transport's, when the
// stream's last read brought the end of the body with [DONE], as it does
// over loopback) is closed without the timer: arming one that fires sooner
// than the runtime's network poller means to wake makes the runtime wake
// its poller's thread, a cross-thread wake-up a streamed call.
func CloseStream(body io.ReadCloser, ended bool) {
	if f, ok := body.(interface{ finished() bool }); ok && f.finished() {
		body.Close()
		return
	}
	if ended {
		// Close may be called while a Read waits: net/http then closes
		// the connection, and the Read returns.
		t := time.AfterFunc(drainWait, func() { body.Close() })
		io.Copy(io.Discard, io.LimitReader(body, drainMax))
		t.Stop()
	}
	body.Close()
}
