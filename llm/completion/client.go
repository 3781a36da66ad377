package completion

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/sse"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
	"github.com/ptkit/ptk/llm/internal/retry"
)

// client is what the HTTP models share: where to send, how, and how often
// to try. It does not change after construction.
type client struct {
	apiKey string
	t      httpx.Transport
}

// An Option configures [LlamaCpp] or [OpenAI].
type Option func(*client)

// WithAPIKey sends key as a bearer token (llama.cpp's --api-key, vLLM's
// --api-key, OpenAI).
func WithAPIKey(key string) Option { return func(c *client) { c.apiKey = key } }

// WithHTTPClient makes the requests with hc instead of a client with the
// settings of [http.DefaultTransport] that keeps up to 128 idle connections
// to the server.
// Set no Timeout on it for streaming: use the context for deadlines.
func WithHTTPClient(hc *http.Client) Option { return func(c *client) { c.t.SetHTTPClient(hc) } }

// WithHeader sends a header with every request. It replaces a header the
// client would set itself.
func WithHeader(key, value string) Option { return func(c *client) { c.t.SetHeader(key, value) } }

// WithMaxRetries sets how many times a failed call is made again: 2 unless
// set, so 3 attempts; 0 turns retries off.
func WithMaxRetries(n int) Option { return func(c *client) { c.t.SetMaxRetries(n) } }

// WithBackoff sets the pause before the first retry (base, doubling on each
// retry) and its cap (max). The pause is drawn at random between half that
// bound and the bound. The defaults are 500ms and 8s.
func WithBackoff(base, max time.Duration) Option {
	return func(c *client) { c.t.SetBackoff(base, max) }
}

func newClient(baseURL string, opts []Option) client {
	c := client{t: httpx.New("completion", baseURL)}
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

// prompt is the text a completion model reads for req: the caller's own
// flattening of the conversation when it gave one, and otherwise a plain
// transcript of the messages.
func prompt(req llm.Request) string {
	if req.Prompt != "" {
		return req.Prompt
	}
	return flatten(req.Messages)
}

func (c *client) generate(ctx context.Context, w wire, req llm.Request) (*llm.Response, error) {
	body, err := c.body(w, req, false)
	if err != nil {
		return nil, err
	}
	post := func() (*http.Response, error) { return c.post(ctx, w.path(), body, false) }
	p, err := httpx.Call(ctx, &c.t, post, func(body io.Reader) (piece, error) { return readWhole(w, body) })
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
		return piece{}, httpx.ConnectionError(err)
	}
	return w.decode(data, true)
}

func (c *client) stream(ctx context.Context, w wire, req llm.Request) iter.Seq2[llm.Chunk, error] {
	attempt := func(ctx context.Context, body []byte, yield func(llm.Chunk) bool) error {
		return c.streamOnce(ctx, w, body, newCutter(req.Stop), yield)
	}
	return c.t.Stream(ctx, func() ([]byte, error) { return c.body(w, req, true) }, attempt)
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
			return httpx.Incomplete()
		case err != nil:
			return httpx.StreamError(err)
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
		return nil, httpx.BadRequest(err)
	}
	return body, nil
}

// post sends one request and returns the answer if its status is a
// success, and otherwise the classified error.
func (c *client) post(ctx context.Context, path string, body []byte, stream bool) (*http.Response, error) {
	h := httpx.JSON(stream)
	if c.apiKey != "" {
		h.Set("Authorization", "Bearer "+c.apiKey)
	}
	return c.t.Post(ctx, c.t.BaseURL+path, body, h, c.httpError)
}
