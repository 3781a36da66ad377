// Package ollama is a client for Ollama's native chat API (POST /api/chat),
// which, unlike its OpenAI-compatible /v1, takes the context size per
// request: options.num_ctx. A [Client] is an [llm.Model], an
// [llm.Streamer] and an [llm.Windower]:
//
//	model := ollama.New("http://localhost:11434")
//	model := ollama.New("http://localhost:11434", ollama.WithNumCtx(32768))
//
// It sends tools, format (a JSON Schema, from Request.ResponseSchema: what
// ptools' structured mode asks), think and keep_alive, and reads the text,
// the thinking, the tool calls and the counts.
//
// Ollama cuts a prompt longer than its context without saying so: the
// beginning goes first, which in an agent is the system prompt and the
// tool definitions. The client therefore sends num_ctx with every request
// (the window it reports: WithNumCtx, else the model's Modelfile num_ctx,
// else the context the model is loaded with, else DefaultNumCtx, never
// more than the model was trained for), warns before sending a request it
// estimates will not fit, and reads prompt_eval_count afterwards: a count
// that shows Ollama cut the prompt is an [llm.ErrContextLength] error that
// says how to make room, never an answer.
package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
	"github.com/ptkit/ptk/llm/internal/retry"
)

// DefaultNumCtx is the context size sent for a model whose Modelfile sets
// none and that is not loaded: Ollama's own default (4096 on a machine with
// less than 24 GiB of VRAM) leaves an agent's system prompt and tools
// little room.
const DefaultNumCtx = 8192

// Client is a model served by Ollama's native API. It does not change
// after [New] but for the windows it has learned, so one Client may serve
// any number of goroutines.
type Client struct {
	t         httpx.Transport
	numCtx    int
	think     json.RawMessage
	keepAlive json.RawMessage
	warn      func(string)

	mu      sync.Mutex
	windows map[string]llm.Window
	// ratio (float64 bits) corrects llm.EstimateRequest by what Ollama
	// counted for the requests it read whole.
	ratio atomic.Uint64
}

var (
	_ llm.Model         = (*Client)(nil)
	_ llm.Streamer      = (*Client)(nil)
	_ llm.ProviderNamer = (*Client)(nil)
	_ llm.Windower      = (*Client)(nil)
	_ llm.BaseURLer     = (*Client)(nil)
)

// An Option configures a [Client].
type Option func(*Client)

// WithNumCtx sends num_ctx n, whatever the model's Modelfile says.
func WithNumCtx(n int) Option { return func(c *Client) { c.numCtx = n } }

// WithThink sends think: true or false, or a level ("high", "medium",
// "low") for the models that take one.
func WithThink(v any) Option {
	return func(c *Client) { c.think, _ = json.Marshal(v) }
}

// WithKeepAlive sends keep_alive: how long the model stays loaded after a
// request ("5m", "1h", "-1" for ever, "0" to unload at once).
func WithKeepAlive(d string) Option {
	return func(c *Client) {
		if n, err := strconv.Atoi(d); err == nil {
			c.keepAlive, _ = json.Marshal(n)
			return
		}
		c.keepAlive, _ = json.Marshal(d)
	}
}

// WithWarn says the warnings (a request that will not fit) with f instead
// of slog's default logger.
func WithWarn(f func(msg string)) Option { return func(c *Client) { c.warn = f } }

// WithHTTPClient makes the requests with hc.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.t.SetHTTPClient(hc) } }

// WithMaxRetries sets how many times a failed call is made again: 2 unless
// set; 0 turns retries off.
func WithMaxRetries(n int) Option { return func(c *Client) { c.t.SetMaxRetries(n) } }

// WithBackoff sets the pause before the first retry and its cap.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) { c.t.SetBackoff(base, max) }
}

// New returns a client for the Ollama server at baseURL, such as
// "http://localhost:11434". A trailing /v1 or /api (the OpenAI-compatible
// route's base, or the API's) is dropped.
func New(baseURL string, opts ...Option) *Client {
	c := &Client{t: httpx.New("ollama", Root(baseURL)), windows: map[string]llm.Window{}}
	c.ratio.Store(math.Float64bits(1))
	c.warn = func(msg string) { slog.Warn(msg) }
	for _, o := range opts {
		o(c)
	}
	return c
}

// Root is a base URL without a trailing slash, /v1 or /api: the server's
// root, where Ollama's native API is.
func Root(baseURL string) string {
	u := strings.TrimRight(baseURL, "/")
	for _, suffix := range []string{"/v1", "/api"} {
		u = strings.TrimSuffix(u, suffix)
	}
	return u
}

// BaseURL returns the server's root URL.
func (c *Client) BaseURL() string { return c.t.BaseURL }

