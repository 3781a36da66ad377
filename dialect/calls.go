package dialect

import (
	"github.com/ptkit/ptk/dialect/internal/shape"
	"github.com/ptkit/ptk/dialect/result"
	"github.com/ptkit/ptk/lenient"
)

// RawCall is a call as read from the reply, before it is checked against the
// declared tools.
type RawCall struct {
	Name string
	// Args is nil when the model gave none.
	Args *lenient.Node
	// Src is the text args' spans point into.
	Src []byte
	// Stable reports that Src is a stream's buffer, whose bytes never change:
	// the call's arguments may be a slice of it rather than a copy.
	Stable bool
	// TextArgs marks argument values written as text (XML parameters, GLM
	// arg_value): the schema decides their type.
	TextArgs   bool
	Positional []*lenient.Node
	// Nested are calls written as argument values, f(x=g(y=1)), as
	// written: the call is read, and must not run.
	Nested    []string
	Reasoning string
	Repairs   []string
	Offset    int
	// raw is the call's text, for the one EventCallDelta of a call that was
	// not streamed as it was read.
	raw []byte
	// plain reports that the object the call came from holds nothing but a
	// name, arguments and metadata (bare JSON must, to be a call).
	plain bool
	// Err marks a call that cannot run: DiagMalformed or DiagTruncated.
	Err    result.DiagKind
	ErrMsg string
}

// callOf reads one call from a JSON object (see shape.Of).
func callOf(n *lenient.Node, src []byte) (RawCall, shape.Kind, bool) {
	c, kind, exact := shape.Of(n)
	if kind == shape.NotCall {
		return RawCall{}, kind, false
	}
	return RawCall{Name: c.Name, Args: c.Args, Reasoning: c.Reasoning, Src: src, plain: c.Plain}, kind, exact
}

// appendCallsFromJSON appends the calls in a JSON value found inside call
// markers: one call object, an array of them, or {"tool_calls": [...]}.
// Objects that are not calls become malformed calls.
func appendCallsFromJSON(out []RawCall, n *lenient.Node, src []byte, offset int) []RawCall {
	switch n.Kind {
	case lenient.Object:
		for _, k := range []string{"tool_calls", "calls", "function_calls"} {
			if v := n.Get(k); v != nil && v.Kind == lenient.Array && len(n.Keys) <= 2 {
				return appendCallsFromJSON(out, v, src, offset)
			}
		}
		rc, kind, _ := callOf(n, src)
		rc.Offset = offset
		if kind == shape.NotCall {
			return append(out, RawCall{Offset: offset, Err: result.DiagMalformed, ErrMsg: "the call has no tool name (expected {\"tool\": name, \"args\": {...}})"})
		}
		return append(out, rc)
	case lenient.Array:
		before := len(out)
		for _, k := range n.Kids {
			out = appendCallsFromJSON(out, k, src, offset)
		}
		if len(out) == before {
			return append(out, RawCall{Offset: offset, Err: result.DiagMalformed, ErrMsg: "an empty list of calls"})
		}
		return out
	}
	return append(out, RawCall{Offset: offset, Err: result.DiagMalformed, ErrMsg: "expected a call object, found a JSON " + n.Kind.String()})
}
