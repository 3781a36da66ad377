package gemini

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/providertest"
)

// TestConformance runs the tests every provider must pass over the Gemini
// API's fixtures.
func TestConformance(t *testing.T) {
	providertest.Run(t, conformance(t))
}

func conformance(t *testing.T) providertest.Provider {
	const overloaded = `{"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}`
	return providertest.Provider{
		Route: "POST /v1beta/models/{call}",
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
		BadBaseURL: "generativelanguage.googleapis.com",

		Generate:       generateTests,
		Stream:         streamTests,
		ReadStream:     collectStream,
		EverySplit:     true,
		Split:          2,
		WholeForStream: -1, // streamGenerateContent is another endpoint
		Head:           cut(t, "text.sse", 1),
		HeadText:       "The capital of France",

		Errors: []providertest.ErrorCase{{
			Name:   "API key not valid",
			Status: 400,
			Body:   apiKeyInvalid,
			Kind:   llm.ErrAuth,
			Msg:    "API key not valid. Please pass a valid API key. (check the API key)",
		}, {
			Name:   "API key expired",
			Status: 400,
			Body:   `{"error": {"code": 400, "message": "API key expired. Please renew the API key.", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}`,
			Kind:   llm.ErrAuth,
			Msg:    "API key expired",
		}, {
			Name:   "no key",
			Status: 403,
			Body:   `{"error": {"code": 403, "message": "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", "status": "PERMISSION_DENIED"}}`,
			Kind:   llm.ErrAuth,
			Msg:    "Method doesn't allow unregistered callers",
		}, {
			Name:   "unauthenticated",
			Status: 401,
			Body:   `{"error": {"code": 401, "message": "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.", "status": "UNAUTHENTICATED"}}`,
			Kind:   llm.ErrAuth,
			Msg:    "invalid authentication credentials",
		}, {
			Name:   "unknown model",
			Status: 404,
			Body:   notFound,
			Kind:   llm.ErrModelNotFound,
			Msg:    "models/gemini-9-pro is not found for API version v1beta",
		}, {
			Name:   "wrong base URL",
			Status: 404,
			Body:   "<!DOCTYPE html>\n<html lang=en>\n  <title>Error 404 (Not Found)!!1</title>\n",
			Kind:   llm.ErrModelNotFound,
			Msg:    "(no such model, or no such endpoint: check the base URL http://",
		}, {
			Name:   "quota, with RetryInfo",
			Status: 429,
			Header: http.Header{"Retry-After": {"30"}},
			Body:   quotaExceeded,
			Kind:   llm.ErrRateLimited,
			Msg:    "You exceeded your current quota",
			Retry:  time.Second,
		}, {
			Name:   "quota, with Retry-After only",
			Status: 429,
			Header: http.Header{"Retry-After": {"7"}},
			Body:   `{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}}`,
			Kind:   llm.ErrRateLimited,
			Msg:    "Resource has been exhausted",
			Retry:  7 * time.Second,
		}, {
			Name:   "as an array",
			Status: 503,
			Body:   "[" + unavailable + "]",
			Kind:   llm.ErrServer,
			Msg:    "The model is overloaded. Please try again later.",
		}, {
			Name:   "internal",
			Status: 500,
			Body:   `{"error": {"code": 500, "message": "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", "status": "INTERNAL"}}`,
			Kind:   llm.ErrServer,
			Msg:    "An internal error has occurred.",
		}, {
			Name:   "deadline exceeded",
			Status: 504,
			Body:   `{"error": {"code": 504, "message": "Deadline expired before operation could complete.", "status": "DEADLINE_EXCEEDED"}}`,
			Kind:   llm.ErrServer,
			Msg:    "Deadline expired",
		}, {
			Name:   "invalid argument",
			Status: 400,
			Body:   `{"error": {"code": 400, "message": "* GenerateContentRequest.contents: contents is not specified\n", "status": "INVALID_ARGUMENT"}}`,
			Kind:   llm.ErrBadRequest,
			Msg:    "contents is not specified",
		}, {
			Name:   "location not supported",
			Status: 400,
			Body:   `{"error": {"code": 400, "message": "User location is not supported for the API use.", "status": "FAILED_PRECONDITION"}}`,
			Kind:   llm.ErrBadRequest,
			Msg:    "User location is not supported",
		}, {
			Name:   "model without function calling",
			Status: 400,
			Body:   `{"error": {"code": 400, "message": "Function calling is not enabled for models/gemma-3-27b-it", "status": "INVALID_ARGUMENT"}}`,
			Kind:   llm.ErrToolsUnsupported,
			Msg:    "Function calling is not enabled for models/gemma-3-27b-it",
		}, {
			Name:   "empty body",
			Status: 400,
			Kind:   llm.ErrBadRequest,
			Msg:    "Bad Request",
		}, {
			Name:      "200 with an error",
			Status:    200,
			Body:      unavailable,
			Kind:      llm.ErrServer,
			Status200: 503,
			Msg:       "The model is overloaded",
		}, {
			Name:   "undecodable 200",
			Status: 200,
			Body:   `{"candidates": [{"content": {"parts": [{"text": "Hi"`,
			Kind:   llm.ErrBadResponse,
			Msg:    "unexpected end of JSON input",
		}, {
			Name:   "no candidates",
			Status: 200,
			Body:   `{"usageMetadata": {"promptTokenCount": 4, "totalTokenCount": 4}, "modelVersion": "gemini-2.5-flash"}`,
			Kind:   llm.ErrBadResponse,
			Msg:    "no candidates",
		}},
		StreamErrors: []providertest.StreamErrorCase{{
			Name:     "error event after the first chunk",
			H:        sseHandler(cut(t, "text.sse", 1), []byte("data: "+overloaded+"\r\n\r\n")),
			Kind:     llm.ErrServer,
			Msg:      "The model is overloaded",
			Want:     &llm.Response{Content: "The capital of France", Model: "gemini-2.5-flash"},
			Requests: 1,
		}, {
			Name:     "stream cut before the end",
			H:        sseHandler(cut(t, "text.sse", 2)),
			Kind:     llm.ErrConnection,
			Msg:      "ended before the answer was complete",
			Want:     &llm.Response{Content: "The capital of France is Paris — “la Ville", Model: "gemini-2.5-flash"},
			Requests: 1,
		}, {
			Name: "connection broken after the first chunk",
			H: func(w http.ResponseWriter, r *http.Request) {
				sseHandler(cut(t, "text.sse", 1))(w, r)
				panic(http.ErrAbortHandler)
			},
			Kind:     llm.ErrConnection,
			Msg:      "unexpected EOF",
			Want:     &llm.Response{Content: "The capital of France", Model: "gemini-2.5-flash"},
			Requests: 1,
		}, {
			Name:     "empty stream, retried",
			H:        sseHandler(),
			Kind:     llm.ErrConnection,
			Want:     &llm.Response{},
			Requests: 3,
		}, {
			Name:     "undecodable event",
			H:        sseHandler([]byte("data: {\"candidates\": [{\"content\": \r\n\r\n")),
			Kind:     llm.ErrBadResponse,
			Msg:      `unexpected end of JSON input: {"candidates": [{"content":`,
			Want:     &llm.Response{},
			Requests: 1,
		}, {
			Name:     "HTTP error",
			H:        reply(http.StatusBadRequest, apiKeyInvalid),
			Kind:     llm.ErrAuth,
			Msg:      "API key not valid",
			Want:     &llm.Response{},
			Requests: 1,
		}},
		Retries: []providertest.RetryCase{{
			Name: "429 with a retryDelay, then success",
			H: func(ok http.HandlerFunc) http.HandlerFunc {
				return counting(ok, reply(http.StatusTooManyRequests, quotaExceeded))
			},
			Requests: 2,
			MinTime:  time.Second,
		}, {
			Name: "503 twice, then success",
			H: func(ok http.HandlerFunc) http.HandlerFunc {
				return counting(ok, reply(503, unavailable), reply(503, unavailable))
			},
			Requests: 3,
		}, {
			Name:     "503 three times",
			H:        func(ok http.HandlerFunc) http.HandlerFunc { return reply(503, unavailable) },
			Kind:     llm.ErrServer,
			Requests: 3,
		}, {
			Name:     "a wrong key is not retried",
			H:        func(ok http.HandlerFunc) http.HandlerFunc { return reply(http.StatusBadRequest, apiKeyInvalid) },
			Kind:     llm.ErrAuth,
			Requests: 1,
		}, {
			Name:     "404 is not retried",
			H:        func(ok http.HandlerFunc) http.HandlerFunc { return reply(http.StatusNotFound, notFound) },
			Kind:     llm.ErrModelNotFound,
			Requests: 1,
		}, {
			Name: "a retryDelay beyond the cap is not waited for",
			H: func(ok http.HandlerFunc) http.HandlerFunc {
				return reply(http.StatusTooManyRequests, strings.Replace(quotaExceeded, `"1s"`, `"3600s"`, 1))
			},
			Kind:     llm.ErrRateLimited,
			Requests: 1}},
		Retried: reply(http.StatusServiceUnavailable, unavailable),
		RetriedBeforeFirstChunk: map[string]http.HandlerFunc{
			"503":         reply(http.StatusServiceUnavailable, `{"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}`),
			"error event": sseHandler([]byte(`data: {"error": {"code": 500,"message": "An internal error has occurred.","status": "INTERNAL"}}` + "\r\n\r\n")),
			"reset":       func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
		},
	}
}
