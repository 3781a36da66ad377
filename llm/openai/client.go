package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
	"github.com/ptkit/ptk/llm/internal/jsoncache"
	"github.com/ptkit/ptk/llm/openai/wire"
)

// Client is a model served by a Chat Completions endpoint. It does not
// change after [New], so one Client may serve any number of goroutines.
type Client struct {
	apiKey string
	t      httpx.Transport
	// windows are the windows the server told, by model; probe says
	// whether to ask it (WithWindowProbe).
	windows *windows
	probe   bool
	// cache keeps the JSON of what requests repeat (the system prompt,
	// the tools, the turns sent again).
	cache *jsoncache.Cache
}

var (
	_ llm.Model         = (*Client)(nil)
	_ llm.Streamer      = (*Client)(nil)
	_ llm.ProviderNamer = (*Client)(nil)
)

// An Option configures a [Client].
type Option func(*Client)

// WithAPIKey sends key as a bearer token.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient makes the requests with hc instead of a client with the
// settings of [http.DefaultTransport] that keeps up to 128 idle connections
// to the server.
// Set no Timeout on it for streaming: a stream lasts as long as the answer.
// Use the context for deadlines.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.t.SetHTTPClient(hc) } }

// WithHeader sends a header with every request (OpenRouter's HTTP-Referer,
// Azure's api-key...). It replaces a header the client would set itself.
func WithHeader(key, value string) Option { return func(c *Client) { c.t.SetHeader(key, value) } }

// WithWindowProbe makes ContextWindow ask the server for a model's window
// (vLLM's max_model_len, llama.cpp's n_ctx, Ollama's context): for a
// server of the user's own. Without it, ContextWindow tells nothing and
// asks nothing, so a hosted API is never sent these questions.
func WithWindowProbe() Option { return func(c *Client) { c.probe = true } }

// WithMaxRetries sets how many times a failed call is made again: 2 unless
// set, so 3 attempts; 0 turns retries off.
func WithMaxRetries(n int) Option { return func(c *Client) { c.t.SetMaxRetries(n) } }

// WithBackoff sets the pause before the first retry (base, doubling on each
// retry) and its cap (max). The pause is drawn at random between half that
// bound and the bound.
// The defaults are 500ms and 8s.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) { c.t.SetBackoff(base, max) }
}

// New returns a client for the Chat Completions API at baseURL, such as
// "https://api.openai.com/v1" or "http://localhost:11434/v1": it posts to
// baseURL + "/chat/completions".
func New(baseURL string, opts ...Option) *Client {
	c := &Client{t: httpx.New("openai", baseURL), windows: &windows{}, cache: jsoncache.New(cacheBytes)}
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

// ProviderName is "openai" for OpenAI's own API (api.openai.com), and ""
// for the many other servers that speak its wire format, which say
// nothing of what they are (llm.ProviderNamer; a catalog entry names
// its provider).
func (c *Client) ProviderName() string {
	if u, err := url.Parse(c.BaseURL()); err == nil && (u.Hostname() == "api.openai.com" || strings.HasSuffix(u.Hostname(), ".openai.com")) {
		return "openai"
	}
	return ""
}

// cacheBytes bounds a Client's cache of request JSON: a few coding agents'
// prompts and tools.
const cacheBytes = 8 << 20

func (c *Client) marshal(req llm.Request, stream bool) ([]byte, error) {
	r := newChatRequest(req, stream)
	body, ok := r.AppendJSONCached(make([]byte, 0, sizeHint(&r)), true, c.cache)
	if !ok {
		// encoding/json refuses the request too: it says why.
		_, err := json.Marshal(&r)
		if err == nil {
			err = errors.New("the request cannot be written as JSON")
		}
		return nil, httpx.BadRequest(err)
	}
	return appendExtra(body, req.Extra), nil
}

// sizeHint is about the length of r's JSON, to make room for it at once.
func sizeHint(r *wire.Request) int {
	n := 256
	for i := range r.Messages {
		m := &r.Messages[i]
		if m.Content != nil {
			n += len(m.Content.Text) + len(m.Content.Text)/4
		}
		for _, c := range m.ToolCalls {
			n += len(c.Function.Arguments)*2 + 64
		}
		n += 48
	}
	for _, t := range r.Tools {
		n += len(t.Function.Name) + len(t.Function.Description)*5/4 + len(t.Function.Parameters) + 64
	}
	return n
}

// ownFields are the fields of the body the client writes itself, which
// Request.Extra does not replace.
var ownFields = map[string]bool{"model": true, "messages": true, "temperature": true, "max_tokens": true,
	"stop": true, "tools": true, "tool_choice": true, "stream": true, "stream_options": true}

// appendExtra adds the extra fields to a marshalled body, in sorted order.
func appendExtra(body []byte, extra map[string]json.RawMessage) []byte {
	if len(extra) == 0 {
		return body
	}
	body = body[:len(body)-1] // the closing brace
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		v := extra[k]
		if ownFields[k] || len(v) == 0 || !json.Valid(v) {
			continue
		}
		key, _ := json.Marshal(k)
		body = append(append(append(body, ','), key...), ':')
		body = append(body, v...)
	}
	return append(body, '}')
}

// post sends one request and returns the answer if its status is a
// success, and otherwise the classified error.
func (c *Client) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	h := httpx.JSON(stream)
	if c.apiKey != "" {
		h.Set("Authorization", "Bearer "+c.apiKey)
	}
	return c.t.Post(ctx, c.t.BaseURL+"/chat/completions", body, h, c.httpError)
}

// readResponse reads a whole answer.
func readResponse(body io.Reader) (*llm.Response, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, httpx.ConnectionError(err)
	}
	var r wire.Completion
	if err := wire.UnmarshalCompletion(data, &r); err != nil {
		return nil, httpx.BadResponse(err, data)
	}
	if r.Failed() {
		return nil, inBandError(data)
	}
	if len(r.Choices) == 0 {
		return nil, &llm.Error{Kind: llm.ErrBadResponse, Message: "no choices in " + httpx.Excerpt(data)}
	}
	return response(&r), nil
}
