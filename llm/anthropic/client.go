package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/retry"
)

// DefaultBaseURL is Anthropic's API, used when [New] is given no base URL.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultVersion is the anthropic-version header sent unless
// [WithVersion] says otherwise.
const DefaultVersion = "2023-06-01"

// DefaultMaxTokens is the max_tokens sent for a request that sets none
// (the API requires one) unless [WithMaxTokens] says otherwise.
const DefaultMaxTokens = 4096

// Client is a model served by the Messages API. It does not change after
// [New], so one Client may serve any number of goroutines.
type Client struct {
	baseURL   string
	apiKey    string
	version   string
	maxTokens int
	hc        *http.Client
	header    http.Header
	retry     retry.Policy
}

var (
	_ llm.Model    = (*Client)(nil)
	_ llm.Streamer = (*Client)(nil)
)

// An Option configures a [Client].
type Option func(*Client)

// WithAPIKey sends key in the x-api-key header.
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

// WithHeader sends a header with every request (anthropic-beta, or the
// Authorization a gateway wants). It replaces a header the client would
// set itself.
func WithHeader(key, value string) Option { return func(c *Client) { c.header.Set(key, value) } }

// WithVersion sets the anthropic-version header; empty keeps
// [DefaultVersion].
func WithVersion(v string) Option {
	return func(c *Client) {
		if v != "" {
			c.version = v
		}
	}
}

// WithMaxTokens sets the max_tokens sent for a request whose MaxTokens is
// not above zero; n ≤ 0 keeps [DefaultMaxTokens].
func WithMaxTokens(n int) Option {
	return func(c *Client) {
		if n > 0 {
			c.maxTokens = n
		}
	}
}

// WithMaxRetries sets how many times a failed call is made again: 2 unless
// set, so 3 attempts; 0 turns retries off.
func WithMaxRetries(n int) Option { return func(c *Client) { c.retry.MaxRetries = max(n, 0) } }

// WithBackoff sets the pause before the first retry (base, doubling on each
// retry) and its cap (max). The pause is drawn at random between half that
// bound and the bound. The defaults are 500ms and 8s.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) { c.retry.Base, c.retry.Max = base, max }
}

// New returns a client for the Messages API at baseURL, [DefaultBaseURL]
// when empty: it posts to baseURL + "/v1/messages". Give a server that
// speaks the API (Ollama: "http://localhost:11434") its URL without /v1.
func New(baseURL string, opts ...Option) *Client {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	c := &Client{
		baseURL:   strings.TrimRight(baseURL, "/"),
		version:   DefaultVersion,
		maxTokens: DefaultMaxTokens,
		hc:        http.DefaultClient,
		header:    http.Header{},
		retry:     retry.Policy{MaxRetries: 2, Base: 500 * time.Millisecond, Max: 8 * time.Second},
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
	body, err := c.marshal(req, false)
	if err != nil {
		return nil, err
	}
	var out *llm.Response
	err = c.do(ctx, func() (bool, error) {
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

func (c *Client) marshal(req llm.Request, stream bool) ([]byte, error) {
	body, err := json.Marshal(newRequest(req, c.maxTokens, stream))
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: err.Error(), Err: err}
	}
	return body, nil
}

// post sends one request and returns the answer if its status is a
// success, and otherwise the classified error.
func (c *Client) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/v1/messages", bytes.NewReader(body))
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
	setDefault("Anthropic-Version", c.version)
	if c.apiKey != "" {
		setDefault("X-Api-Key", c.apiKey)
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
	var r messagesResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, badResponse(err, data)
	}
	if r.Type == "error" || r.Error != nil {
		return nil, inBandError(data)
	}
	return r.response(), nil
}

func connectionError(err error) *llm.Error {
	return &llm.Error{Kind: llm.ErrConnection, Message: err.Error(), Err: err}
}

func badResponse(err error, data []byte) *llm.Error {
	return &llm.Error{Kind: llm.ErrBadResponse, Message: err.Error() + ": " + excerpt(data), Err: err}
}

// do makes a call with the client's retry policy; a canceled or expired
// ctx comes back as "anthropic: " and ctx's error.
func (c *Client) do(ctx context.Context, attempt func() (started bool, err error)) error {
	err := c.retry.Do(ctx, attempt)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("anthropic: %w", err)
	}
	return err
}
