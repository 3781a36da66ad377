package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/providertest"
)

// TestConformance runs the tests every provider must pass over the Chat
// Completions API's fixtures.
func TestConformance(t *testing.T) {
	providertest.Run(t, conformance(t))
}

// The Chat Completions API's answers to the conformance suite.
const (
	rateLimited = `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	serverError = `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`
	vllmError   = `data: {"error": {"object": "error", "message": "This model's maximum context length is 32768 tokens. However, you requested 40100 tokens (100 in the messages, 40000 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": null, "code": 400}}` + "\n\n"
)

func retryAfter(after string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", after)
		reply(http.StatusTooManyRequests, rateLimited)(w, r)
	}
}

func conformance(t *testing.T) providertest.Provider {
	return providertest.Provider{
		Route: "POST /v1/chat/completions",
		Path:  "/v1/",
		New: func(baseURL string, o providertest.Options) llm.Streamer {
			opts := []Option{WithBackoff(o.Pause())}
			if o.NoRetries {
				opts = append(opts, WithMaxRetries(0))
			}
			if o.HTTPClient != nil {
				opts = append(opts, WithHTTPClient(o.HTTPClient), WithHTTPClient(nil)) // nil changes nothing
			}
			return New(baseURL, opts...)
		},
		Request:    ask,
		BadBaseURL: "localhost:11434/v1",

		Generate:       generateTests,
		Stream:         streamTests,
		ReadStream:     collectStream,
		Split:          1,
		WholeForStream: 1,
		Head:           cut(t, "openai_text.sse", 2),
		HeadText:       "The",

		Errors: []providertest.ErrorCase{{
			Name:   "OpenAI wrong key",
			Status: 401,
			Body:   `{"error":{"message":"Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			Kind:   llm.ErrAuth,
			Msg:    "Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys. (check the API key: PTK_API_KEY)",
		}, {
			Name:   "forbidden",
			Status: 403,
			Body:   `{"error":{"message":"Project proj_abc does not have access to model gpt-4o","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			Kind:   llm.ErrAuth,
			Msg:    "does not have access to model gpt-4o",
		}, {
			Name:   "OpenAI unknown model",
			Status: 404,
			Body:   "{\"error\":{\"message\":\"The model `gpt-9` does not exist or you do not have access to it.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"model_not_found\"}}",
			Kind:   llm.ErrModelNotFound,
			Msg:    "The model `gpt-9` does not exist or you do not have access to it.",
		}, {
			Name:   "Ollama unknown model",
			Status: 404,
			Body:   `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`,
			Kind:   llm.ErrModelNotFound,
			Msg:    `model "llama9" not found, try pulling it first`,
		}, {
			Name:   "wrong base URL",
			Status: 404,
			Body:   "404 page not found\n",
			Kind:   llm.ErrModelNotFound,
			Msg:    "404 page not found (no such model, or no such endpoint: check the base URL http://",
		}, {
			Name:   "DeepSeek unknown model",
			Status: 400,
			Body:   `{"error":{"message":"Model Not Exist","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`,
			Kind:   llm.ErrModelNotFound,
			Msg:    "Model Not Exist",
		}, {
			Name:   "OpenRouter unknown model",
			Status: 400,
			Body:   `{"error":{"message":"nonexistent/model is not a valid model ID","code":400},"user_id":"user_2abc"}`,
			Kind:   llm.ErrModelNotFound,
			Msg:    "is not a valid model ID",
		}, {
			Name:   "Ollama model without tools",
			Status: 400,
			Body:   `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error","param":null,"code":null}}`,
			Kind:   llm.ErrToolsUnsupported,
			Msg:    "registry.ollama.ai/library/gemma:2b does not support tools",
		}, {
			Name:   "vLLM without a tool parser",
			Status: 400,
			Body:   `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`,
			Kind:   llm.ErrToolsUnsupported,
			Msg:    `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`,
		}, {
			Name:   "newer vLLM without a tool parser",
			Status: 400,
			Body:   `{"error":{"message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}}`,
			Kind:   llm.ErrToolsUnsupported,
			Msg:    "--enable-auto-tool-choice",
		}, {
			Name:   "llama.cpp without --jinja",
			Status: 500,
			Body:   `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`,
			Kind:   llm.ErrToolsUnsupported,
			Msg:    "tools param requires --jinja flag",
		}, {
			Name:   "generic tools message",
			Status: 400,
			Body:   `{"error":{"message":"Tool use is NOT supported for this model.","type":"invalid_request_error"}}`,
			Kind:   llm.ErrToolsUnsupported,
			Msg:    "Tool use is NOT supported for this model.",
		}, {
			Name:   "OpenAI rate limit",
			Status: 429,
			Header: http.Header{"Retry-After": {"20"}},
			Body:   `{"error":{"message":"Rate limit reached for gpt-4o-mini in organization org-abc on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			Kind:   llm.ErrRateLimited,
			Msg:    "Rate limit reached for gpt-4o-mini",
			Retry:  20 * time.Second,
		}, {
			Name:   "retry-after-ms",
			Status: 429,
			Header: http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}},
			Body:   `{"error":{"message":"Too many requests","type":"rate_limit_error"}}`,
			Kind:   llm.ErrRateLimited,
			Msg:    "Too many requests",
			Retry:  1500 * time.Millisecond,
		}, {
			Name:   "OpenAI server error",
			Status: 500,
			Body:   `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
			Kind:   llm.ErrServer,
			Msg:    "The server had an error while processing your request.",
		}, {
			Name:   "Ollama busy",
			Status: 503,
			Body:   `{"error":"server busy, please try again.  maximum pending requests exceeded"}`,
			Kind:   llm.ErrServer,
			Msg:    "server busy, please try again.  maximum pending requests exceeded",
		}, {
			Name:   "overloaded",
			Status: 529,
			Body:   `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			Kind:   llm.ErrServer,
			Msg:    "Overloaded",
		}, {
			Name:   "proxy error page",
			Status: 502,
			Body:   "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
			Kind:   llm.ErrServer,
			Msg:    "<title>502 Bad Gateway</title>",
		}, {
			Name:   "FastAPI validation error",
			Status: 422,
			Body:   `{"detail":[{"type":"missing","loc":["body","messages"],"msg":"Field required","input":{"model":"m"}}]}`,
			Kind:   llm.ErrBadRequest,
			Msg:    `"msg":"Field required"`,
		}, {
			Name:   "detail string",
			Status: 400,
			Body:   `{"detail":"Invalid request: temperature must be between 0 and 2"}`,
			Kind:   llm.ErrBadRequest,
			Msg:    "Invalid request: temperature must be between 0 and 2",
		}, {
			Name:   "message at the top",
			Status: 400,
			Body:   `{"id":"o-1","message":"Input validation error: 'max_tokens' must be less than 8193","type":"invalid_request_error"}`,
			Kind:   llm.ErrBadRequest,
			Msg:    "Input validation error",
		}, {
			Name:   "empty body",
			Status: 400,
			Kind:   llm.ErrBadRequest,
			Msg:    "Bad Request",
		}, {
			Name:      "200 with an error (OpenRouter)",
			Status:    200,
			Body:      `{"error":{"message":"Provider returned error","code":502,"metadata":{"provider_name":"Together"}},"user_id":"user_2abc"}`,
			Kind:      llm.ErrServer,
			Status200: 502,
			Msg:       "Provider returned error",
		}, {
			Name:   "undecodable 200",
			Status: 200,
			Body:   `{"id":"chatcmpl-1","choices":[{"message":{"content":"Hi"`,
			Kind:   llm.ErrBadResponse,
			Msg:    "unexpected end of JSON input",
		}, {
			Name:   "no choices",
			Status: 200,
			Body:   `{"id":"chatcmpl-1","object":"chat.completion","choices":[]}`,
			Kind:   llm.ErrBadResponse,
			Msg:    "no choices",
		}},
		StreamErrors: []providertest.StreamErrorCase{{
			Name:     "OpenRouter error after the first chunk",
			H:        sseHandler(testdata(t, "stream/openrouter_error.sse")),
			Kind:     llm.ErrServer,
			Msg:      "Provider disconnected unexpectedly",
			Want:     &llm.Response{Content: "Once upon", Model: "meta-llama/llama-3.3-70b-instruct"},
			Requests: 1,
		}, {
			Name:     "vLLM error event, not retried",
			H:        sseHandler([]byte(vllmError)),
			Kind:     llm.ErrContextLength,
			Msg:      "maximum context length is 32768 tokens",
			Want:     &llm.Response{},
			Requests: 1,
		}, {
			Name:     "typed error event",
			H:        sseHandler([]byte("event: error\ndata: {\"message\":\"quota exceeded\",\"code\":429}\n\n")),
			Kind:     llm.ErrRateLimited,
			Msg:      "quota exceeded",
			Want:     &llm.Response{},
			Requests: 3,
		}, {
			Name:     "stream cut before the end",
			H:        sseHandler(cut(t, "openai_text.sse", 3)),
			Kind:     llm.ErrConnection,
			Msg:      "ended before the answer was complete",
			Want:     &llm.Response{Content: "The capital", Model: "gpt-4o-mini-2024-07-18"},
			Requests: 1,
		}, {
			Name: "connection broken after the first chunks",
			H: func(w http.ResponseWriter, r *http.Request) {
				sseHandler(cut(t, "openai_text.sse", 2))(w, r)
				panic(http.ErrAbortHandler)
			},
			Kind:     llm.ErrConnection,
			Msg:      "unexpected EOF",
			Want:     &llm.Response{Content: "The", Model: "gpt-4o-mini-2024-07-18"},
			Requests: 1,
		}, {
			Name:     "empty stream, retried",
			H:        sseHandler(),
			Kind:     llm.ErrConnection,
			Want:     &llm.Response{},
			Requests: 3,
		}, {
			Name:     "undecodable chunk",
			H:        sseHandler([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"choices\":[{\"delta\":\n\n")),
			Kind:     llm.ErrBadResponse,
			Msg:      `unexpected end of JSON input: {"choices":[{"delta":`,
			Want:     &llm.Response{Content: "Hi"},
			Requests: 1,
		}, {
			Name:     "HTTP error",
			H:        reply(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: sk-proj-****abcd.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			Kind:     llm.ErrAuth,
			Msg:      "Incorrect API key provided",
			Want:     &llm.Response{},
			Requests: 1,
		}},
		Retries: []providertest.RetryCase{{
			Name:     "429 with Retry-After, then success",
			H:        func(ok http.HandlerFunc) http.HandlerFunc { return counting(ok, retryAfter("1")) },
			Requests: 2,
			MinTime:  time.Second,
		}, {
			Name:     "500 three times",
			H:        func(ok http.HandlerFunc) http.HandlerFunc { return reply(http.StatusInternalServerError, serverError) },
			Kind:     llm.ErrServer,
			Requests: 3,
		}, {
			Name: "500 twice, then success",
			H: func(ok http.HandlerFunc) http.HandlerFunc {
				fail := reply(http.StatusInternalServerError, serverError)
				return counting(ok, fail, fail)
			},
			Requests: 3,
		}, {
			Name: "400 is not retried",
			H: func(ok http.HandlerFunc) http.HandlerFunc {
				return reply(http.StatusBadRequest, `{"error":{"message":"Invalid value for 'temperature'"}}`)
			},
			Kind:     llm.ErrBadRequest,
			Requests: 1,
		}, {
			Name:     "Retry-After beyond the cap is not waited for",
			H:        func(ok http.HandlerFunc) http.HandlerFunc { return retryAfter("120") },
			Kind:     llm.ErrRateLimited,
			Requests: 1}},
		Retried: reply(http.StatusInternalServerError, `{"error":{"message":"boom"}}`),
		RetriedBeforeFirstChunk: map[string]http.HandlerFunc{
			"503":              reply(http.StatusServiceUnavailable, `{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`),
			"error in a chunk": sseHandler([]byte(`data: {"id":"gen-1","object":"chat.completion.chunk","created":1741601234,"model":"openai/gpt-4o-mini","choices":[],"error":{"code":502,"message":"Provider returned error"}}` + "\n\n")),
			"reset":            func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
		},
	}
}

var generateTests = []providertest.Case{{
	File: "openai_text.json",
	Want: &llm.Response{
		Content:      "The capital of France is Paris.",
		Usage:        ptk.Usage{PromptTokens: 24, CompletionTokens: 8},
		FinishReason: "stop",
		Model:        "gpt-4o-mini-2024-07-18",
	},
}, {
	File: "openai_tools.json",
	Want: &llm.Response{
		Calls: []ptk.Call{
			{ID: "call_3PqV8tYk2mHn0aZ1xQwErT5u", Tool: "get_weather", Args: json.RawMessage(`{"city": "Paris", "unit": "celsius"}`)},
			{ID: "call_Xk9bN2cV7dLq4sWe1rTy6uIo", Tool: "get_time", Args: json.RawMessage(`{"tz": "Europe/Paris"}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 312, CompletionTokens: 48, CacheReadTokens: 256},
		FinishReason: "tool_calls",
		Model:        "gpt-4o-2024-08-06",
	},
}, {
	File: "ollama_reasoning.json",
	Want: &llm.Response{
		Content:      "Paris.",
		Reasoning:    "The user asks for the capital of France.",
		Usage:        ptk.Usage{PromptTokens: 18, CompletionTokens: 40},
		FinishReason: "stop",
		Model:        "qwen3:8b",
	},
}, {
	File: "deepseek_reasoning.json",
	Want: &llm.Response{
		Content:      "9.9 is greater.",
		Reasoning:    "9.11 < 9.9",
		Usage:        ptk.Usage{PromptTokens: 80, CompletionTokens: 21, CacheReadTokens: 64},
		FinishReason: "stop",
		Model:        "deepseek-reasoner",
	},
}, {
	File: "content_parts.json",
	Want: &llm.Response{
		Content:      "Paris.",
		Usage:        ptk.Usage{PromptTokens: 20, CompletionTokens: 11},
		FinishReason: "stop",
		Model:        "magistral-small-2506",
	},
}, {
	File: "arguments_object.json",
	Want: &llm.Response{
		Calls: []ptk.Call{
			{ID: "call_1", Tool: "get_weather", Args: json.RawMessage(`{"city":"Paris","days":3}`)},
			{ID: "c2", Tool: "get_time", Args: json.RawMessage(`{}`)},
		},
		FinishReason: "tool_calls",
		Model:        "local-model",
	},
}}

// collectStream reads an event stream as Stream does, without HTTP.
func collectStream(r io.Reader) (*llm.Response, error) {
	var c llm.Collector
	err := readStream(r, func(ch llm.Chunk) bool {
		c.Add(ch)
		return true
	})
	return c.Response(), err
}
