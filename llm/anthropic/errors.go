package anthropic

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic/wire"
	"github.com/ptkit/ptk/llm/internal/httpx"
)

// httpError is the error for an answer whose status is not a success.
func (c *Client) httpError(status int, h http.Header, body []byte) *llm.Error {
	_, msg := errorMessage(body)
	e := httpx.StatusError(status, h, msg, kinds.Kind)
	if status == http.StatusNotFound && e.Kind != llm.ErrModelNotFound {
		e.Message += " (check the base URL: the client posts to " + c.t.BaseURL + "/v1/messages)"
	}
	return e
}

// inBandError is the error a server reported in the middle of a stream
// (an "error" event) or in a 200 answer. Its type classifies it as the
// status the API gives that type would; an unknown type is a provider
// failure. It has no Status: the HTTP status was 200.
func inBandError(data []byte) *llm.Error {
	typ, msg := errorMessage(data)
	return &llm.Error{Kind: kinds.Kind(wire.StatusOf(typ), msg), Message: msg}
}

// kinds classifies errors by their status and what the server said. 529
// is Anthropic's "overloaded", an ErrServer.
var kinds = httpx.Classifier{
	ToolsUnsupported: toolsUnsupported,
	ModelNotFound: func(status int, m string) bool {
		// Anthropic: "model: claude-x"; Ollama: "model \"x\" not found".
		return status == http.StatusNotFound && strings.Contains(m, "model")
	},
}

// toolsUnsupported are what servers that speak the API say, in lower case,
// when a model cannot take tool definitions. Anthropic's models all can;
// Ollama passes on "registry.ollama.ai/library/gemma:2b does not support
// tools".
var toolsUnsupported = []string{"not support tool", "tool use is not supported", "tools are not supported"}

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
		var e wire.Error
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
	return "", httpx.Excerpt(body)
}
