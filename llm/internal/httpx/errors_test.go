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

// TestContextTooLong classifies what providers and servers really say when
// a request does not fit the context window, and what they say about other
// limits, which must not read as one.
func TestContextTooLong(t *testing.T) {
	long := []struct {
		who    string
		status int
		msg    string
	}{
		{"OpenAI", 400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages."},
		{"vLLM", 400, "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (5000 in the messages, 120 in the completion). Please reduce the length of the messages or completion."},
		{"vLLM V1", 400, "The decoder prompt (length 5000) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens."},
		{"llama.cpp", 400, "the request exceeds the available context size, try increasing it"},
		{"Ollama", 400, "the input length exceeds the context length"},
		{"Ollama, older", 500, "input exceeds context length"},
		{"Anthropic", 400, "prompt is too long: 210000 tokens > 200000 maximum"},
		{"Gemini", 400, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."},
		{"Groq", 400, "Please reduce the length of the messages or completion."},
		{"Mistral", 400, "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length"},
		{"LM Studio", 400, "The number of tokens to keep from the initial prompt is greater than the context length."},
		{"in a stream", 0, "context_length_exceeded"},
	}
	for _, tt := range long {
		if got := (Classifier{}).Kind(tt.status, tt.msg); got != llm.ErrContextLength {
			t.Errorf("%s: Kind(%d, %q) = %v, want ErrContextLength", tt.who, tt.status, tt.msg, got)
		}
	}
	other := []struct {
		status int
		msg    string
		want   error
	}{
		{429, "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000.", llm.ErrRateLimited},
		{400, "max_tokens is too large: 100000. This model supports at most 16384 completion tokens", llm.ErrBadRequest},
		{401, "prompt is too long", llm.ErrAuth},
		{404, "model \"x\" not found, try pulling it first", llm.ErrModelNotFound},
	}
	for _, tt := range other {
		if got := (Classifier{}).Kind(tt.status, tt.msg); got != tt.want {
			t.Errorf("Kind(%d, %q) = %v, want %v", tt.status, tt.msg, got, tt.want)
		}
	}
}
