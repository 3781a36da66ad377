package gemini

import (
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
	"github.com/ptkit/ptk/llm/internal/httpx"
)

// DefaultBaseURL is where the Gemini API is served.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// Client is a Gemini model served by the Gemini API. It does not change
// after [New], so one Client may serve any number of goroutines.
type Client struct {
	apiKey     string
	openAPIArg bool // send tool schemas converted, as "parameters"
	t          httpx.Transport
}

var (
	_ llm.Model         = (*Client)(nil)
	_ llm.Streamer      = (*Client)(nil)
	_ llm.ProviderNamer = (*Client)(nil)
)

// An Option configures a [Client].
type Option func(*Client)

// WithAPIKey sends key in the x-goog-api-key header.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient makes the requests with hc instead of a client with the
// settings of [http.DefaultTransport] that keeps up to 128 idle connections
// to the server.
// Set no Timeout on it for streaming: a stream lasts as long as the answer.
// Use the context for deadlines.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.t.SetHTTPClient(hc) } }

// WithHeader sends a header with every request. It replaces a header the
// client would set itself.
func WithHeader(key, value string) Option { return func(c *Client) { c.t.SetHeader(key, value) } }

// WithMaxRetries sets how many times a failed call is made again: 2 unless
// set, so 3 attempts; 0 turns retries off.
func WithMaxRetries(n int) Option { return func(c *Client) { c.t.SetMaxRetries(n) } }

// WithBackoff sets the pause before the first retry (base, doubling on each
// retry) and its cap (max). The pause is drawn at random between half that
// bound and the bound. The defaults are 500ms and 8s.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) { c.t.SetBackoff(base, max) }
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
	c := &Client{t: httpx.New("gemini", baseURL)}
	for _, o := range opts {
		o(c)
	}
	return c
}

// BaseURL returns the base URL, without a trailing slash.
func (c *Client) BaseURL() string { return c.t.BaseURL }

// Generate makes one call and returns the whole answer. It makes the call
// again, after a pause, when it failed for a reason that may pass
// ([llm.Retryable]).
func (c *Client) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	body, err := c.marshal(req)
	if err != nil {
		return nil, err
	}
	post := func() (*http.Response, error) { return c.post(ctx, req.Model, body, false) }
	return httpx.Call(ctx, &c.t, post, readResponse)
}

// ProviderName is "gcp.gemini", as the GenAI conventions name the Gemini
// API (llm.ProviderNamer).
func (c *Client) ProviderName() string { return "gcp.gemini" }

func (c *Client) marshal(req llm.Request) ([]byte, error) {
	r, err := newRequest(req, c.openAPIArg)
	var body []byte
	if err == nil {
		body, err = json.Marshal(r)
	}
	if err != nil {
		return nil, httpx.BadRequest(err)
	}
	return body, nil
}

// endpoint returns the URL of a method of the model.
func (c *Client) endpoint(model, method string) (string, error) {
	base := c.t.BaseURL
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return "", fmt.Errorf("base URL %q does not start with http:// or https://", base)
	}
	model = strings.TrimPrefix(model, "models/")
	if model == "" {
		return "", errors.New("no model: Gemini needs one, such as gemini-2.5-flash")
	}
	if v := path.Base(base); v != "v1beta" && v != "v1" && v != "v1alpha" {
		base += "/v1beta"
	}
	return base + "/models/" + url.PathEscape(model) + ":" + method, nil
}

// post sends one request and returns the answer if its status is a
// success, and otherwise the classified error.
func (c *Client) post(ctx context.Context, model string, body []byte, stream bool) (*http.Response, error) {
	method := "generateContent"
	if stream {
		method = "streamGenerateContent?alt=sse"
	}
	u, err := c.endpoint(model, method)
	if err != nil {
		return nil, httpx.BadRequest(err)
	}
	h := httpx.JSON(stream)
	if c.apiKey != "" {
		h.Set("X-Goog-Api-Key", c.apiKey)
	}
	return c.t.Post(ctx, u, body, h, c.httpError)
}

// readResponse reads a whole answer.
func readResponse(body io.Reader) (*llm.Response, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, httpx.ConnectionError(err)
	}
	var r generateResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, httpx.BadResponse(err, data)
	}
	if err := r.failure(); err != nil {
		return nil, err
	}
	if len(r.Candidates) == 0 {
		return nil, &llm.Error{Kind: llm.ErrBadResponse, Message: "no candidates in " + httpx.Excerpt(data)}
	}
	return r.response(), nil
}
