package openai

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
	msg, _ := errorMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &llm.Error{Kind: classify(status, msg), Status: status, Message: msg, RetryAfter: retry.After(h, time.Now())}
	switch {
	case e.Kind == llm.ErrAuth:
		e.Message += " (check the API key: PTK_API_KEY)"
	case status == http.StatusNotFound && !strings.Contains(strings.ToLower(msg), "model"):
		e.Message += " (no such model, or no such endpoint: check the base URL " + c.baseURL + ")"
	}
	return e
}

// inBandError is the error a server reported in a 200 answer or in the
// middle of a stream. Its code, when it is an HTTP status, classifies it;
// otherwise it is a provider failure.
func inBandError(data []byte) *llm.Error {
	msg, code := errorMessage(data)
	if code < 400 || code > 599 {
		code = 0
	}
	return &llm.Error{Kind: classify(code, msg), Status: code, Message: msg}
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
		// Checked before the status: llama.cpp answers 500.
		return llm.ErrToolsUnsupported
	case status == http.StatusNotFound || status >= 400 && status < 500 && strings.Contains(m, "model") && containsAny(m, modelMissing):
		return llm.ErrModelNotFound
	case status >= 500 || status == 0:
		return llm.ErrServer
	case status >= 400:
		return llm.ErrBadRequest
	}
	return llm.ErrBadResponse
}

// toolsUnsupported are what servers say, in lower case, when a model or
// the server cannot take tool definitions.
var toolsUnsupported = []string{
	// Ollama: "registry.ollama.ai/library/gemma:2b does not support tools".
	"not support tool",
	"tool use is not supported",
	"tools are not supported",
	"tool calling is not supported",
	// vLLM without a tool parser: "\"auto\" tool choice requires
	// --enable-auto-tool-choice and --tool-call-parser to be set".
	"--enable-auto-tool-choice",
	// llama.cpp without --jinja, with HTTP 500.
	"tools param requires --jinja",
	"unsupported param: tools",
}

// modelMissing are what servers say, with "model", about an unknown model:
// "The model `x` does not exist" (OpenAI, vLLM, Groq), "model \"x\" not
// found" (Ollama), "Model Not Exist" (DeepSeek), "x is not a valid model
// ID" (OpenRouter).
var modelMissing = []string{"not found", "not exist", "not a valid model", "unknown model"}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// errorMessage returns the provider's message in an error body, and its
// numeric code when it gives one. It reads {"error":{"message":...}},
// {"error":"..."}, {"message":...} and {"detail":...}, and otherwise
// returns the body itself, trimmed.
func errorMessage(body []byte) (msg string, code int) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &v) != nil {
		return excerpt(body), 0
	}
	var inner struct {
		Message json.RawMessage `json:"message"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(v.Error, &inner) == nil && len(inner.Message) > 0 {
		return jsonText(inner.Message), jsonInt(inner.Code)
	}
	for _, m := range []json.RawMessage{v.Error, v.Message, v.Detail} {
		if s := jsonText(m); s != "" {
			return s, jsonInt(v.Code)
		}
	}
	return excerpt(body), jsonInt(v.Code)
}

// jsonText is a JSON string's text, or any other value's JSON, trimmed.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	if string(raw) == "null" {
		return ""
	}
	return excerpt(raw)
}

func jsonInt(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) != nil {
		return 0
	}
	return n
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
