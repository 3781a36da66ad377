package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/retry"
)

// DefaultBaseURL is where the Gemini API is served.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// Client is a Gemini model served by the Gemini API. It does not change
// after [New], so one Client may serve any number of goroutines.
type Client struct {
	baseURL    string
	apiKey     string
	hc         *http.Client
	header     http.Header
	retry      retry.Policy
	openAPIArg bool // send tool schemas converted, as "parameters"
}

var (
	_ llm.Model    = (*Client)(nil)
	_ llm.Streamer = (*Client)(nil)
)

// An Option configures a [Client].
type Option func(*Client)

// WithAPIKey sends key in the x-goog-api-key header.
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

// WithHeader sends a header with every request. It replaces a header the
// client would set itself.
func WithHeader(key, value string) Option { return func(c *Client) { c.header.Set(key, value) } }

// WithMaxRetries sets how many times a failed call is made again: 2 unless
// set, so 3 attempts; 0 turns retries off.
func WithMaxRetries(n int) Option { return func(c *Client) { c.retry.MaxRetries = max(n, 0) } }

// WithBackoff sets the pause before the first retry (base, doubling on each
// retry) and its cap (max). The pause is drawn at random between half that
// bound and the bound. The defaults are 500ms and 8s.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) { c.retry.Base, c.retry.Max = base, max }
}

// WithOpenAPISchema sends each tool's parameters converted to the OpenAPI
// subset of the "parameters" field, instead of the JSON Schema as written
// in "parametersJsonSchema". Use it for an endpoint that does not take
// parametersJsonSchema; the conversion drops what the subset cannot say.
func WithOpenAPISchema() Option { return func(c *Client) { c.openAPIArg = true } }

// New returns a client for the Gemini API at baseURL, [DefaultBaseURL] when
// empty. It posts to baseURL + "/v1beta/models/{model}:generateContent"; a
// baseURL that already ends in an API version ("/v1beta", "/v1") is used as
// it is.
func New(baseURL string, opts ...Option) *Client {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	c := &Client{
		baseURL: strings.TrimRight(baseURL, "/"),
		hc:      http.DefaultClient,
		header:  http.Header{},
		retry:   retry.Policy{MaxRetries: 2, Base: 500 * time.Millisecond, Max: 8 * time.Second},
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
	body, err := c.marshal(req)
	if err != nil {
		return nil, err
	}
	var out *llm.Response
	err = c.do(ctx, func() (bool, error) {
		resp, err := c.post(ctx, req.Model, body, false)
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

func (c *Client) marshal(req llm.Request) ([]byte, error) {
	r, err := newRequest(req, c.openAPIArg)
	var body []byte
	if err == nil {
		body, err = json.Marshal(r)
	}
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: err.Error(), Err: err}
	}
	return body, nil
}

// endpoint returns the URL of a method of the model.
func (c *Client) endpoint(model, method string) (string, error) {
	if !strings.HasPrefix(c.baseURL, "http://") && !strings.HasPrefix(c.baseURL, "https://") {
		return "", fmt.Errorf("base URL %q does not start with http:// or https://", c.baseURL)
	}
	model = strings.TrimPrefix(model, "models/")
	if model == "" {
		return "", errors.New("no model: Gemini needs one, such as gemini-2.5-flash")
	}
	base := c.baseURL
	if v := path.Base(base); v != "v1beta" && v != "v1" && v != "v1alpha" {
		base += "/v1beta"
	}
	return base + "/models/" + url.PathEscape(model) + ":" + method, nil
}

// post sends one request and returns the answer if its status is a
// success, and otherwise the classified error.
func (c *Client) post(ctx context.Context, model string, body []byte, stream bool) (*http.Response, error) {
	method, accept := "generateContent", "application/json"
	if stream {
		method, accept = "streamGenerateContent?alt=sse", "text/event-stream"
	}
	u, err := c.endpoint(model, method)
	var req *http.Request
	if err == nil {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
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
	setDefault("Accept", accept)
	if c.apiKey != "" {
		setDefault("X-Goog-Api-Key", c.apiKey)
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
	var r generateResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, badResponse(err, data)
	}
	if err := r.failure(); err != nil {
		return nil, err
	}
	if len(r.Candidates) == 0 {
		return nil, &llm.Error{Kind: llm.ErrBadResponse, Message: "no candidates in " + excerpt(data)}
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
// ctx comes back as "gemini: " and ctx's error.
func (c *Client) do(ctx context.Context, attempt func() (started bool, err error)) error {
	err := c.retry.Do(ctx, attempt)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("gemini: %w", err)
	}
	return err
}
