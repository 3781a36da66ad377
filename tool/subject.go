package tool

import (
	"encoding/json"

	"github.com/ptkit/ptk"
)

// Subject is what a call will act on, as approval and policies see it: the
// shell command it will run, the workspace path it will change. A tool
// declares it (Subjecter); approvers and policies never guess it from
// argument names.
type Subject struct {
	// Command is the shell command the call will run, if any.
	Command string
	// Path is the workspace path the call will read or change, if any,
	// relative to the workspace as the model wrote it.
	Path string
}

// Subjecter is a tool that says what a call will act on.
type Subjecter interface {
	// Subject returns what a call with args will act on. Arguments that
	// cannot be read give the zero Subject.
	Subject(args json.RawMessage) Subject
}

// Unwrapper is a tool that wraps another (middleware).
type Unwrapper interface {
	// Unwrap returns the wrapped tool.
	Unwrap() ptk.Tool
}

// maxUnwrap bounds the walk down a chain of wrappers, against a cycle.
const maxUnwrap = 64

// As finds the first tool in t's chain of wrappers (t itself first) that has
// the capability T, the way http.ResponseController finds a Flusher.
func As[T any](t ptk.Tool) (T, bool) {
	for range maxUnwrap {
		if t == nil {
			break
		}
		if c, ok := t.(T); ok {
			return c, true
		}
		u, ok := t.(Unwrapper)
		if !ok {
			break
		}
		t = u.Unwrap()
	}
	var zero T
	return zero, false
}

// SubjectOf returns what a call to t with args will act on, found through
// wrappers; the zero Subject when t does not say.
func SubjectOf(t ptk.Tool, args json.RawMessage) Subject {
	if s, ok := As[Subjecter](t); ok {
		return s.Subject(args)
	}
	return Subject{}
}