// Generate makes one call and returns the whole answer.
func (c *Client) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	body, numCtx, est, err := c.body(ctx, req, false)
	if err != nil {
		return nil, err
	}
	var resp *llm.Response
	var evalCount int
	err = c.t.Do(ctx, func() (bool, error) {
		r, err := c.post(ctx, "/api/chat", body)
		if err != nil {
			return false, err
		}
		defer r.Body.Close()
		data, err := io.ReadAll(r.Body)
		if err != nil {
			return false, httpx.ConnectionError(err)
		}
		var cr chatResponse
		if err := json.Unmarshal(data, &cr); err != nil {
			return false, httpx.BadResponse(err, data)
		}
		if cr.Error != "" {
			return false, inBand(cr.Error)
		}
		resp, evalCount = response(&cr), cr.PromptEvalCount
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if err := c.check(req.Model, est, evalCount, numCtx); err != nil {
		return nil, err
	}
	return resp, nil
}

// ProviderName is "ollama" (llm.ProviderNamer).
func (c *Client) ProviderName() string { return "ollama" }

// Stream makes one call and returns its answer as it arrives, line by
// line. A prompt Ollama cut is an error at the end of the stream.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	var numCtx, est int
	return c.t.Stream(ctx, func() ([]byte, error) {
		b, n, e, err := c.body(ctx, req, true)
		numCtx, est = n, e
		return b, err
	}, func(ctx context.Context, body []byte, yield func(llm.Chunk) bool) error {
		r, err := c.post(ctx, "/api/chat", body)
		if err != nil {
			return err
		}
		defer r.Body.Close()
		return c.readStream(r.Body, req.Model, est, numCtx, yield)
	})
}

// readStream reads the lines of a streamed answer up to the one that says
// it is done.
func (c *Client) readStream(body io.Reader, model string, est, numCtx int, yield func(llm.Chunk) bool) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	calls := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var cr chatResponse
		if err := json.Unmarshal(line, &cr); err != nil {
			return httpx.BadResponse(err, line)
		}
		if cr.Error != "" {
			return inBand(cr.Error)
		}
		ch := llm.Chunk{Text: cr.Message.Content, Reasoning: cr.Message.Thinking, Model: cr.Model}
		for _, tc := range cr.Message.ToolCalls {
			if ch.Call != nil {
				if !yield(ch) {
					return retry.ErrStopped
				}
				ch = llm.Chunk{}
			}
			ch.Call = &llm.CallDelta{Index: calls, ID: "call_" + strconv.Itoa(calls+1), Tool: tc.Function.Name, ArgsDelta: args(tc.Function.Arguments)}
			calls++
		}
		if cr.Done {
			if err := c.check(model, est, cr.PromptEvalCount, numCtx); err != nil {
				return err
			}
			u := usage(&cr)
			ch.Usage, ch.FinishReason = &u, finish(&cr, calls)
		}
		if ch != (llm.Chunk{}) && !yield(ch) {
			return retry.ErrStopped
		}
		if cr.Done {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return httpx.StreamError(err)
	}
	return httpx.Incomplete()
}

