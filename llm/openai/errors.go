package openai

import (
	"net/http"
	"strings"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
)

// httpError is the error for an answer whose status is not a success.
func (c *Client) httpError(status int, h http.Header, body []byte) *llm.Error {
	msg, _ := httpx.ErrorMessage(body)
	e := httpx.StatusError(status, h, msg, kinds.Kind)
	switch {
	case e.Kind == llm.ErrAuth:
		e.Message += " (check the API key: PTK_API_KEY)"
	case status == http.StatusNotFound && !strings.Contains(strings.ToLower(e.Message), "model"):
		e.Message += " (no such model, or no such endpoint: check the base URL " + c.t.BaseURL + ")"
	}
	return e
}

// inBandError is the error a server reported in a 200 answer or in the
// middle of a stream. Its code, when it is an HTTP status, classifies it;
// otherwise it is a provider failure.
func inBandError(data []byte) *llm.Error { return httpx.InBandError(data, kinds.Kind) }

// kinds classifies errors by their status and what the server said.
var kinds = httpx.Classifier{
	// Checked before the status: llama.cpp answers 500.
	ToolsUnsupported: toolsUnsupported,
	ModelNotFound: func(status int, m string) bool {
		return status == http.StatusNotFound || status >= 400 && status < 500 && strings.Contains(m, "model") && httpx.ContainsAny(m, modelMissing)
	},
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
