package llm

import (
	"errors"
	"fmt"
	"time"
)

// The kinds of provider errors. A provider returns an *[Error] whose Kind is
// one of these, so errors.Is(err, llm.ErrRateLimited) works on what it returns.
var (
	// ErrAuth: the API key is missing, wrong or not allowed (HTTP 401, 403).
	ErrAuth = errors.New("authentication failed")
	// ErrModelNotFound: the provider does not know the model (HTTP 404, or
	// a 400 that says so).
	ErrModelNotFound = errors.New("model not found")
	// ErrToolsUnsupported: the model or server does not take native tool
	// definitions (Ollama's 400 "does not support tools", vLLM without a tool
	// parser, llama.cpp without --jinja). Use the text protocol instead.
	ErrToolsUnsupported = errors.New("native tools not supported")
	// ErrRateLimited: too many requests (HTTP 429). Error.RetryAfter says
	// when to try again, when the provider said.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: the provider failed or is overloaded (HTTP 5xx, 529).
	ErrServer = errors.New("provider error")
	// ErrConnection: the provider could not be reached, or the connection
	// broke before the answer was complete.
	ErrConnection = errors.New("connection failed")
	// ErrContextLength: the request does not fit the model's context window
	// (OpenAI's context_length_exceeded, Anthropic's "prompt is too long",
	// vLLM's and llama.cpp's context size, Ollama's "input length exceeds
	// the context length"), or, from llm/ollama, a prompt the server cut to
	// fit without saying so. Make the request shorter (an agent compacts
	// its conversation) or the window larger.
	ErrContextLength = errors.New("the request does not fit the context window")
	// ErrBadRequest: the provider rejected the request (other 4xx).
	ErrBadRequest = errors.New("bad request")
	// ErrBadResponse: the provider's answer could not be read.
	ErrBadResponse = errors.New("unreadable response")
)

// Error is a failed model call.
type Error struct {
	// Kind is one of the Err* values above.
	Kind error
	// Status is the HTTP status, when there was one.
	Status int
	// Message is the provider's own message, or what went wrong.
	Message string
	// RetryAfter is how long the provider asked to wait, when it did.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	s := e.Kind.Error()
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the error's Kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Retryable reports whether a failed call is worth making again, after a
// pause: rate limits, provider failures and broken connections.
func Retryable(err error) bool {
	return errors.Is(err, ErrRateLimited) || errors.Is(err, ErrServer) || errors.Is(err, ErrConnection)
}
