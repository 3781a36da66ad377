package httpx

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/retry"
)

// Classifier says what a provider's error messages mean beyond their
// status. The zero value goes by the status alone.
type Classifier struct {
	// ToolsUnsupported are what the provider says, in lower case, when a
	// model or the server cannot take tool definitions. They count before
	// the status: llama.cpp says it with a 500.
	ToolsUnsupported []string
	// ModelNotFound reports whether an error status and its message, in
	// lower case, say that the model is unknown. Nil means a 404 does.
	ModelNotFound func(status int, msg string) bool
}

// Kind returns the kind of error for an HTTP status (0 for none) and the
// provider's message: 401 and 403 are ErrAuth, 429 ErrRateLimited, a
// message that says the request is longer than the context window (in any
// provider's words: ContextTooLong) ErrContextLength, 5xx and none
// ErrServer, another 4xx ErrBadRequest, and any other status
// ErrBadResponse.
func (c Classifier) Kind(status int, msg string) error {
	m := strings.ToLower(msg)
	notFound := c.ModelNotFound
	if notFound == nil {
		notFound = func(status int, _ string) bool { return status == http.StatusNotFound }
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return llm.ErrAuth
	case status == http.StatusTooManyRequests:
		return llm.ErrRateLimited
	case ContainsAny(m, c.ToolsUnsupported):
		return llm.ErrToolsUnsupported
	case ContextTooLong(m):
		return llm.ErrContextLength
	case notFound(status, m):
		return llm.ErrModelNotFound
	case status >= 500 || status == 0:
		return llm.ErrServer
	case status >= 400:
		return llm.ErrBadRequest
	}
	return llm.ErrBadResponse
}

// contextTooLong are what providers and servers say, in lower case, when a
// request does not fit the model's context window.
var contextTooLong = []string{
	// OpenAI's code, and the message of OpenAI, vLLM, DeepSeek, Mistral,
	// OpenRouter: "This model's maximum context length is 4096 tokens.
	// However, you requested 5000 tokens".
	"context_length_exceeded",
	"maximum context length",
	// vLLM: "The decoder prompt (length 5000) is longer than the maximum
	// model length of 4096".
	"longer than the maximum model length",
	// llama.cpp's error type exceed_context_size_error: "the request
	// exceeds the available context size".
	"exceed_context_size",
	"exceeds the available context size",
	// Ollama: "the input length exceeds the context length"; older:
	// "input exceeds context length".
	"exceeds the context length",
	"exceeds context length",
	// Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
	"prompt is too long",
	// Gemini: "The input token count (1200000) exceeds the maximum number
	// of tokens allowed (1048576)".
	"exceeds the maximum number of tokens allowed",
	// Groq: "Please reduce the length of the messages or completion."
	"reduce the length of the messages",
	// LM Studio: "the number of tokens to keep from the initial prompt is
	// greater than the context length".
	"greater than the context length",
}

// ContextTooLong reports whether a provider's message, in lower case, says
// that the request does not fit the model's context window.
func ContextTooLong(msg string) bool { return ContainsAny(msg, contextTooLong) }

// StatusError is the error for an answer whose status is not a success and
// whose body says msg (the status's text when empty): of the kind classify
// gives, with the pause the headers ask for.
func StatusError(status int, h http.Header, msg string, classify func(status int, msg string) error) *llm.Error {
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &llm.Error{Kind: classify(status, msg), Status: status, Message: msg, RetryAfter: retry.After(h, time.Now())}
}

// InBandError is the error a server reported, in the form [ErrorMessage]
// reads, in a 200 answer or in the middle of a stream. Its code, when it is
// an HTTP status, classifies it; otherwise it is a provider failure.
func InBandError(data []byte, classify func(status int, msg string) error) *llm.Error {
	msg, code := ErrorMessage(data)
	if code < 400 || code > 599 {
		code = 0
	}
	return &llm.Error{Kind: classify(code, msg), Status: code, Message: msg}
}

// ContainsAny reports whether s contains any of subs.
func ContainsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// ErrorMessage returns the message in an error body of the form OpenAI's
// API and the servers that copy it use, and its numeric code when it gives
// one: {"error":{"code":503,"message":...}} (OpenAI, llama.cpp, vLLM),
// {"error":"..."} (Ollama), {"message":...} or {"detail":...}; otherwise
// the body itself, trimmed.
func ErrorMessage(body []byte) (msg string, code int) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &v) != nil {
		return Excerpt(body), 0
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
	return Excerpt(body), jsonInt(v.Code)
}

// jsonText is a JSON string's text, or any other value's JSON, trimmed.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return Excerpt(raw)
}

func jsonInt(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) != nil {
		return 0
	}
	return n
}

// Excerpt returns b as text, trimmed to about 500 bytes.
func Excerpt(b []byte) string {
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

// ConnectionError is the error for a request that could not be made or an
// answer that could not be read to its end.
func ConnectionError(err error) *llm.Error {
	return &llm.Error{Kind: llm.ErrConnection, Message: err.Error(), Err: err}
}

// BadResponse is the error for data that err says cannot be read.
func BadResponse(err error, data []byte) *llm.Error {
	return &llm.Error{Kind: llm.ErrBadResponse, Message: err.Error() + ": " + Excerpt(data), Err: err}
}

// StreamError is the error for a failure to read the next event of a
// stream: an event too long to read is ErrBadResponse, any other failure
// ErrConnection.
func StreamError(err error) *llm.Error {
	if errors.Is(err, bufio.ErrTooLong) {
		return &llm.Error{Kind: llm.ErrBadResponse, Message: "stream: " + err.Error(), Err: err}
	}
	return ConnectionError(err)
}

// Incomplete is the error for a stream that ended before the answer was
// complete.
func Incomplete() *llm.Error {
	return &llm.Error{Kind: llm.ErrConnection, Message: "the stream ended before the answer was complete"}
}

// BadRequest is the error for a request that cannot be made as asked.
func BadRequest(err error) *llm.Error {
	return &llm.Error{Kind: llm.ErrBadRequest, Message: err.Error(), Err: err}
}
