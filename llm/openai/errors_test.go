package openai

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
		name       string
		status     int
		header     http.Header
		body       string
		wantKind   error
		wantStatus int // for a 200 answer only: the status the error reports
		wantMsg    string
		wantRetry  time.Duration
	}{{
		name:     "OpenAI wrong key",
		status:   401,
		body:     `{"error":{"message":"Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
		wantKind: llm.ErrAuth,
		wantMsg:  "Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys. (check the API key: PTK_API_KEY)",
	}, {
		name:     "forbidden",
		status:   403,
		body:     `{"error":{"message":"Project proj_abc does not have access to model gpt-4o","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
		wantKind: llm.ErrAuth,
		wantMsg:  "does not have access to model gpt-4o",
	}, {
		name:     "OpenAI unknown model",
		status:   404,
		body:     "{\"error\":{\"message\":\"The model `gpt-9` does not exist or you do not have access to it.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"model_not_found\"}}",
		wantKind: llm.ErrModelNotFound,
		wantMsg:  "The model `gpt-9` does not exist or you do not have access to it.",
	}, {
		name:     "Ollama unknown model",
		status:   404,
		body:     `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`,
		wantKind: llm.ErrModelNotFound,
		wantMsg:  `model "llama9" not found, try pulling it first`,
	}, {
		name:     "wrong base URL",
		status:   404,
		body:     "404 page not found\n",
		wantKind: llm.ErrModelNotFound,
		wantMsg:  "404 page not found (no such model, or no such endpoint: check the base URL http://",
	}, {
		name:     "DeepSeek unknown model",
		status:   400,
		body:     `{"error":{"message":"Model Not Exist","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`,
		wantKind: llm.ErrModelNotFound,
		wantMsg:  "Model Not Exist",
	}, {
		name:     "OpenRouter unknown model",
		status:   400,
		body:     `{"error":{"message":"nonexistent/model is not a valid model ID","code":400},"user_id":"user_2abc"}`,
		wantKind: llm.ErrModelNotFound,
		wantMsg:  "is not a valid model ID",
	}, {
		name:     "Ollama model without tools",
		status:   400,
		body:     `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error","param":null,"code":null}}`,
		wantKind: llm.ErrToolsUnsupported,
		wantMsg:  "registry.ollama.ai/library/gemma:2b does not support tools",
	}, {
		name:     "vLLM without a tool parser",
		status:   400,
		body:     `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`,
		wantKind: llm.ErrToolsUnsupported,
		wantMsg:  `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`,
	}, {
		name:     "newer vLLM without a tool parser",
		status:   400,
		body:     `{"error":{"message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}}`,
		wantKind: llm.ErrToolsUnsupported,
		wantMsg:  "--enable-auto-tool-choice",
	}, {
		name:     "llama.cpp without --jinja",
		status:   500,
		body:     `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`,
		wantKind: llm.ErrToolsUnsupported,
		wantMsg:  "tools param requires --jinja flag",
	}, {
		name:     "generic tools message",
		status:   400,
		body:     `{"error":{"message":"Tool use is NOT supported for this model.","type":"invalid_request_error"}}`,
		wantKind: llm.ErrToolsUnsupported,
		wantMsg:  "Tool use is NOT supported for this model.",
	}, {
		name:      "OpenAI rate limit",
		status:    429,
		header:    http.Header{"Retry-After": {"20"}},
		body:      `{"error":{"message":"Rate limit reached for gpt-4o-mini in organization org-abc on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
		wantKind:  llm.ErrRateLimited,
		wantMsg:   "Rate limit reached for gpt-4o-mini",
		wantRetry: 20 * time.Second,
	}, {
		name:      "retry-after-ms",
		status:    429,
		header:    http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}},
		body:      `{"error":{"message":"Too many requests","type":"rate_limit_error"}}`,
		wantKind:  llm.ErrRateLimited,
		wantMsg:   "Too many requests",
		wantRetry: 1500 * time.Millisecond,
	}, {
		name:     "OpenAI server error",
		status:   500,
		body:     `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
		wantKind: llm.ErrServer,
		wantMsg:  "The server had an error while processing your request.",
	}, {
		name:     "Ollama busy",
		status:   503,
		body:     `{"error":"server busy, please try again.  maximum pending requests exceeded"}`,
		wantKind: llm.ErrServer,
		wantMsg:  "server busy, please try again.  maximum pending requests exceeded",
	}, {
		name:     "overloaded",
		status:   529,
		body:     `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		wantKind: llm.ErrServer,
		wantMsg:  "Overloaded",
	}, {
		name:     "proxy error page",
		status:   502,
		body:     "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
		wantKind: llm.ErrServer,
		wantMsg:  "<title>502 Bad Gateway</title>",
	}, {
		name:     "FastAPI validation error",
		status:   422,
		body:     `{"detail":[{"type":"missing","loc":["body","messages"],"msg":"Field required","input":{"model":"m"}}]}`,
		wantKind: llm.ErrBadRequest,
		wantMsg:  `"msg":"Field required"`,
	}, {
		name:     "detail string",
		status:   400,
		body:     `{"detail":"Invalid request: temperature must be between 0 and 2"}`,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "Invalid request: temperature must be between 0 and 2",
	}, {
		name:     "message at the top",
		status:   400,
		body:     `{"id":"o-1","message":"Input validation error: 'max_tokens' must be less than 8193","type":"invalid_request_error"}`,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "Input validation error",
	}, {
		name:     "empty body",
		status:   400,
		wantKind: llm.ErrBadRequest,
		wantMsg:  "Bad Request",
	}, {
		name:       "200 with an error (OpenRouter)",
		status:     200,
		body:       `{"error":{"message":"Provider returned error","code":502,"metadata":{"provider_name":"Together"}},"user_id":"user_2abc"}`,
		wantKind:   llm.ErrServer,
		wantStatus: 502,
		wantMsg:    "Provider returned error",
	}, {
		name:     "undecodable 200",
		status:   200,
		body:     `{"id":"chatcmpl-1","choices":[{"message":{"content":"Hi"`,
		wantKind: llm.ErrBadResponse,
		wantMsg:  "unexpected end of JSON input",
	}, {
		name:     "no choices",
		status:   200,
		body:     `{"id":"chatcmpl-1","object":"chat.completion","choices":[]}`,
		wantKind: llm.ErrBadResponse,
		wantMsg:  "no choices",
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
		return reply(http.StatusOK, string(testdata(t, "generate/openai_text.json")))
	}
	const (
		rateLimited = `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
		serverError = `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`
	)
	retryAfter := func(after string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", after)
			reply(http.StatusTooManyRequests, rateLimited)(w, r)
		}
	}
	abort := func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }
	cutShort := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte(`{"id":"chatcmpl-1","choices":[{"message":`))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	tests := []struct {
		name     string
		h        func(t *testing.T) http.HandlerFunc
		wantKind error // nil: success
		requests int32
		minTime  time.Duration
	}{{
		name:     "429 with Retry-After, then success",
		h:        func(t *testing.T) http.HandlerFunc { return counting(ok(t), retryAfter("1")) },
		requests: 2,
		minTime:  time.Second,
	}, {
		name:     "500 three times",
		h:        func(t *testing.T) http.HandlerFunc { return reply(http.StatusInternalServerError, serverError) },
		wantKind: llm.ErrServer,
		requests: 3,
	}, {
		name: "500 twice, then success",
		h: func(t *testing.T) http.HandlerFunc {
			fail := reply(http.StatusInternalServerError, serverError)
			return counting(ok(t), fail, fail)
		},
		requests: 3,
	}, {
		name: "400 is not retried",
		h: func(t *testing.T) http.HandlerFunc {
			return reply(http.StatusBadRequest, `{"error":{"message":"Invalid value for 'temperature'"}}`)
		},
		wantKind: llm.ErrBadRequest,
		requests: 1,
	}, {
		name:     "Retry-After beyond the cap is not waited for",
		h:        func(t *testing.T) http.HandlerFunc { return retryAfter("120") },
		wantKind: llm.ErrRateLimited,
		requests: 1,
	}, {
		name:     "connection reset, then success",
		h:        func(t *testing.T) http.HandlerFunc { return counting(ok(t), abort) },
		requests: 2,
	}, {
		name:     "connection reset three times",
		h:        func(t *testing.T) http.HandlerFunc { return abort },
		wantKind: llm.ErrConnection,
		requests: 3,
	}, {
		name:     "answer cut short three times",
		h:        func(t *testing.T) http.HandlerFunc { return cutShort },
		wantKind: llm.ErrConnection,
		requests: 3,
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
	c, n := serve(t, reply(http.StatusInternalServerError, `{"error":{"message":"boom"}}`), WithBackoff(10*time.Second, 10*time.Second))
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

func TestNoRetryPastDeadline(t *testing.T) {
	// A pause that would outlast the deadline is not taken: the error comes
	// back at once.
	c, n := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		reply(http.StatusTooManyRequests, `{"error":{"message":"slow down"}}`)(w, r)
	})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := c.Generate(ctx, ask)
	if e := checkError(t, err, llm.ErrRateLimited, "slow down"); e.RetryAfter != 30*time.Second {
		t.Errorf("RetryAfter = %v, want 30s", e.RetryAfter)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := New(url+"/v1", WithBackoff(time.Millisecond, time.Millisecond))
	_, err := c.Generate(t.Context(), ask)
	checkError(t, err, llm.ErrConnection, "connection refused")
	if _, ok := errors.AsType[*net.OpError](err); !ok {
		t.Errorf("err = %v, want it to wrap the *net.OpError", err)
	}
}

func TestBadBaseURL(t *testing.T) {
	_, err := New("localhost:11434/v1").Generate(t.Context(), ask)
	checkError(t, err, llm.ErrBadRequest, `base URL "localhost:11434/v1" does not start with http:// or https://`)
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
