package completion

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
)

// OpenAIClient is a model served by the legacy OpenAI Completions API
// (POST /v1/completions), as OpenAI (gpt-3.5-turbo-instruct, davinci-002),
// vLLM, llama.cpp and Ollama serve it. It does not change after [OpenAI],
// so one client may serve any number of goroutines.
type OpenAIClient struct{ c client }

var (
	_ llm.Streamer      = (*OpenAIClient)(nil)
	_ llm.ToolSupporter = (*OpenAIClient)(nil)
	_ llm.BaseURLer     = (*OpenAIClient)(nil)
	_ llm.TextCompleter = (*OpenAIClient)(nil)
)

// CompletesText marks m as a model that reads one flattened prompt
// (llm.Request.Prompt).
func (*OpenAIClient) CompletesText() {}

// BaseURL returns the base URL, without a trailing slash.
func (m *OpenAIClient) BaseURL() string { return m.c.t.BaseURL }

// DefaultMaxTokens is the max_tokens [OpenAIClient] sends when the request
// sets no MaxTokens: the API's own default is 16.
const DefaultMaxTokens = 1024

// maxStops is how many stop sequences OpenAI's /v1/completions takes.
const maxStops = 4

// OpenAI returns a client for the Completions API at baseURL, such as
// "https://api.openai.com/v1" or "http://localhost:8000/v1": it posts to
// baseURL + "/completions". It sends the request's Model, the prompt,
// max_tokens (MaxTokens, or [DefaultMaxTokens]), the temperature when the
// request sets one, and at most four stop sequences, as OpenAI allows: the
// turn headers "\nUSER:" and "\nTOOL:" and the first two of the request's;
// the text is cut at the others after it arrives.
func OpenAI(baseURL string, opts ...Option) *OpenAIClient {
	return &OpenAIClient{newClient(baseURL, opts)}
}

// SupportsNativeTools reports false: the endpoint takes a prompt only.
func (*OpenAIClient) SupportsNativeTools() bool { return false }

// Generate makes one call and returns the whole answer. It makes the call
// again, after a pause, when it failed for a reason that may pass
// ([llm.Retryable]).
func (o *OpenAIClient) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return o.c.generate(ctx, oaiWire{}, req)
}

// Stream makes one call and returns its answer as it arrives, asking for
// the usage at the end ("stream_options"). A call that fails before its
// first chunk is made again, as Generate does. Breaking out of the loop, or
// canceling ctx, closes the connection at once.
func (o *OpenAIClient) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return o.c.stream(ctx, oaiWire{}, req)
}

type oaiWire struct{}

type oaiRequest struct {
	Model         string   `json:"model,omitempty"`
	Prompt        string   `json:"prompt"`
	MaxTokens     int      `json:"max_tokens"`
	Temperature   *float64 `json:"temperature,omitempty"`
	Stop          []string `json:"stop"`
	Stream        bool     `json:"stream,omitempty"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
}

func (oaiWire) path() string { return "/completions" }

func (oaiWire) encode(req llm.Request, prompt string, stream bool) any {
	r := oaiRequest{
		Model:       req.Model,
		Prompt:      prompt,
		MaxTokens:   req.MaxTokens,
		Temperature: req.Temperature,
		Stop:        stopSequences(req.Stop, maxStops),
	}
	if r.MaxTokens <= 0 {
		r.MaxTokens = DefaultMaxTokens
	}
	if stream {
		r.Stream = true
		r.StreamOptions = &struct {
			IncludeUsage bool `json:"include_usage"`
		}{true}
	}
	return r
}

// oaiResponse is a whole answer or one chunk of a stream (the last of which
// may hold only the usage, with no choices).
type oaiResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Text         string `json:"text"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage  *oaiUsage       `json:"usage"`
	Error  json.RawMessage `json:"error"`
	Object string          `json:"object"`
}

type oaiUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *oaiUsage) usage() ptk.Usage {
	out := ptk.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if d := u.PromptTokensDetails; d != nil {
		out.CacheReadTokens = d.CachedTokens
	}
	return out
}

func (oaiWire) decode(data []byte, whole bool) (piece, error) {
	var r oaiResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return piece{}, httpx.BadResponse(err, data)
	}
	if failed(r.Error) || r.Object == "error" {
		// vLLM before 0.6 sent the error as the whole object.
		return piece{}, inBandError(data)
	}
	if whole && len(r.Choices) == 0 {
		return piece{}, &llm.Error{Kind: llm.ErrBadResponse, Message: "no choices in " + httpx.Excerpt(data)}
	}
	p := piece{model: r.Model}
	if len(r.Choices) > 0 {
		p.text, p.finish = r.Choices[0].Text, r.Choices[0].FinishReason
	}
	if r.Usage != nil {
		u := r.Usage.usage()
		p.usage = &u
	}
	return p, nil
}
