package anthropic

import (
	"net/http"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/providertest"
)

// TestConformance runs the tests every provider must pass over the Messages
// API's fixtures.
func TestConformance(t *testing.T) {
	providertest.Run(t, conformance(t))
}

// The Messages API's answers to the conformance suite.
const (
	rateLimited = `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`
	overloaded  = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
)

func retryAfter(after string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("retry-after", after)
		reply(http.StatusTooManyRequests, rateLimited)(w, r)
	}
}

func conformance(t *testing.T) providertest.Provider {
	inBand := 0 // the status of an error in a 200 answer's stream
	return providertest.Provider{
		Route: "POST /v1/messages",
		Path:  "/",
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
		BadBaseURL: "api.anthropic.com",

		Generate:       generateTests,
		Stream:         streamTests,
		ReadStream:     collectStream,
		EverySplit:     true,
		Split:          0,
		WholeForStream: 1,
		Head:           cut(t, "text.sse", 4),
		HeadText:       "The capital",

		Errors: []providertest.ErrorCase{{
			Name:   "wrong key",
			Status: 401,
			Body:   `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
			Kind:   llm.ErrAuth,
			Msg:    "invalid x-api-key",
		}, {
			Name:   "no permission",
			Status: 403,
			Body:   `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`,
			Kind:   llm.ErrAuth,
			Msg:    "does not have permission",
		}, {
			Name:   "unknown model",
			Status: 404,
			Body:   `{"type":"error","error":{"type":"not_found_error","message":"model: claude-3-opus-2024"},"request_id":"req_011CV9m9tJrM2Cm2HQYQ1xNq"}`,
			Kind:   llm.ErrModelNotFound,
			Msg:    "model: claude-3-opus-2024",
		}, {
			Name:   "Ollama unknown model",
			Status: 404,
			Body:   `{"type":"error","error":{"type":"not_found_error","message":"model \"llama9\" not found, try pulling it first"},"request_id":"req_6a1f0c9e2b7d4e8f3a5c1b0d"}`,
			Kind:   llm.ErrModelNotFound,
			Msg:    `model "llama9" not found, try pulling it first`,
		}, {
			Name:   "wrong base URL",
			Status: 404,
			Body:   "404 page not found\n",
			Kind:   llm.ErrBadRequest,
			Msg:    "404 page not found (check the base URL: the client posts to http://",
		}, {
			Name:   "invalid request",
			Status: 400,
			Body:   `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"}}`,
			Kind:   llm.ErrBadRequest,
			Msg:    "roles must alternate",
		}, {
			Name:   "credit balance",
			Status: 400,
			Body:   `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`,
			Kind:   llm.ErrBadRequest,
			Msg:    "credit balance is too low",
		}, {
			Name:   "Ollama model without tools",
			Status: 400,
			Body:   `{"type":"error","error":{"type":"invalid_request_error","message":"registry.ollama.ai/library/gemma:2b does not support tools"},"request_id":"req_0c3d9a7e51f24b6a8e7d2c1f"}`,
			Kind:   llm.ErrToolsUnsupported,
			Msg:    "registry.ollama.ai/library/gemma:2b does not support tools",
		}, {
			Name:   "request too large",
			Status: 413,
			Body:   `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`,
			Kind:   llm.ErrBadRequest,
			Msg:    "Request exceeds the maximum allowed number of bytes.",
		}, {
			Name:   "rate limit",
			Status: 429,
			Header: http.Header{"Retry-After": {"20"}, "Anthropic-Ratelimit-Requests-Remaining": {"0"}},
			Body:   `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (7f0c1b9e-2a44-4c1e-9d8f-5b3e6a2c0d11) of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."}}`,
			Kind:   llm.ErrRateLimited,
			Msg:    "would exceed the rate limit for your organization",
			Retry:  20 * time.Second,
		}, {
			Name:   "internal error",
			Status: 500,
			Body:   `{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_011CSHpT2vF8mQKfYbA3Rw9z"}`,
			Kind:   llm.ErrServer,
			Msg:    "Internal server error",
		}, {
			Name:   "overloaded",
			Status: 529,
			Body:   `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CV3q6qYvDLzYeMbKkVQvX"}`,
			Kind:   llm.ErrServer,
			Msg:    "Overloaded",
		}, {
			Name:   "proxy error page",
			Status: 502,
			Body:   "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n",
			Kind:   llm.ErrServer,
			Msg:    "<title>502 Bad Gateway</title>",
		}, {
			Name:   "error as a string",
			Status: 400,
			Body:   `{"error":"max_tokens: Field required"}`,
			Kind:   llm.ErrBadRequest,
			Msg:    "max_tokens: Field required",
		}, {
			Name:   "empty body",
			Status: 400,
			Kind:   llm.ErrBadRequest,
			Msg:    "Bad Request",
		}, {
			Name:   "error in a 200 answer",
			Status: 200,
			Body:   `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			Kind:   llm.ErrServer,
			Msg:    "Overloaded",
		}, {
			Name:   "undecodable 200",
			Status: 200,
			Body:   `{"id":"msg_1","type":"message","content":[{"type":"text","text":"Hi"`,
			Kind:   llm.ErrBadResponse,
			Msg:    "unexpected end of JSON input",
		}},
		StreamErrors: []providertest.StreamErrorCase{{
			Name:     "overloaded after the first chunks, with a ping",
			H:        sseHandler(testdata(t, "stream/overloaded.sse")),
			Kind:     llm.ErrServer,
			Msg:      "Overloaded",
			Want:     &llm.Response{Content: "Once upon", Model: "claude-sonnet-4-5-20250929"},
			Requests: 1,
			Status:   &inBand,
		}, {
			Name:     "overloaded before the first chunk, retried",
			H:        sseHandler([]byte(overloadedEvent)),
			Kind:     llm.ErrServer,
			Msg:      "Overloaded",
			Want:     &llm.Response{},
			Requests: 3,
			Status:   &inBand,
		}, {
			Name:     "rate limited before the first chunk, retried",
			H:        sseHandler([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of requests has exceeded your per-minute rate limit\"}}\n\n")),
			Kind:     llm.ErrRateLimited,
			Msg:      "per-minute rate limit",
			Want:     &llm.Response{},
			Requests: 3,
			Status:   &inBand,
		}, {
			Name:     "invalid request event, not retried",
			H:        sseHandler([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 210443 tokens > 200000 maximum\"}}\n\n")),
			Kind:     llm.ErrContextLength,
			Msg:      "prompt is too long",
			Want:     &llm.Response{},
			Requests: 1,
			Status:   &inBand,
		}, {
			Name:     "unknown error type",
			H:        sseHandler(cut(t, "text.sse", 1), []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"brand_new_error\",\"message\":\"Something new\"}}\n\n")),
			Kind:     llm.ErrServer,
			Msg:      "Something new",
			Want:     &llm.Response{Model: "claude-sonnet-4-5-20250929"},
			Requests: 1,
			Status:   &inBand,
		}, {
			Name:     "stream cut before the end",
			H:        sseHandler(cut(t, "text.sse", 4)),
			Kind:     llm.ErrConnection,
			Msg:      "ended before the answer was complete",
			Want:     &llm.Response{Content: "The capital", Model: "claude-sonnet-4-5-20250929"},
			Requests: 1,
			Status:   &inBand,
		}, {
			Name: "connection broken after the first chunks",
			H: func(w http.ResponseWriter, r *http.Request) {
				sseHandler(cut(t, "text.sse", 4))(w, r)
				panic(http.ErrAbortHandler)
			},
			Kind:     llm.ErrConnection,
			Msg:      "unexpected EOF",
			Want:     &llm.Response{Content: "The capital", Model: "claude-sonnet-4-5-20250929"},
			Requests: 1,
			Status:   &inBand,
		}, {
			Name:     "empty stream, retried",
			H:        sseHandler(),
			Kind:     llm.ErrConnection,
			Want:     &llm.Response{},
			Requests: 3,
			Status:   &inBand,
		}, {
			Name:     "undecodable event",
			H:        sseHandler(cut(t, "text.sse", 1), []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\n\n")),
			Kind:     llm.ErrBadResponse,
			Msg:      `unexpected end of JSON input: {"type":"content_block_delta","index":0,`,
			Want:     &llm.Response{Model: "claude-sonnet-4-5-20250929"},
			Requests: 1,
			Status:   &inBand,
		}, {
			Name:     "arguments for a block that is no tool_use",
			H:        sseHandler(cut(t, "text.sse", 2), []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n")),
			Kind:     llm.ErrBadResponse,
			Msg:      "input_json_delta for content block 0",
			Want:     &llm.Response{Model: "claude-sonnet-4-5-20250929"},
			Requests: 1,
			Status:   &inBand,
		}, {
			Name:     "HTTP error",
			H:        reply(http.StatusUnauthorized, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`),
			Kind:     llm.ErrAuth,
			Msg:      "invalid x-api-key",
			Want:     &llm.Response{},
			Requests: 1,
		}},
		Retries: []providertest.RetryCase{{
			Name:     "429 with retry-after, then success",
			H:        func(ok http.HandlerFunc) http.HandlerFunc { return counting(ok, retryAfter("1")) },
			Requests: 2,
			MinTime:  time.Second,
		}, {
			Name:     "529 overloaded, then success",
			H:        func(ok http.HandlerFunc) http.HandlerFunc { return counting(ok, reply(529, overloaded)) },
			Requests: 2,
		}, {
			Name:     "529 three times",
			H:        func(ok http.HandlerFunc) http.HandlerFunc { return reply(529, overloaded) },
			Kind:     llm.ErrServer,
			Requests: 3,
		}, {
			Name: "400 is not retried",
			H: func(ok http.HandlerFunc) http.HandlerFunc {
				return reply(http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Input should be greater than or equal to 1"}}`)
			},
			Kind:     llm.ErrBadRequest,
			Requests: 1,
		}, {
			Name:     "retry-after beyond the cap is not waited for",
			H:        func(ok http.HandlerFunc) http.HandlerFunc { return retryAfter("120") },
			Kind:     llm.ErrRateLimited,
			Requests: 1}},
		Retried: reply(529, overloaded),
		RetriedBeforeFirstChunk: map[string]http.HandlerFunc{
			"529":         reply(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CV3q6qYvDLzYeMbKkVQvX"}`),
			"error event": sseHandler([]byte(overloadedEvent)),
			"reset":       func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
		},
	}
}
