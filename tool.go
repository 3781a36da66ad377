package ptk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ToolInfo describes a tool to a model: its name, what it does and the JSON
// Schema of its arguments. It is all the protocol needs to know of a tool.
type ToolInfo struct {
	// Name is what the model writes to call the tool.
	Name string `json:"name"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments object. Nil means the
	// arguments are not described and are not checked; a tool that takes no
	// arguments says so with {"type": "object", "properties": {}}.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// ReadOnly reports that the tool changes nothing outside itself; read-only
	// tools run without approval.
	ReadOnly bool `json:"-"`
	// Cacheable reports that a call's result depends only on its arguments
	// for the length of a run, so a repeated identical call may be answered
	// from a cache instead of running again. Only read-only tools should say
	// so.
	Cacheable bool `json:"-"`
}

// Tool is something a model can call: a description and a handler.
//
// Run receives the validated arguments as a JSON object. What the model should
// see and correct (bad input, a missing file, a denied action) is returned as
// a [Result] with IsError set; a non-nil error is for what must end the run.
type Tool interface {
	Info() ToolInfo
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// Handler is the function behind a [Tool].
type Handler func(ctx context.Context, args json.RawMessage) (Result, error)

// NewTool returns a [Tool] made of a description and a handler.
func NewTool(info ToolInfo, h Handler) Tool { return funcTool{info: info, h: h} }

type funcTool struct {
	info ToolInfo
	h    Handler
}

var _ Tool = funcTool{}

func (t funcTool) Info() ToolInfo { return t.info }

func (t funcTool) Run(ctx context.Context, args json.RawMessage) (res Result, err error) {
	if t.h == nil {
		return Result{}, fmt.Errorf("tool %q has no handler", t.info.Name)
	}
	return t.h(ctx, args)
}

// Retryable marks err, returned by a tool's Run, as transient: the same call
// may succeed if made again (a timeout talking to a service, a lock held by
// another process). The agent retries such calls a bounded number of times
// before it reports the failure to the model. Retryable(nil) is nil.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return retryableError{err}
}

// IsRetryable reports whether err, or an error it wraps, was marked with
// [Retryable] or has a method Retryable() bool that returns true.
func IsRetryable(err error) bool {
	var r interface{ Retryable() bool }
	return errors.As(err, &r) && r.Retryable()
}

type retryableError struct{ err error }

func (e retryableError) Error() string   { return e.err.Error() }
func (e retryableError) Unwrap() error   { return e.err }
func (e retryableError) Retryable() bool { return true }
