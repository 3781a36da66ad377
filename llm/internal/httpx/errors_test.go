package httpx

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm"
)

func TestClassifierKind(t *testing.T) {
	hooks := Classifier{
		ToolsUnsupported: []string{"does not support tools"},
		ModelNotFound: func(status int, m string) bool {
			return status == http.StatusBadRequest && strings.Contains(m, "unknown model")
		},
	}
	tests := []struct {
		c      Classifier
		status int
		msg    string
		want   error
	}{
		{Classifier{}, 401, "", llm.ErrAuth},
		{Classifier{}, 403, "", llm.ErrAuth},
		{Classifier{}, 429, "", llm.ErrRateLimited},
		{Classifier{}, 404, "", llm.ErrModelNotFound},
		{Classifier{}, 400, "Unknown model", llm.ErrBadRequest},
		{Classifier{}, 500, "does not support tools", llm.ErrServer},
		{Classifier{}, 0, "", llm.ErrServer},
		{Classifier{}, 304, "", llm.ErrBadResponse},
		{hooks, 500, "gemma Does Not Support Tools", llm.ErrToolsUnsupported},
		{hooks, 401, "does not support tools", llm.ErrAuth},
		{hooks, 400, "Unknown model x", llm.ErrModelNotFound},
		{hooks, 404, "", llm.ErrBadRequest},
	}
	for _, tt := range tests {
		if got := tt.c.Kind(tt.status, tt.msg); got != tt.want {
			t.Errorf("Kind(%d, %q) with hooks %t = %v, want %v", tt.status, tt.msg, tt.c.ModelNotFound != nil, got, tt.want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		body     string
		wantMsg  string
		wantCode int
	}{
		{`{"error":{"code":503,"message":" Loading model "}}`, "Loading model", 503},
		{`{"error":"server busy"}`, "server busy", 0},
		{`{"object":"error","message":"too long","code":400}`, "too long", 400},
		{`{"detail":[{"msg":"Field required"}]}`, `[{"msg":"Field required"}]`, 0},
		{`{"error":null,"message":null}`, `{"error":null,"message":null}`, 0},
		{"404 page not found\n", "404 page not found", 0},
	}
	for _, tt := range tests {
		msg, code := ErrorMessage([]byte(tt.body))
		if msg != tt.wantMsg || code != tt.wantCode {
			t.Errorf("ErrorMessage(%s) = %q, %d; want %q, %d", tt.body, msg, code, tt.wantMsg, tt.wantCode)
		}
	}
}

func TestExcerpt(t *testing.T) {
	s := Excerpt([]byte(strings.Repeat("é", 1000)))
	if len(s) > 503 || !strings.HasSuffix(s, "é…") {
		t.Errorf("Excerpt of 2000 bytes = %d bytes ending %q, want about 500 ending in a whole rune and …", len(s), s[len(s)-8:])
	}
}
