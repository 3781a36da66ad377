package anthropic

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

func TestErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		header    http.Header
		body      string
		wantKind  error
		wantMsg   string
		wantRetry time.Duration
	}{{
		name:     "wrong key",
		status:   401,
		body:     `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
		wantKind: llm.ErrAuth,
		wantMsg:  "invalid x-api-key",
	}, {
		name:     "no permission",
		status:   403,
		body:     `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`,
		wantKind: llm.ErrAuth,
		wantMsg:  "does not have permission",
	}, {
		name:     "unknown model",
		status:   404,
		body:     `{"type":"error","error":{"type":"not_found_error","message":"model: claude-3-opus-2024"},"request_id":"req_011CV9m9tJrM2Cm2HQYQ1xNq"}`,
		wantKind: llm.ErrModelNotFound,
		wantMsg:  "model: claude-3-opus-2024",
	}, {
		name:     "Ollama unknown model",
		status:   404,
		body:     `{"type":"error","error":{"type":"not_found_error","message":"model \"llama9\" not found, try pulling it first"},"request_id":"req_6a1f0c9e2b7d4e8f3a5c1b0d"}`,
		wantKind: llm.ErrModelNotFound,
		wantMsg:  `model "llama9" not found, try pulling it first`,
	}, {
		name:     "wrong base URL",
		status:   404,
		body:     "404 page not found\n",
		wantKind: llm.ErrBadRequest,
		wantMsg:  "404 page not found (check the base URL: the client posts to http://",
	}, {
		name:     "invalid request",
		status:   400,
		body:     `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"}}`,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "roles must alternate",
	}, {
		name:     "credit balance",
		status:   400,
		body:     `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "credit balance is too low",
	}, {
		name:     "Ollama model without tools",
		status:   400,
		body:     `{"type":"error","error":{"type":"invalid_request_error","message":"registry.ollama.ai/library/gemma:2b does not support tools"},"request_id":"req_0c3d9a7e51f24b6a8e7d2c1f"}`,
		wantKind: llm.ErrToolsUnsupported,
		wantMsg:  "registry.ollama.ai/library/gemma:2b does not support tools",
	}, {
		name:     "request too large",
		status:   413,
		body:     `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "Request exceeds the maximum allowed number of bytes.",
	}, {
		name:      "rate limit",
		status:    429,
		header:    http.Header{"Retry-After": {"20"}, "Anthropic-Ratelimit-Requests-Remaining": {"0"}},
		body:      `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (7f0c1b9e-2a44-4c1e-9d8f-5b3e6a2c0d11) of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."}}`,
		wantKind:  llm.ErrRateLimited,
		wantMsg:   "would exceed the rate limit for your organization",
		wantRetry: 20 * time.Second,
	}, {
		name:     "internal error",
		status:   500,
		body:     `{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_011CSHpT2vF8mQKfYbA3Rw9z"}`,
		wantKind: llm.ErrServer,
		wantMsg:  "Internal server error",
	}, {
		name:     "overloaded",
		status:   529,
		body:     `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CV3q6qYvDLzYeMbKkVQvX"}`,
		wantKind: llm.ErrServer,
		wantMsg:  "Overloaded",
	}, {
		name:     "proxy error page",
		status:   502,
		body:     "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n",
		wantKind: llm.ErrServer,
		wantMsg:  "<title>502 Bad Gateway</title>",
	}, {
		name:     "error as a string",
		status:   400,
		body:     `{"error":"max_tokens: Field required"}`,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "max_tokens: Field required",
	}, {
		name:     "empty body",
		status:   400,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "Bad Request",
	}, {
		name:     "error in a 200 answer",
		status:   200,
		body:     `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		wantKind: llm.ErrServer,
		wantMsg:  "Overloaded",
	}, {
		name:     "undecodable 200",
		status:   200,
		body:     `{"id":"msg_1","type":"message","content":[{"type":"text","text":"Hi"`,
		wantKind: llm.ErrBadResponse,
		wantMsg:  "unexpected end of JSON input",
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
				wantStatus = 0
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
	const (
		rateLimited = `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`
		overloaded  = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	)
	retryAfter := func(after string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("retry-after", after)
			reply(http.StatusTooManyRequests, rateLimited)(w, r)
		}
	}
	abort := func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }
	tests := []struct {
		name     string
		h        func(t *testing.T) http.HandlerFunc
		wantKind error // nil: success
		requests int32
		minTime  time.Duration
	}{{
		name:     "429 with retry-after, then success",
		h:        func(t *testing.T) http.HandlerFunc { return counting(ok(t), retryAfter("1")) },
		requests: 2,
		minTime:  time.Second,
	}, {
		name:     "529 overloaded, then success",
		h:        func(t *testing.T) http.HandlerFunc { return counting(ok(t), reply(529, overloaded)) },
		requests: 2,
	}, {
		name:     "529 three times",
		h:        func(t *testing.T) http.HandlerFunc { return reply(529, overloaded) },
		wantKind: llm.ErrServer,
		requests: 3,
	}, {
		name: "400 is not retried",
		h: func(t *testing.T) http.HandlerFunc {
			return reply(http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Input should be greater than or equal to 1"}}`)
		},
		wantKind: llm.ErrBadRequest,
		requests: 1,
	}, {
		name:     "retry-after beyond the cap is not waited for",
		h:        func(t *testing.T) http.HandlerFunc { return retryAfter("120") },
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
	c, n := serve(t, reply(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), WithBackoff(10*time.Second, 10*time.Second))
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
	_, err := New("api.anthropic.com").Generate(t.Context(), ask)
	checkError(t, err, llm.ErrBadRequest, `base URL "api.anthropic.com" does not start with http:// or https://`)
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
