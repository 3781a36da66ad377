package completion

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/retry"
	"github.com/ptkit/ptk/llm/internal/sse"
	"github.com/ptkit/ptk/protocol"
)

// client is what the HTTP models share: where to send, how, and how often
// to try. It does not change after construction.
type client struct {
	baseURL string
	apiKey  string
	hc      *http.Client
	header  http.Header
	retry   retry.Policy
}

// An Option configures [LlamaCpp] or [OpenAI].
type Option func(*client)

// WithAPIKey sends key as a bearer token (llama.cpp's --api-key, vLLM's
// --api-key, OpenAI).
func WithAPIKey(key string) Option { return func(c *client) { c.apiKey = key } }

// WithHTTPClient makes the requests with hc instead of [http.DefaultClient].
// Set no Timeout on it for streaming: use the context for deadlines.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithHeader sends a header with every request. It replaces a header the
// client would set itself.
func WithHeader(key, value string) Option { return func(c *client) { c.header.Set(key, value) } }

// WithMaxRetries sets how many times a failed call is made again: 2 unless
// set, so 3 attempts; 0 turns retries off.
func WithMaxRetries(n int) Option { return func(c *client) { c.retry.MaxRetries = max(n, 0) } }

// WithBackoff sets the pause before the first retry (base, doubling on each
// retry) and its cap (max). The pause is drawn at random between half that
// bound and the bound. The defaults are 500ms and 8s.
func WithBackoff(base, max time.Duration) Option {
	return func(c *client) { c.retry.Base, c.retry.Max = base, max }
}

func newClient(baseURL string, opts []Option) client {
	c := client{
		baseURL: strings.TrimRight(baseURL, "/"),
		hc:      http.DefaultClient,
		header:  http.Header{},
		retry:   retry.Policy{MaxRetries: 2, Base: 500 * time.Millisecond, Max: 8 * time.Second},
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// wire is what differs between endpoints: the path, the request body and
// how one answer, or one event of a stream, reads.
type wire interface {
	path() string
	encode(req llm.Request, prompt string, stream bool) any
	// decode reads a whole answer, or one event of a stream; an error the
	// server reported in it is returned as an *llm.Error.
	decode(data []byte, whole bool) (piece, error)
}

// piece is what one answer or one stream event says.
type piece struct {
	text   string
	finish string
	usage  *ptk.Usage
	model  string
	// last reports that the answer is complete (llama.cpp's "stop": true).
	last bool
}

// checkRequest rejects what a completion endpoint cannot take.
func checkRequest(req llm.Request) error {
	if len(req.Tools) > 0 {
		return &llm.Error{Kind: llm.ErrToolsUnsupported, Message: "a completion model takes no tool definitions: use the text protocol"}
	}
	return nil
}

// prompt is the text a completion model reads for req.
func prompt(req llm.Request) string { return protocol.PTK{}.Transcript(req.Messages) }

func (c *client) generate(ctx context.Context, w wire, req llm.Request) (*llm.Response, error) {
	body, err := c.body(w, req, false)
	if err != nil {
		return nil, err
	}
	var p piece
	err = c.do(ctx, func() (bool, error) {
		resp, err := c.post(ctx, w.path(), body, false)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		p, err = readWhole(w, resp.Body)
		return false, err
	})
	if err != nil {
		return nil, err
	}
	cut := newCutter(req.Stop)
	out := &llm.Response{Content: cut.write(p.text) + cut.flush(), FinishReason: p.finish, Model: p.model}
	if cut.stopped {
		out.FinishReason = "stop"
	}
	if p.usage != nil {
		out.Usage = *p.usage
	}
	return out, nil
}

func readWhole(w wire, body io.Reader) (piece, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return piece{}, connectionError(err)
	}
	return w.decode(data, true)
}

func (c *client) stream(ctx context.Context, w wire, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		body, err := c.body(w, req, true)
		if err == nil {
			err = c.do(ctx, func() (bool, error) {
				started := false
				err := c.streamOnce(ctx, w, body, newCutter(req.Stop), func(ch llm.Chunk) bool {
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

// streamOnce makes one attempt, giving each chunk to yield. It returns
// retry.ErrStopped when yield asks to stop.
func (c *client) streamOnce(ctx context.Context, w wire, body []byte, cut *cutter, yield func(llm.Chunk) bool) error {
	resp, err := c.post(ctx, w.path(), body, true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	model := ""
	// emit passes p on as a chunk; it reports whether to read on.
	emit := func(p piece) (bool, error) {
		ch := llm.Chunk{Text: cut.write(p.text), FinishReason: p.finish, Usage: p.usage}
		if p.model != model {
			ch.Model, model = p.model, p.model
		}
		if cut.stopped {
			ch.FinishReason = "stop"
		} else if p.finish != "" || p.last {
			ch.Text += cut.flush()
		}
		if ch != (llm.Chunk{}) && !yield(ch) {
			return false, retry.ErrStopped
		}
		return !cut.stopped && !p.last, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		// A server that does not stream answers whole.
		p, err := readWhole(w, resp.Body)
		if err != nil {
			return err
		}
		p.last = true
		_, err = emit(p)
		return err
	}
	events := sse.NewReader(resp.Body)
	finished := false
	for {
		ev, err := events.Next()
		switch {
		case err == io.EOF && finished:
			// The answer is whole; the server did not say [DONE].
			_, err := emit(piece{last: true})
			return err
		case err == io.EOF:
			return &llm.Error{Kind: llm.ErrConnection, Message: "the stream ended before the answer was complete"}
		case errors.Is(err, bufio.ErrTooLong):
			return &llm.Error{Kind: llm.ErrBadResponse, Message: "stream: " + err.Error(), Err: err}
		case err != nil:
			return connectionError(err)
		}
		data := bytes.TrimSpace(ev.Data)
		var p piece
		switch {
		case len(data) == 0:
			continue
		case string(data) == "[DONE]":
			p.last = true
		case ev.Type == "error":
			return inBandError(data)
		default:
			if p, err = w.decode(data, false); err != nil {
				return err
			}
		}
		finished = finished || p.finish != ""
		more, err := emit(p)
		if !more {
			return err
		}
	}
}

func (c *client) body(w wire, req llm.Request, stream bool) ([]byte, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	body, err := json.Marshal(w.encode(req, prompt(req), stream))
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: err.Error(), Err: err}
	}
	return body, nil
}

// post sends one request and returns the answer if its status is a
// success, and otherwise the classified error.
func (c *client) post(ctx context.Context, path string, body []byte, stream bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+path, bytes.NewReader(body))
	if err == nil && req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		err = fmt.Errorf("base URL %q does not start with http:// or https://", c.baseURL)
	}
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: err.Error(), Err: err}
	}
	req.Header = c.header.Clone()
	setDefault := func(k, v string) {
		if req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
	setDefault("Content-Type", "application/json")
	if stream {
		setDefault("Accept", "text/event-stream")
	} else {
		setDefault("Accept", "application/json")
	}
	if c.apiKey != "" {
		setDefault("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, connectionError(err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return nil, c.httpError(resp.StatusCode, resp.Header, msg)
}

// do makes a call with the client's retry policy; a canceled or expired
// ctx comes back as "completion: " and ctx's error.
func (c *client) do(ctx context.Context, attempt func() (started bool, err error)) error {
	err := c.retry.Do(ctx, attempt)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("completion: %w", err)
	}
	return err
}
