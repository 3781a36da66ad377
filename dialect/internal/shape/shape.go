// Package shape reads a tool call out of a JSON object, whichever of the
// keys models use it names its parts with: {"name", "arguments"}, {"tool",
// "args"}, OpenAI's {"function": {...}} and {"function_call": {...}},
// {"get_weather": {...}}.
package shape

import (
	"slices"

	"github.com/ptkit/ptk/lenient"
)

var nameKeys = []string{"tool", "name", "function", "tool_name", "function_name", "toolName", "functionName", "action", "recipient_name"}
var argsKeys = []string{"args", "arguments", "parameters", "input", "params", "action_input", "tool_input", "tool_args", "kwargs"}
var reasonKeys = []string{"reasoning", "reason", "thought", "thoughts", "rationale"}

// metaKeys may sit beside the name and arguments of a call-shaped object.
var metaKeys = map[string]bool{"id": true, "type": true, "call_id": true, "tool_call_id": true, "index": true, "reasoning": true, "reason": true, "thought": true, "thoughts": true, "rationale": true}

// Kind says how call-like an object is.
type Kind uint8

const (
	NotCall   Kind = iota
	NameArgs       // {"name": ..., "arguments": ...}
	NameOnly       // {"name": ...}
	NameAsKey      // {"get_weather": {...}}
)

// Call is a call read from an object.
type Call struct {
	Name string
	// Args is nil when the object has none.
	Args      *lenient.Node
	Reasoning string
	// Plain reports that the object holds nothing but a name, arguments and
	// metadata (bare JSON must, to be a call).
	Plain bool
}

// Of reads one call from a JSON object. kind says how call-like it is;
// exact reports that it has nothing but a name, arguments (an object or a
// JSON string of one) and metadata.
func Of(n *lenient.Node) (rc Call, kind Kind, exact bool) {
	if n == nil || n.Kind != lenient.Object {
		return rc, NotCall, false
	}
	if v := n.Get("function_call"); v != nil && v.Kind == lenient.Object {
		// OpenAI's legacy {"function_call": {"name", "arguments"}}
		inner, sh, ex := Of(v)
		if sh == NameArgs || sh == NameOnly {
			inner.Plain = inner.Plain && OnlyKeys(n, "function_call", "content", "role")
			return inner, sh, ex && OnlyKeys(n, "function_call", "content", "role")
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
			inner, sh, ex := Of(v)
			if sh == NameArgs || sh == NameOnly {
				inner.Reasoning = n.FirstString(reasonKeys...)
				inner.Plain = inner.Plain && OnlyKeys(n, "function")
				return inner, sh, ex && OnlyKeys(n, "function")
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
	rc.Plain = callKeysOnly(n)
	switch {
	case nameKey != "" && argsKey != "":
		switch rc.Args.Kind {
		case lenient.Object:
			exact = OnlyKeys(n, nameKey, argsKey)
		case lenient.String:
			exact = OnlyKeys(n, nameKey, argsKey) && unwrapsToObject(rc.Args.Text())
		}
		return rc, NameArgs, exact
	case nameKey != "":
		return rc, NameOnly, false
	case len(n.Keys) == 1 && n.Kids[0].Kind == lenient.Object:
		rc.Name, rc.Args = n.Keys[0], n.Kids[0]
		return rc, NameAsKey, false
	}
	return Call{}, NotCall, false
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

// OnlyKeys reports whether n has no keys but keys and metadata.
func OnlyKeys(n *lenient.Node, keys ...string) bool {
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

// LooksLikeSchema reports whether a value is a JSON Schema of an object:
// {"type": "object", "properties": {...}}, as a tool definition holds.
func LooksLikeSchema(n *lenient.Node) bool {
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
