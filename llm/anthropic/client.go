package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic/wire"
	"github.com/ptkit/ptk/llm/internal/httpx"
	"github.com/ptkit/ptk/llm/internal/jsoncache"
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
	apiKey    string
	version   string
	maxTokens int
	t         httpx.Transport
	// cache keeps the JSON of what requests repeat.
	cache *jsoncache.Cache
}

var (
	_ llm.Model         = (*Client)(nil)
	_ llm.Streamer      = (*Client)(nil)
	_ llm.ProviderNamer = (*Client)(nil)
)

// An Option configures a [Client].
type Option func(*Client)

// WithAPIKey sends key in the x-api-key header.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient makes the requests with hc instead of a client with the
// settings of [http.DefaultTransport] that keeps up to 128 idle connections
// to the server.
// Set no Timeout on it for streaming: a stream lasts as long as the answer.
// Use the context for deadlines.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.t.SetHTTPClient(hc) } }

// WithHeader sends a header with every request (anthropic-beta, or the
// Authorization a gateway wants). It replaces a header the client would
// set itself.
func WithHeader(key, value string) Option { return func(c *Client) { c.t.SetHeader(key, value) } }

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
func WithMaxRetries(n int) Option { return func(c *Client) { c.t.SetMaxRetries(n) } }

// WithBackoff sets the pause before the first retry (base, doubling on each
// retry) and its cap (max). The pause is drawn at random between half that
// bound and the bound. The defaults are 500ms and 8s.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) { c.t.SetBackoff(base, max) }
}

// New returns a client for the Messages API at baseURL, [DefaultBaseURL]
// when empty: it posts to baseURL + "/v1/messages". Give a server that
// speaks the API (Ollama: "http://localhost:11434") its URL without /v1.
func New(baseURL string, opts ...Option) *Client {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	c := &Client{version: DefaultVersion, maxTokens: DefaultMaxTokens, t: httpx.New("anthropic", baseURL), cache: jsoncache.New(cacheBytes)}
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
	body, err := c.marshal(req, false)
	if err != nil {
		return nil, err
	}
	post := func() (*http.Response, error) { return c.post(ctx, body, false) }
	return httpx.Call(ctx, &c.t, post, readResponse)
}

// ProviderName is "anthropic" (llm.ProviderNamer).
func (c *Client) ProviderName() string { return "anthropic" }

// cacheBytes bounds a Client's cache of request JSON: a few coding agents'
// prompts and tools.
const cacheBytes = 8 << 20

// marshal writes the request's body in one pass, with what requests repeat
// (the system prompt, the tools, the turns sent again) from the client's
// cache; what it refuses, encoding/json says why.
func (c *Client) marshal(req llm.Request, stream bool) ([]byte, error) {
	r := newRequest(req, c.maxTokens, stream)
	if body, ok := r.AppendJSONCached(make([]byte, 0, sizeHint(&r)), true, c.cache); ok {
		return body, nil
	}
	body, err := json.Marshal(&r)
	if err != nil {
		return nil, httpx.BadRequest(err)
	}
	return body, nil
}

// sizeHint is about the length of r's JSON, to make room for it at once.
func sizeHint(r *wire.Request) int {
	n := 256
	// Escapes grow a text: a quote or a newline by a byte, an HTML
	// character (escaped, as encoding/json does) by five.
	text := func(s string) { n += len(s) + len(s)/4 + 16 }
	if r.System != nil {
		text(r.System.Text)
	}
	for i := range r.Messages {
		c := &r.Messages[i].Content
		text(c.Text)
		for j := range c.Blocks {
			b := &c.Blocks[j]
			text(b.Text)
			n += 2*len(b.Input) + 64
			if b.Content != nil {
				text(b.Content.Text)
			}
		}
	}
	for _, t := range r.Tools {
		text(t.Description)
		n += len(t.Name) + len(t.InputSchema) + 64
	}
	return n
}

// post sends one request and returns the answer if its status is a
// success, and otherwise the classified error.
func (c *Client) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	h := httpx.JSON(stream)
	h.Set("Anthropic-Version", c.version)
	if c.apiKey != "" {
		h.Set("X-Api-Key", c.apiKey)
	}
	return c.t.Post(ctx, c.t.BaseURL+"/v1/messages", body, h, c.httpError)
}

// readResponse reads a whole answer.
func readResponse(body io.Reader) (*llm.Response, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, httpx.ConnectionError(err)
	}
	var r wire.Response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, httpx.BadResponse(err, data)
	}
	if r.Type == "error" || r.Error != nil {
		return nil, inBandError(data)
	}
	return response(&r), nil
}
