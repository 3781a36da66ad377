package completion

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
)

// LlamaCppClient is a model served by llama.cpp's native POST /completion.
// It does not change after [LlamaCpp], so one client may serve any number
// of goroutines.
type LlamaCppClient struct{ c client }

var (
	_ llm.Streamer      = (*LlamaCppClient)(nil)
	_ llm.ToolSupporter = (*LlamaCppClient)(nil)
	_ llm.BaseURLer     = (*LlamaCppClient)(nil)
	_ llm.TextCompleter = (*LlamaCppClient)(nil)
)

// CompletesText marks m as a model that reads one flattened prompt
// (llm.Request.Prompt).
func (*LlamaCppClient) CompletesText() {}

// BaseURL returns the base URL, without a trailing slash.
func (m *LlamaCppClient) BaseURL() string { return m.c.t.BaseURL }

// LlamaCpp returns a client for the llama.cpp server (llama-server) at
// baseURL, such as "http://localhost:8080": it posts to baseURL +
// "/completion" with {"prompt", "stop", "cache_prompt": true}, the
// temperature when the request sets one, and "n_predict" when it sets
// MaxTokens. Without MaxTokens n_predict is not sent, so the server's own
// limit holds (-n/--predict; unless set, until the model ends its turn, a
// stop sequence or the context is full).
func LlamaCpp(baseURL string, opts ...Option) *LlamaCppClient {
	return &LlamaCppClient{newClient(baseURL, opts)}
}

// SupportsNativeTools reports false: the endpoint takes a prompt only.
func (*LlamaCppClient) SupportsNativeTools() bool { return false }

// Generate makes one call and returns the whole answer. It makes the call
// again, after a pause, when it failed for a reason that may pass
// ([llm.Retryable]).
func (l *LlamaCppClient) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return l.c.generate(ctx, llamaWire{}, req)
}

// Stream makes one call and returns its answer as it arrives. A call that
// fails before its first chunk is made again, as Generate does. Breaking
// out of the loop, or canceling ctx, closes the connection at once.
func (l *LlamaCppClient) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return l.c.stream(ctx, llamaWire{}, req)
}

type llamaWire struct{}

type llamaRequest struct {
	Prompt      string   `json:"prompt"`
	NPredict    int      `json:"n_predict,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	Stop        []string `json:"stop"`
	Stream      bool     `json:"stream,omitempty"`
	CachePrompt bool     `json:"cache_prompt"`
}

func (llamaWire) path() string { return "/completion" }

func (llamaWire) encode(req llm.Request, prompt string, stream bool) any {
	return llamaRequest{
		Prompt:      prompt,
		NPredict:    max(req.MaxTokens, 0),
		Temperature: req.Temperature,
		Stop:        stopSequences(req.Stop, 0),
		Stream:      stream,
		CachePrompt: true,
	}
}

// llamaResponse is a whole answer, or one event of a stream: its text,
// and, when Stop is true, how it ended and the token counts.
type llamaResponse struct {
	Content  string `json:"content"`
	Stop     bool   `json:"stop"`
	StopType string `json:"stop_type"`
	// Servers before stop_type (2024) say it with three flags.
	StoppedEOS   bool   `json:"stopped_eos"`
	StoppedWord  bool   `json:"stopped_word"`
	StoppedLimit bool   `json:"stopped_limit"`
	Model        string `json:"model"`
	Settings     struct {
		Model string `json:"model"`
	} `json:"generation_settings"`
	TokensEvaluated int `json:"tokens_evaluated"`
	TokensPredicted int `json:"tokens_predicted"`
	Timings         struct {
		CacheN int `json:"cache_n"`
	} `json:"timings"`
	Usage *oaiUsage       `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (llamaWire) decode(data []byte, whole bool) (piece, error) {
	var r llamaResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return piece{}, httpx.BadResponse(err, data)
	}
	if failed(r.Error) {
		return piece{}, inBandError(data)
	}
	p := piece{text: r.Content}
	if !r.Stop && !whole {
		return p, nil
	}
	p.last = true
	p.model = r.Model
	if p.model == "" {
		p.model = r.Settings.Model
	}
	switch {
	case r.StopType == "limit" || r.StoppedLimit:
		p.finish = "length"
	default:
		p.finish = "stop"
	}
	u := ptk.Usage{PromptTokens: r.TokensEvaluated, CompletionTokens: r.TokensPredicted, CacheReadTokens: r.Timings.CacheN}
	if r.Usage != nil {
		u = r.Usage.usage()
	}
	p.usage = &u
	return p, nil
}