// body builds the request's body, with the num_ctx it sends and the
// prompt's estimated tokens, and warns when they do not fit.
func (c *Client) body(ctx context.Context, req llm.Request, stream bool) (body []byte, numCtx, est int, err error) {
	w, _ := c.ContextWindow(ctx, req.Model)
	numCtx = w.Tokens
	cr := chatRequest{Model: req.Model, Stream: stream, Format: req.ResponseSchema, Think: c.think, KeepAlive: c.keepAlive,
		Options: map[string]any{"num_ctx": numCtx}}
	if req.Temperature != nil {
		cr.Options["temperature"] = *req.Temperature
	}
	if req.MaxTokens > 0 {
		cr.Options["num_predict"] = req.MaxTokens
	}
	if len(req.Stop) > 0 {
		cr.Options["stop"] = req.Stop
	}
	for k, v := range req.Extra {
		// think, keep_alive and format given per request; options merged.
		switch k {
		case "think":
			cr.Think = v
		case "keep_alive":
			cr.KeepAlive = v
		case "format":
			cr.Format = v
		case "options":
			var o map[string]any
			if json.Unmarshal(v, &o) == nil {
				for ok, ov := range o {
					if ok != "num_ctx" {
						cr.Options[ok] = ov
					}
				}
			}
		}
	}
	for _, m := range req.Messages {
		cr.Messages = append(cr.Messages, toWire(m))
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		cr.Tools = append(cr.Tools, tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	body, err = json.Marshal(cr)
	if err != nil {
		return nil, 0, 0, httpx.BadRequest(err)
	}
	est = c.estimate(req)
	if est > numCtx {
		c.warn(fmt.Sprintf("ollama: the request to %s is about %d tokens and its context (num_ctx) is %d (%s): Ollama would cut its beginning, the system prompt and the tools first. %s",
			req.Model, est, numCtx, w.Source, fix(numCtx, w.Trained)))
	}
	return body, numCtx, est, nil
}

// estimate is the request's tokens, estimated and corrected by what Ollama
// counted before.
func (c *Client) estimate(req llm.Request) int {
	return int(math.Ceil(float64(llm.EstimateRequest(req)) * math.Float64frombits(c.ratio.Load())))
}

// fix says how to give a model more context.
func fix(numCtx, trained int) string {
	more := numCtx * 2
	if trained > 0 {
		more = min(more, trained)
	}
	return fmt.Sprintf("To make room: ptk run --context %d (sent as num_ctx), PARAMETER num_ctx %d in a Modelfile, or OLLAMA_CONTEXT_LENGTH=%d ollama serve.", more, more, more)
}

// check reads the prompt's count as Ollama gave it: a count that shows it
// cut the prompt is an ErrContextLength. Ollama keeps half its context of a
// prompt that does not fit (older versions all of it), so when what was
// sent was near the context or past it, a count below it near half the
// context or near all of it is a cut prompt, and so is one far below it
// (under 60% of the estimate, which is within about 20% once corrected).
// Far from the context, a count never reads as a cut: a model's tokenizer
// may count much less than the estimate. A count that
// is not a cut teaches the client how Ollama counts.
func (c *Client) check(model string, est, count, numCtx int) error {
	if count <= 0 || numCtx <= 0 {
		return nil // Ollama counted nothing (a cached prompt)
	}
	slack := numCtx/20 + 8
	near := est*10 >= numCtx*9                           // what was sent was near the context or past it
	cut := near && (float64(count) < 0.6*float64(est) || // far below what was sent
		float64(count) < 0.8*float64(est) && (abs(count-numCtx/2) <= slack || count >= numCtx-slack))
	if !cut {
		raw := float64(est) / math.Float64frombits(c.ratio.Load())
		if raw > 0 {
			c.ratio.Store(math.Float64bits(min(max(float64(count)/raw, 0.25), 4)))
		}
		return nil
	}
	c.mu.Lock()
	trained := c.windows[model].Trained
	c.mu.Unlock()
	return &llm.Error{Kind: llm.ErrContextLength, Message: fmt.Sprintf(
		"Ollama cut the prompt to fit %s's context (num_ctx=%d): it read %d tokens of about %d sent (prompt_eval_count), without the beginning, where the system prompt and the tools are. %s",
		model, numCtx, count, est, fix(numCtx, trained))}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// toWire maps a message to Ollama's: calls with their arguments as a JSON
// object, a tool result with its tool's name.
func toWire(m ptk.Message) message {
	out := message{Role: string(m.Role), Content: m.Content}
	if m.Role == ptk.RoleTool {
		out.ToolName = m.Tool
	}
	for _, call := range m.Calls {
		var tc toolCall
		tc.Function.Name = call.Tool
		tc.Function.Arguments = objectArgs(call.Args)
		out.ToolCalls = append(out.ToolCalls, tc)
	}
	return out
}

// objectArgs is a call's arguments as a JSON object, {} when the model
// wrote something else: Ollama takes only an object.
func objectArgs(raw json.RawMessage) json.RawMessage {
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil || o == nil {
		return json.RawMessage("{}")
	}
	return raw
}

// args is a call's arguments as JSON text: Ollama sends an object.
func args(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil { // a server that sends a string
		return s
	}
	return string(raw)
}

func response(cr *chatResponse) *llm.Response {
	r := &llm.Response{Content: cr.Message.Content, Reasoning: cr.Message.Thinking, Model: cr.Model, Usage: usage(cr)}
	for i, tc := range cr.Message.ToolCalls {
		r.Calls = append(r.Calls, ptk.Call{ID: "call_" + strconv.Itoa(i+1), Tool: tc.Function.Name, Args: json.RawMessage(args(tc.Function.Arguments))})
	}
	r.FinishReason = finish(cr, len(r.Calls))
	return r
}

func usage(cr *chatResponse) ptk.Usage {
	return ptk.Usage{PromptTokens: cr.PromptEvalCount, CompletionTokens: cr.EvalCount}
}

func finish(cr *chatResponse, calls int) string {
	switch {
	case calls > 0:
		return "tool_calls"
	case cr.DoneReason == "":
		return "stop"
	}
	return cr.DoneReason
}

// post sends a JSON body to path.
func (c *Client) post(ctx context.Context, path string, body []byte) (*http.Response, error) {
	return c.t.Post(ctx, c.t.BaseURL+path, body, httpx.JSON(false), httpError)
}

func httpError(status int, h http.Header, body []byte) *llm.Error {
	msg, _ := httpx.ErrorMessage(body)
	return httpx.StatusError(status, h, msg, kinds.Kind)
}

func inBand(msg string) *llm.Error {
	return &llm.Error{Kind: kinds.Kind(0, msg), Message: msg}
}

// kinds classifies Ollama's errors: "registry.ollama.ai/library/gemma:2b
// does not support tools", "model \"x\" not found, try pulling it first".
var kinds = httpx.Classifier{
	ToolsUnsupported: []string{"does not support tools"},
	ModelNotFound: func(status int, m string) bool {
		return status == http.StatusNotFound || strings.Contains(m, "model") && strings.Contains(m, "not found")
	},
}
