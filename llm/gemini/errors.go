package gemini

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
	"github.com/ptkit/ptk/llm/internal/retry"
)

// apiError is Google's error object, the "error" of an error body.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Status is the gRPC code's name: "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"...
	Status  string        `json:"status"`
	Details []errorDetail `json:"details"`
}

type errorDetail struct {
	Type       string `json:"@type"`
	Reason     string `json:"reason"`     // ErrorInfo: "API_KEY_INVALID"
	RetryDelay string `json:"retryDelay"` // RetryInfo: "13s"
}

// parseError reads an error body: {"error": {...}}, or, as the API
// sometimes sends it, [{"error": {...}}].
func parseError(body []byte) *apiError {
	type wrapper struct {
		Error *apiError `json:"error"`
	}
	var one wrapper
	if json.Unmarshal(body, &one) == nil && one.Error != nil {
		return one.Error
	}
	var many []wrapper
	if json.Unmarshal(body, &many) == nil && len(many) > 0 && many[0].Error != nil {
		return many[0].Error
	}
	return nil
}

// httpError is the error for an answer whose status is not a success.
func (c *Client) httpError(status int, h http.Header, body []byte) *llm.Error {
	e := parseError(body)
	if e == nil {
		e = &apiError{Message: httpx.Excerpt(body)}
	}
	out := e.llmError(status, h)
	switch {
	case out.Kind == llm.ErrAuth:
		out.Message += " (check the API key)"
	case status == http.StatusNotFound && e.Status == "":
		out.Message += " (no such model, or no such endpoint: check the base URL " + c.t.BaseURL + ")"
	}
	return out
}

// llmError classifies the error. status is the HTTP status, or 0 for an
// error that came in a successful answer (its own code then counts).
func (e *apiError) llmError(status int, h http.Header) *llm.Error {
	if status == 0 && e.Code >= 400 && e.Code <= 599 {
		status = e.Code
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(status)
	}
	out := &llm.Error{Kind: e.kind(status), Status: status, Message: msg, RetryAfter: e.retryDelay()}
	if out.RetryAfter == 0 {
		out.RetryAfter = retry.After(h, time.Now())
	}
	return out
}

// kind returns the kind of error for an HTTP status (0 for none) and what
// the error says. A wrong key is a 400, "API key not valid", with reason
// API_KEY_INVALID.
func (e *apiError) kind(status int) error {
	m := strings.ToLower(e.Message)
	keyInvalid := slices.ContainsFunc(e.Details, func(d errorDetail) bool { return d.Reason == "API_KEY_INVALID" })
	if keyInvalid || strings.Contains(m, "api key not valid") || strings.Contains(m, "api key expired") {
		return llm.ErrAuth
	}
	return kinds.Kind(status, e.Message)
}

// kinds classifies errors by their status and what the API said: a 404 is
// an unknown model.
var kinds = httpx.Classifier{
	// Gemma models through the API: "Function calling is not enabled for
	// models/gemma-3-27b-it".
	ToolsUnsupported: []string{"function calling is not enabled"},
}

// retryDelay is the pause a RetryInfo detail asks for, or 0.
func (e *apiError) retryDelay() time.Duration {
	for _, d := range e.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
			if t, err := time.ParseDuration(d.RetryDelay); err == nil && t > 0 {
				return t
			}
		}
	}
	return 0
}
