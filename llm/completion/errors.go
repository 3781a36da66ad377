package completion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/retry"
)

// httpError is the error for an answer whose status is not a success.
func (c *client) httpError(status int, h http.Header, body []byte) *llm.Error {
	msg, _ := errorMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &llm.Error{Kind: classify(status, msg), Status: status, Message: msg, RetryAfter: retry.After(h, time.Now())}
	switch {
	case e.Kind == llm.ErrAuth:
		e.Message += " (check the API key)"
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
// the server's message. llama.cpp's 503 "Loading model" is ErrServer, and
// so retried.
func classify(status int, msg string) error {
	m := strings.ToLower(msg)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return llm.ErrAuth
	case status == http.StatusTooManyRequests:
		return llm.ErrRateLimited
	case status == http.StatusNotFound || status >= 400 && status < 500 && strings.Contains(m, "model") &&
		(strings.Contains(m, "not found") || strings.Contains(m, "not exist") || strings.Contains(m, "unknown model")):
		return llm.ErrModelNotFound
	case status >= 500 || status == 0:
		return llm.ErrServer
	}
	return llm.ErrBadRequest
}

// errorMessage returns the server's message in an error body, and its
// numeric code when it gives one: {"error":{"code":503,"message":...}}
// (llama.cpp, OpenAI, vLLM), {"error":"..."} (Ollama), {"message":...} or
// {"detail":...}; otherwise the body itself, trimmed.
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
	if len(raw) == 0 || string(raw) == "null" {
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

// failed reports whether a decoded answer carries an error instead.
func failed(errField json.RawMessage) bool {
	return len(errField) > 0 && string(errField) != "null"
}

func connectionError(err error) *llm.Error {
	return &llm.Error{Kind: llm.ErrConnection, Message: err.Error(), Err: err}
}

func badResponse(err error, data []byte) *llm.Error {
	return &llm.Error{Kind: llm.ErrBadResponse, Message: err.Error() + ": " + excerpt(data), Err: err}
}

// funcError is the error a Func call returns for fn's err: an *llm.Error
// or a context error as it is, an error after ctx ended as ctx's error, and
// any other as an ErrServer.
func funcError(ctx context.Context, err error) error {
	if _, ok := errors.AsType[*llm.Error](err); ok || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("completion: %w (%v)", ctx.Err(), err)
	}
	return &llm.Error{Kind: llm.ErrServer, Message: err.Error(), Err: err}
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
