package completion

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/providertest"
)

// TestConformance runs the tests every provider must pass over the
// fixtures of llama.cpp's /completion and of /v1/completions.
func TestConformance(t *testing.T) {
	t.Run("LlamaCpp", func(t *testing.T) { providertest.Run(t, llamaCppConformance(t)) })
	t.Run("OpenAI", func(t *testing.T) { providertest.Run(t, openAIConformance(t)) })
}

// Answers of llama.cpp's server and of /v1/completions servers.
const (
	loadingModel = `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`
	rateLimited  = `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	errorIn200   = `{"error":{"message":"upstream failed","code":502}}`
)

// options makes a model's options from the suite's.
func options(o providertest.Options) []Option {
	opts := []Option{WithBackoff(o.Pause())}
	if o.NoRetries {
		opts = append(opts, WithMaxRetries(0))
	}
	if o.HTTPClient != nil {
		opts = append(opts, WithHTTPClient(o.HTTPClient), WithHTTPClient(nil)) // nil changes nothing
	}
	return opts
}

// firstEvent is the first event of a stream file.
func firstEvent(t *testing.T, file string) []byte {
	in := readFile(t, file)
	return in[:bytes.Index(in, []byte("\n\n"))+2]
}

// streamErrors are a stream's first event then an error event, then
// nothing, then an event cut off: each ends the stream without a retry.
func streamErrors(t *testing.T, file, errorEvent string, before *llm.Response) []providertest.StreamErrorCase {
	first := firstEvent(t, file)
	return []providertest.StreamErrorCase{
		{Name: "error event", H: providertest.SSE(first, []byte(errorEvent+"\n\n")), Kind: llm.ErrServer, Want: before, Requests: 1},
		{Name: "stream cut before the end", H: providertest.SSE(first), Kind: llm.ErrConnection, Msg: "ended before the answer was complete", Want: before, Requests: 1},
		{Name: "undecodable event", H: providertest.SSE(first, []byte("data: {\"content\n\n")), Kind: llm.ErrBadResponse, Want: before, Requests: 1},
	}
}

func llamaCppConformance(t *testing.T) providertest.Provider {
	want := &llm.Response{
		Content:      "The capital of France is Paris — “la Ville Lumière”.",
		Usage:        ptk.Usage{PromptTokens: 412, CompletionTokens: 16, CacheReadTokens: 384},
		FinishReason: "stop",
		Model:        "qwen2.5-7b-instruct-q4_k_m.gguf",
	}
	return providertest.Provider{
		Route:        "POST /completion",
		New:          func(baseURL string, o providertest.Options) llm.Streamer { return LlamaCpp(baseURL, options(o)...) },
		Request:      ask,
		BadBaseURL:   "localhost:8080",
		RejectsTools: true,

		Generate:    []providertest.Case{{File: "llamacpp.json", Want: want}},
		GenerateDir: ".",
		Stream:      []providertest.Case{{File: "llamacpp.sse", Want: want}},
		StreamDir:   ".",
		EverySplit:  true,
		Head:        firstEvent(t, "llamacpp.sse"),
		HeadText:    "The",

		Errors: []providertest.ErrorCase{
			{Name: "loading model", Status: 503, Body: loadingModel, Kind: llm.ErrServer, Msg: "Loading model"},
			{Name: "wrong key", Status: 401, Body: `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`, Kind: llm.ErrAuth, Msg: "Invalid API Key (check the API key)"},
			{Name: "context exceeded", Status: 400, Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`, Kind: llm.ErrContextLength, Msg: "the request exceeds the available context size, try increasing it"},
			{Name: "not llama.cpp", Status: 404, Body: `404 page not found`, Kind: llm.ErrModelNotFound, Msg: "404 page not found (no such model, or no such endpoint: check the base URL"},
			{Name: "unreadable", Status: 200, Body: `{"content":`, Kind: llm.ErrBadResponse, Msg: "unexpected end of JSON input"},
		},
		StreamErrors: streamErrors(t, "llamacpp.sse", `data: {"error":{"code":500,"message":"Input prompt is too big compared to KV size. Please try increasing KV size.","type":"server_error"}}`, &llm.Response{Content: "The"}),
		Retries: []providertest.RetryCase{
			{Name: "loading model, retried", H: func(ok http.HandlerFunc) http.HandlerFunc {
				return providertest.Counting(ok, reply(503, loadingModel))
			}, Requests: 2},
			{Name: "loading model, gives up", H: func(http.HandlerFunc) http.HandlerFunc { return reply(503, loadingModel) }, Kind: llm.ErrServer, Requests: 3},
		},
		Retried: reply(503, loadingModel),
		RetriedBeforeFirstChunk: map[string]http.HandlerFunc{
			"503":   reply(503, loadingModel),
			"reset": func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
		},
	}
}

func openAIConformance(t *testing.T) providertest.Provider {
	want := &llm.Response{
		Content:      "The capital of France is Paris — “la Ville Lumière”.",
		Usage:        ptk.Usage{PromptTokens: 412, CompletionTokens: 16},
		FinishReason: "stop",
		Model:        "gpt-3.5-turbo-instruct:20230824-v2",
	}
	return providertest.Provider{
		Route:        "POST /v1/completions",
		Path:         "/v1",
		New:          func(baseURL string, o providertest.Options) llm.Streamer { return OpenAI(baseURL, options(o)...) },
		Request:      ask,
		BadBaseURL:   "localhost:8000/v1",
		RejectsTools: true,

		Generate:    []providertest.Case{{File: "openai.json", Want: want}},
		GenerateDir: ".",
		Stream:      []providertest.Case{{File: "openai.sse", Want: want}},
		StreamDir:   ".",
		EverySplit:  true,
		Head:        firstEvent(t, "openai.sse"),
		HeadText:    "The",

		Errors: []providertest.ErrorCase{
			{Name: "chat model", Status: 404, Body: `{"error":{"message":"This is a chat model and not supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?","type":"invalid_request_error","param":"model","code":null}}`, Kind: llm.ErrModelNotFound, Msg: "This is a chat model"},
			{Name: "unknown model", Status: 404, Body: `{"error":{"message":"The model ` + "`gpt-5-instruct`" + ` does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, Kind: llm.ErrModelNotFound, Msg: "The model `gpt-5-instruct` does not exist"},
			{Name: "vLLM context", Status: 400, Body: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5120 tokens.","type":"BadRequestError","param":null,"code":400}`, Kind: llm.ErrContextLength, Msg: "This model's maximum context length is 4096 tokens"},
			{Name: "no choices", Status: 200, Body: `{"id":"cmpl-1","object":"text_completion","choices":[]}`, Kind: llm.ErrBadResponse, Msg: "no choices"},
			{Name: "error in a 200", Status: 200, Body: errorIn200, Kind: llm.ErrServer, Status200: 502, Msg: "upstream failed"},
		},
		StreamErrors: streamErrors(t, "openai.sse", `data: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
			&llm.Response{Content: "The", Model: "gpt-3.5-turbo-instruct:20230824-v2"}),
		Retries: []providertest.RetryCase{
			{Name: "rate limited, retried", H: func(ok http.HandlerFunc) http.HandlerFunc {
				return providertest.Counting(ok, reply(429, rateLimited))
			}, Requests: 2},
			{Name: "error in a 200, retried", H: func(http.HandlerFunc) http.HandlerFunc { return reply(200, errorIn200) }, Kind: llm.ErrServer, Requests: 3},
		},
		Retried: reply(500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`),
		RetriedBeforeFirstChunk: map[string]http.HandlerFunc{
			"500":   reply(500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`),
			"reset": func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
		},
	}
}
