package completion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
)

// httpError is the error for an answer whose status is not a success.
func (c *client) httpError(status int, h http.Header, body []byte) *llm.Error {
	msg, _ := httpx.ErrorMessage(body)
	e := httpx.StatusError(status, h, msg, classify)
	switch {
	case e.Kind == llm.ErrAuth:
		e.Message += " (check the API key)"
	case status == http.StatusNotFound && !strings.Contains(strings.ToLower(e.Message), "model"):
		e.Message += " (no such model, or no such endpoint: check the base URL " + c.t.BaseURL + ")"
	}
	return e
}

// inBandError is the error a server reported in a 200 answer or in the
// middle of a stream. Its code, when it is an HTTP status, classifies it;
// otherwise it is a provider failure.
func inBandError(data []byte) *llm.Error { return httpx.InBandError(data, classify) }

// classify returns the kind of error for an HTTP status (0 for none) and
// the server's message. llama.cpp's 503 "Loading model" is ErrServer, and
// so retried. A status that is no error's (1xx, 3xx) is ErrBadRequest.
func classify(status int, msg string) error {
	if status > 0 && status < 400 {
		return llm.ErrBadRequest
	}
	return kinds.Kind(status, msg)
}

// kinds classifies errors by their status and what the server said.
var kinds = httpx.Classifier{
	ModelNotFound: func(status int, m string) bool {
		return status == http.StatusNotFound || status >= 400 && status < 500 && strings.Contains(m, "model") &&
			httpx.ContainsAny(m, []string{"not found", "not exist", "unknown model"})
	},
}

// failed reports whether a decoded answer carries an error instead.
func failed(errField json.RawMessage) bool {
	return len(errField) > 0 && string(errField) != "null"
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
