package gemini

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
)

// Error bodies as the Gemini API sends them.
const (
	apiKeyInvalid = `{
  "error": {
    "code": 400,
    "message": "API key not valid. Please pass a valid API key.",
    "status": "INVALID_ARGUMENT",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {
          "service": "generativelanguage.googleapis.com"
        }
      },
      {
        "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
        "locale": "en-US",
        "message": "API key not valid. Please pass a valid API key."
      }
    ]
  }
}
`
	quotaExceeded = `{
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.5-flash\nPlease retry in 1.160475093s.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [
          {
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
            "quotaDimensions": {
              "location": "global",
              "model": "gemini-2.5-flash"
            },
            "quotaValue": "10"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.Help",
        "links": [
          {
            "description": "Learn more about Gemini API quotas",
            "url": "https://ai.google.dev/gemini-api/docs/rate-limits"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "1s"
      }
    ]
  }
}
`
	unavailable = `{
  "error": {
    "code": 503,
    "message": "The model is overloaded. Please try again later.",
    "status": "UNAVAILABLE"
  }
}
`
	notFound = `{
  "error": {
    "code": 404,
    "message": "models/gemini-9-pro is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.",
    "status": "NOT_FOUND"
  }
}
`
)

func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		wantKind   error
		wantStatus int // for a 200 answer only: the status the error reports
		wantMsg    string
		wantRetry  time.Duration
	}{{
		name:     "API key not valid",
		status:   400,
		body:     apiKeyInvalid,
		wantKind: llm.ErrAuth,
		wantMsg:  "API key not valid. Please pass a valid API key. (check the API key)",
	}, {
		name:     "API key expired",
		status:   400,
		body:     `{"error": {"code": 400, "message": "API key expired. Please renew the API key.", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}`,
		wantKind: llm.ErrAuth,
		wantMsg:  "API key expired",
	}, {
		name:     "no key",
		status:   403,
		body:     `{"error": {"code": 403, "message": "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", "status": "PERMISSION_DENIED"}}`,
		wantKind: llm.ErrAuth,
		wantMsg:  "Method doesn't allow unregistered callers",
	}, {
		name:     "unauthenticated",
		status:   401,
		body:     `{"error": {"code": 401, "message": "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.", "status": "UNAUTHENTICATED"}}`,
		wantKind: llm.ErrAuth,
		wantMsg:  "invalid authentication credentials",
	}, {
		name:     "unknown model",
		status:   404,
		body:     notFound,
		wantKind: llm.ErrModelNotFound,
		wantMsg:  "models/gemini-9-pro is not found for API version v1beta",
	}, {
		name:     "wrong base URL",
		status:   404,
		body:     "<!DOCTYPE html>\n<html lang=en>\n  <title>Error 404 (Not Found)!!1</title>\n",
		wantKind: llm.ErrModelNotFound,
		wantMsg:  "(no such model, or no such endpoint: check the base URL http://",
	}, {
		name:      "quota, with RetryInfo",
		status:    429,
		header:    http.Header{"Retry-After": {"30"}},
		body:      quotaExceeded,
		wantKind:  llm.ErrRateLimited,
		wantMsg:   "You exceeded your current quota",
		wantRetry: time.Second,
	}, {
		name:      "quota, with Retry-After only",
		status:    429,
		header:    http.Header{"Retry-After": {"7"}},
		body:      `{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}}`,
		wantKind:  llm.ErrRateLimited,
		wantMsg:   "Resource has been exhausted",
		wantRetry: 7 * time.Second,
	}, {
		name:     "as an array",
		status:   503,
		body:     "[" + unavailable + "]",
		wantKind: llm.ErrServer,
		wantMsg:  "The model is overloaded. Please try again later.",
	}, {
		name:     "internal",
		status:   500,
		body:     `{"error": {"code": 500, "message": "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", "status": "INTERNAL"}}`,
		wantKind: llm.ErrServer,
		wantMsg:  "An internal error has occurred.",
	}, {
		name:     "deadline exceeded",
		status:   504,
		body:     `{"error": {"code": 504, "message": "Deadline expired before operation could complete.", "status": "DEADLINE_EXCEEDED"}}`,
		wantKind: llm.ErrServer,
		wantMsg:  "Deadline expired",
	}, {
		name:     "invalid argument",
		status:   400,
		body:     `{"error": {"code": 400, "message": "* GenerateContentRequest.contents: contents is not specified\n", "status": "INVALID_ARGUMENT"}}`,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "contents is not specified",
	}, {
		name:     "location not supported",
		status:   400,
		body:     `{"error": {"code": 400, "message": "User location is not supported for the API use.", "status": "FAILED_PRECONDITION"}}`,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "User location is not supported",
	}, {
		name:     "model without function calling",
		status:   400,
		body:     `{"error": {"code": 400, "message": "Function calling is not enabled for models/gemma-3-27b-it", "status": "INVALID_ARGUMENT"}}`,
		wantKind: llm.ErrToolsUnsupported,
		wantMsg:  "Function calling is not enabled for models/gemma-3-27b-it",
	}, {
		name:     "empty body",
		status:   400,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "Bad Request",
	}, {
		name:       "200 with an error",
		status:     200,
		body:       unavailable,
		wantKind:   llm.ErrServer,
		wantStatus: 503,
		wantMsg:    "The model is overloaded",
	}, {
		name:     "undecodable 200",
		status:   200,
		body:     `{"candidates": [{"content": {"parts": [{"text": "Hi"`,
		wantKind: llm.ErrBadResponse,
		wantMsg:  "unexpected end of JSON input",
	}, {
		name:     "no candidates",
		status:   200,
		body:     `{"usageMetadata": {"promptTokenCount": 4, "totalTokenCount": 4}, "modelVersion": "gemini-2.5-flash"}`,
		wantKind: llm.ErrBadResponse,
		wantMsg:  "no candidates",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header()[k] = v
				}
				reply(tt.status, tt.body)(w, r)
			}, WithMaxRetries(0))
			_, err := c.Generate(t.Context(), ask)
			e := checkError(t, err, tt.wantKind, tt.wantMsg)
			wantStatus := tt.status
			if tt.status == http.StatusOK {
				wantStatus = tt.wantStatus
			}
			if e.Status != wantStatus {
				t.Errorf("status = %d, want %d", e.Status, wantStatus)
			}
			if e.RetryAfter != tt.wantRetry {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.wantRetry)
			}
		})
	}
}

