package dialect

import (
	"github.com/ptkit/ptk/dialect/result"
	"github.com/ptkit/ptk/lenient"
	"slices"
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
	Reasoning  string
	Repairs    []string
	Offset     int
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

var nameKeys = []string{"tool", "name", "function", "tool_name", "function_name", "toolName", "functionName", "action", "recipient_name"}
var argsKeys = []string{"args", "arguments", "parameters", "input", "params", "action_input", "tool_input", "tool_args", "kwargs"}
var reasonKeys = []string{"reasoning", "reason", "thought", "thoughts", "rationale"}

// metaKeys may sit beside the name and arguments of a call-shaped object.
var metaKeys = map[string]bool{"id": true, "type": true, "call_id": true, "tool_call_id": true, "index": true, "reasoning": true, "reason": true, "thought": true, "thoughts": true, "rationale": true}

type callShape uint8

const (
	notCall   callShape = iota
	nameArgs            // {"name": ..., "arguments": ...}
	nameOnly            // {"name": ...}
	nameAsKey           // {"get_weather": {...}}
)

// callOf reads one call from a JSON object. shape says how call-like it is;
// exact reports that it has nothing but a name, arguments (an object or a
// JSON string of one) and metadata.
func callOf(n *lenient.Node, src []byte) (rc RawCall, shape callShape, exact bool) {
	if n == nil || n.Kind != lenient.Object {
		return rc, notCall, false
	}
	rc.Src = src
	if v := n.Get("function_call"); v != nil && v.Kind == lenient.Object {
		// OpenAI's legacy {"function_call": {"name", "arguments"}}
		inner, sh, ex := callOf(v, src)
		if sh == nameArgs || sh == nameOnly {
			inner.plain = inner.plain && onlyKeys(n, "function_call", "content", "role")
			return inner, sh, ex && onlyKeys(n, "function_call", "content", "role")
		}
	}
	var nameKey, argsKey string
	for _, k := range nameKeys {
		v := n.Get(k)
		if v == nil {
			continue
		}
		if v.Kind == lenient.String {
			rc.Name, nameKey = v.Text(), k
			break
		}
		if k == "function" && v.Kind == lenient.Object {
			// OpenAI's {"type": "function", "function": {"name", "arguments"}}
			inner, sh, ex := callOf(v, src)
			if sh == nameArgs || sh == nameOnly {
				inner.Reasoning = n.FirstString(reasonKeys...)
				inner.plain = inner.plain && onlyKeys(n, "function")
				return inner, sh, ex && onlyKeys(n, "function")
			}
		}
	}
	for _, k := range argsKeys {
		if v := n.Get(k); v != nil {
			rc.Args, argsKey = v, k
			break
		}
	}
	rc.Reasoning = n.FirstString(reasonKeys...)
	rc.plain = callKeysOnly(n)
	switch {
	case nameKey != "" && argsKey != "":
		switch rc.Args.Kind {
		case lenient.Object:
			exact = onlyKeys(n, nameKey, argsKey)
		case lenient.String:
			exact = onlyKeys(n, nameKey, argsKey) && unwrapsToObject(rc.Args.Text())
		}
		return rc, nameArgs, exact
	case nameKey != "":
		return rc, nameOnly, false
	case len(n.Keys) == 1 && n.Kids[0].Kind == lenient.Object:
		rc.Name, rc.Args = n.Keys[0], n.Kids[0]
		return rc, nameAsKey, false
	}
	return RawCall{}, notCall, false
}

// callKeysOnly reports whether n has nothing but a name, arguments and
// metadata.
func callKeysOnly(n *lenient.Node) bool {
	for _, k := range n.Keys {
		if !metaKeys[k] && !slices.Contains(nameKeys, k) && !slices.Contains(argsKeys, k) {
			return false
		}
	}
	return true
}

func onlyKeys(n *lenient.Node, keys ...string) bool {
outer:
	for _, k := range n.Keys {
		for _, want := range keys {
			if k == want {
				continue outer
			}
		}
		if !metaKeys[k] {
			return false
		}
	}
	return true
}

// looksLikeSchema reports whether a value is a JSON Schema of an object:
// {"type": "object", "properties": {...}}, as a tool definition holds.
func looksLikeSchema(n *lenient.Node) bool {
	if n == nil || n.Kind != lenient.Object {
		return false
	}
	t, p := n.Get("type"), n.Get("properties")
	return t != nil && t.Kind == lenient.String && (t.Str == "object" || t.Str == "dict") && p != nil && p.Kind == lenient.Object
}

// unwrapsToObject reports whether s is, whole, a JSON object.
func unwrapsToObject(s string) bool {
	n, _, ok := lenient.Unwrap(s)
	return ok && n.Kind == lenient.Object
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
		rc, shape, _ := callOf(n, src)
		rc.Offset = offset
		if shape == notCall {
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
