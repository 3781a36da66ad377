package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/ptkit/ptk/llm"
)

// Client is a model served by a Chat Completions endpoint. It does not
// change after [New], so one Client may serve any number of goroutines.
type Client struct {
	baseURL     string
	apiKey      string
	hc          *http.Client
	header      http.Header
	maxRetries  int
	backoffBase time.Duration
	backoffMax  time.Duration
}

var (
	_ llm.Model    = (*Client)(nil)
	_ llm.Streamer = (*Client)(nil)
)

// An Option configures a [Client].
type Option func(*Client)

// WithAPIKey sends key as a bearer token.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient makes the requests with hc instead of [http.DefaultClient].
// Set no Timeout on it for streaming: a stream lasts as long as the answer.
// Use the context for deadlines.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithHeader sends a header with every request (OpenRouter's HTTP-Referer,
// Azure's api-key...). It replaces a header the client would set itself.
func WithHeader(key, value string) Option { return func(c *Client) { c.header.Set(key, value) } }

// WithMaxRetries sets how many times a failed call is made again: 2 unless
// set, so 3 attempts; 0 turns retries off.
func WithMaxRetries(n int) Option { return func(c *Client) { c.maxRetries = max(n, 0) } }

// WithBackoff sets the pause before the first retry (base, doubling on each
// retry) and its cap (max). The pause is drawn at random between half that
// bound and the bound.
// The defaults are 500ms and 8s.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) { c.backoffBase, c.backoffMax = base, max }
}

// maxRetryAfter is the longest Retry-After the client waits for; a call the
// provider asks to delay longer fails with the provider's error.
const maxRetryAfter = time.Minute

// New returns a client for the Chat Completions API at baseURL, such as
// "https://api.openai.com/v1" or "http://localhost:11434/v1": it posts to
// baseURL + "/chat/completions".
func New(baseURL string, opts ...Option) *Client {
	c := &Client{
		baseURL:     strings.TrimRight(baseURL, "/"),
		hc:          http.DefaultClient,
		header:      http.Header{},
		maxRetries:  2,
		backoffBase: 500 * time.Millisecond,
		backoffMax:  8 * time.Second,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// BaseURL returns the base URL, without a trailing slash.
func (c *Client) BaseURL() string { return c.baseURL }

// Generate makes one call and returns the whole answer. It makes the call
// again, after a pause, when it failed for a reason that may pass
// ([llm.Retryable]).
func (c *Client) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	body, err := marshal(req, false)
	if err != nil {
		return nil, err
	}
	var out *llm.Response
	err = c.retry(ctx, func() (bool, error) {
		resp, err := c.post(ctx, body, false)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		out, err = readResponse(resp.Body)
		return false, err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func marshal(req llm.Request, stream bool) ([]byte, error) {
	body, err := json.Marshal(newChatRequest(req, stream))
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: err.Error(), Err: err}
	}
	return body, nil
}

// post sends one request and returns the answer if its status is a
// success, and otherwise the classified error.
func (c *Client) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/chat/completions", bytes.NewReader(body))
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

// readResponse reads a whole answer.
func readResponse(body io.Reader) (*llm.Response, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, connectionError(err)
	}
	var r chatResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, badResponse(err, data)
	}
	if r.failed() {
		return nil, inBandError(data)
	}
	if len(r.Choices) == 0 {
		return nil, &llm.Error{Kind: llm.ErrBadResponse, Message: "no choices in " + excerpt(data)}
	}
	return r.response(), nil
}

func connectionError(err error) *llm.Error {
	return &llm.Error{Kind: llm.ErrConnection, Message: err.Error(), Err: err}
}

func badResponse(err error, data []byte) *llm.Error {
	return &llm.Error{Kind: llm.ErrBadResponse, Message: err.Error() + ": " + excerpt(data), Err: err}
}

// retry makes attempt until it succeeds, fails for a reason that will not
// pass, has started to deliver its answer, or has been made maxRetries+1
// times. Between attempts it waits what the provider asked, or a random
// pause that grows with each attempt. Once ctx is done it returns ctx's
// error.
func (c *Client) retry(ctx context.Context, attempt func() (started bool, err error)) error {
	for n := 0; ; n++ {
		started, err := attempt()
		if err == nil || err == errStopped {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("openai: %w", ctx.Err())
		}
		if started || n >= c.maxRetries || !llm.Retryable(err) {
			return err
		}
		wait := c.backoff(n)
		if e, ok := errors.AsType[*llm.Error](err); ok && e.RetryAfter > 0 {
			if e.RetryAfter > maxRetryAfter {
				return err
			}
			wait = e.RetryAfter
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("openai: %w while waiting to retry after: %v", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// backoff is the pause before retry n+1: "equal jitter", uniform between
// half of base·2ⁿ (capped at max) and all of it, so that clients spread out
// but none retries at once.
func (c *Client) backoff(n int) time.Duration {
	d := c.backoffBase
	for ; n > 0 && d < c.backoffMax; n-- {
		d *= 2
	}
	if d = min(d, c.backoffMax); d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}