func TestLongErrorBody(t *testing.T) {
	body := strings.Repeat("é", 1000)
	c, _ := serve(t, reply(http.StatusBadRequest, body), WithMaxRetries(0))
	_, err := c.Generate(t.Context(), ask)
	e := checkError(t, err, llm.ErrBadRequest, "éé")
	if len(e.Message) > 510 || !strings.HasSuffix(e.Message, "é…") {
		t.Errorf("message of %d bytes ends %q, want about 500 ending in whole runes and …", len(e.Message), e.Message[len(e.Message)-8:])
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	ok := func(t *testing.T) http.HandlerFunc {
		return reply(http.StatusOK, string(testdata(t, "generate/text.json")))
	}
	abort := func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }
	tests := []struct {
		name     string
		h        func(t *testing.T) http.HandlerFunc
		wantKind error // nil: success
		requests int32
		minTime  time.Duration
	}{{
		name: "429 with a retryDelay, then success",
		h: func(t *testing.T) http.HandlerFunc {
			return counting(ok(t), reply(http.StatusTooManyRequests, quotaExceeded))
		},
		requests: 2,
		minTime:  time.Second,
	}, {
		name: "503 twice, then success",
		h: func(t *testing.T) http.HandlerFunc {
			return counting(ok(t), reply(503, unavailable), reply(503, unavailable))
		},
		requests: 3,
	}, {
		name:     "503 three times",
		h:        func(t *testing.T) http.HandlerFunc { return reply(503, unavailable) },
		wantKind: llm.ErrServer,
		requests: 3,
	}, {
		name:     "a wrong key is not retried",
		h:        func(t *testing.T) http.HandlerFunc { return reply(http.StatusBadRequest, apiKeyInvalid) },
		wantKind: llm.ErrAuth,
		requests: 1,
	}, {
		name:     "404 is not retried",
		h:        func(t *testing.T) http.HandlerFunc { return reply(http.StatusNotFound, notFound) },
		wantKind: llm.ErrModelNotFound,
		requests: 1,
	}, {
		name: "a retryDelay beyond the cap is not waited for",
		h: func(t *testing.T) http.HandlerFunc {
			return reply(http.StatusTooManyRequests, strings.Replace(quotaExceeded, `"1s"`, `"3600s"`, 1))
		},
		wantKind: llm.ErrRateLimited,
		requests: 1,
	}, {
		name:     "connection reset, then success",
		h:        func(t *testing.T) http.HandlerFunc { return counting(ok(t), abort) },
		requests: 2,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, n := serve(t, tt.h(t))
			start := time.Now()
			resp, err := c.Generate(t.Context(), ask)
			if tt.wantKind == nil {
				if err != nil || resp.Content == "" {
					t.Fatalf("Generate = %v, %v; want the answer", resp, err)
				}
			} else if !errors.Is(err, tt.wantKind) {
				t.Fatalf("err = %v, want %v", err, tt.wantKind)
			}
			if n.Load() != tt.requests {
				t.Errorf("%d requests, want %d", n.Load(), tt.requests)
			}
			if d := time.Since(start); d < tt.minTime {
				t.Errorf("took %v, want at least %v", d, tt.minTime)
			}
		})
	}
}

func TestNoRetryAfterCancel(t *testing.T) {
	c, n := serve(t, reply(http.StatusServiceUnavailable, unavailable), WithBackoff(10*time.Second, 10*time.Second))
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Generate(ctx, ask)
	if !errors.Is(err, context.Canceled) || llm.Retryable(err) {
		t.Fatalf("err = %v, want context.Canceled, not retryable", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Generate returned %v after the cancel", d)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := New(url, WithBackoff(time.Millisecond, time.Millisecond))
	_, err := c.Generate(t.Context(), ask)
	checkError(t, err, llm.ErrConnection, "connection refused")
	if _, ok := errors.AsType[*net.OpError](err); !ok {
		t.Errorf("err = %v, want it to wrap the *net.OpError", err)
	}
}

func TestBadBaseURL(t *testing.T) {
	_, err := New("generativelanguage.googleapis.com").Generate(t.Context(), ask)
	checkError(t, err, llm.ErrBadRequest, `base URL "generativelanguage.googleapis.com" does not start with http:// or https://`)
}

func TestCanceledBeforeTheCall(t *testing.T) {
	c, n := serve(t, reply(http.StatusOK, "{}"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Generate(ctx, ask); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n.Load() != 0 {
		t.Errorf("%d requests, want 0", n.Load())
	}
}
