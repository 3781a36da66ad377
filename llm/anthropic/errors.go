package anthropic

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/retry"
)

// httpError is the error for an answer whose status is not a success.
func (c *Client) httpError(status int, h http.Header, body []byte) *llm.Error {
	_, msg := errorMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &llm.Error{Kind: classify(status, msg), Status: status, Message: msg, RetryAfter: retry.After(h, time.Now())}
	if status == http.StatusNotFound && e.Kind != llm.ErrModelNotFound {
		e.Message += " (check the base URL: the client posts to " + c.baseURL + "/v1/messages)"
	}
	return e
}

// inBandError is the error a server reported in the middle of a stream
// (an "error" event) or in a 200 answer. Its type classifies it as the
// status the API gives that type would; an unknown type is a provider
// failure. It has no Status: the HTTP status was 200.
func inBandError(data []byte) *llm.Error {
	typ, msg := errorMessage(data)
	return &llm.Error{Kind: classify(statusOf[typ], msg), Message: msg}
}

// statusOf is the HTTP status the API answers with for each error type.
var statusOf = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// classify returns the kind of error for an HTTP status (0 for none) and
// the provider's message.
func classify(status int, msg string) error {
	m := strings.ToLower(msg)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return llm.ErrAuth
	case status == http.StatusTooManyRequests:
		return llm.ErrRateLimited
	case containsAny(m, toolsUnsupported):
		return llm.ErrToolsUnsupported
	case status == http.StatusNotFound && strings.Contains(m, "model"):
		// Anthropic: "model: claude-x"; Ollama: "model \"x\" not found".
		return llm.ErrModelNotFound
	case status >= 500 || status == 0:
		// 529 is Anthropic's "overloaded".
		return llm.ErrServer
	case status >= 400:
		return llm.ErrBadRequest
	}
	return llm.ErrBadResponse
}

// toolsUnsupported are what servers that speak the API say, in lower case,
// when a model cannot take tool definitions. Anthropic's models all can;
// Ollama passes on "registry.ollama.ai/library/gemma:2b does not support
// tools".
var toolsUnsupported = []string{"not support tool", "tool use is not supported", "tools are not supported"}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// errorMessage returns the error type and message in an error body:
// {"type":"error","error":{"type":...,"message":...}}, and from other
// servers {"error":"..."} or {"message":"..."}; otherwise the body itself,
// trimmed.
func errorMessage(body []byte) (typ, msg string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		var e apiError
		if json.Unmarshal(v.Error, &e) == nil && e.Message != "" {
			return e.Type, strings.TrimSpace(e.Message)
		}
		for _, raw := range []json.RawMessage{v.Error, v.Message} {
			var s string
			if json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != "" {
				return "", strings.TrimSpace(s)
			}
		}
	}
	return "", excerpt(body)
}

// excerpt returns b as text, trimmed to about 500 bytes.
func excerpt(b []byte) string {
	const limit = 500
	s := strings.TrimSpace(string(b))
	if len(s) <= limit {
		return s
	}
	i := limit
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
