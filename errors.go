package ptk

import (
	"context"
	"errors"
)

// Code names the kind of a failure. A Code is itself an error, so
// errors.Is(err, ptk.MaxIterationsReached) reports whether err, or any error
// it wraps, carries that code.
type Code string

// The error codes of ptk.
const (
	// ToolNotFound: the model called a tool that is not declared.
	ToolNotFound Code = "TOOL_NOT_FOUND"
	// InvalidToolCall: the arguments do not match the tool's schema.
	InvalidToolCall Code = "INVALID_TOOL_CALL"
	// MaxIterationsReached: the run made as many model calls as it may.
	MaxIterationsReached Code = "MAX_ITERATIONS_REACHED"
	// MaxToolCallsReached: the run executed as many tool calls as it may.
	MaxToolCallsReached Code = "MAX_TOOL_CALLS_REACHED"
	// ToolExecutionFailed: a tool failed.
	ToolExecutionFailed Code = "TOOL_EXECUTION_FAILED"
	// LLMCallFailed: the model provider failed.
	LLMCallFailed Code = "LLM_CALL_FAILED"
	// ParseError: what the model wrote could not be read as a call.
	ParseError Code = "PARSE_ERROR"
	// DuplicateToolCall: the model repeated a call it had just made.
	DuplicateToolCall Code = "DUPLICATE_TOOL_CALL"
	// Timeout: a deadline passed.
	Timeout Code = "TIMEOUT"
	// Canceled: the caller canceled.
	Canceled Code = "CANCELED"
	// ToolCallDenied: the user or a policy did not approve a call.
	ToolCallDenied Code = "TOOL_CALL_DENIED"
	// BudgetExceeded: the run spent its budget of cost or tokens.
	BudgetExceeded Code = "BUDGET_EXCEEDED"
	// InvalidConfig: the run was set up wrong (no model, a tool whose schema
	// does not compile, two tools of one name); nothing ran.
	InvalidConfig Code = "INVALID_CONFIG"
	// ContextFull: the conversation does not fit the model's context window,
	// even after compacting it (or the provider said so again after a
	// compaction); the message says what takes the room and how to make
	// more.
	ContextFull Code = "CONTEXT_FULL"
)

// Codes lists every [Code], in the order of the design.
var Codes = []Code{
	ToolNotFound, InvalidToolCall, MaxIterationsReached, MaxToolCallsReached,
	ToolExecutionFailed, LLMCallFailed, ParseError, DuplicateToolCall, Timeout, Canceled,
	ToolCallDenied, BudgetExceeded, InvalidConfig, ContextFull,
}

// Error makes a Code usable as an error value.
func (c Code) Error() string { return string(c) }

// Error is a failure with a [Code] and the detail that explains it.
//
//	var perr *ptk.Error
//	if errors.As(err, &perr) { log.Print(perr.Code, perr.Message) }
type Error struct {
	Code Code
	// Message says what happened, for a person or a model to act on.
	Message string
	// Tool names the tool involved, if any.
	Tool string
	// Err is the underlying cause, if any.
	Err error
}

// NewError returns an *Error with the given code and cause. The message is
// the cause's text when msg is empty.
func NewError(code Code, msg string, cause error) *Error {
	if msg == "" && cause != nil {
		msg = cause.Error()
	}
	return &Error{Code: code, Message: msg, Err: cause}
}

func (e *Error) Error() string {
	switch {
	case e.Message == "":
		return string(e.Code)
	default:
		return string(e.Code) + ": " + e.Message
	}
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's Code, or the context error that Timeout and
// Canceled stand for.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case Code:
		return t == e.Code
	case *Error:
		return t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
	}
	switch {
	case e.Code == Timeout && target == context.DeadlineExceeded:
		return true
	case e.Code == Canceled && target == context.Canceled:
		return true
	}
	return false
}

// CodeOf returns the code carried by err: the Code of an *Error or a Code in
// its chain, Timeout or Canceled for the context errors, and "" otherwise.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var c Code
	if errors.As(err, &c) {
		return c
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	}
	return ""
}
