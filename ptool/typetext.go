package ptool

import (
	"strings"

	"github.com/ptkit/ptk/lenient"
)

// typeText writes a JSON Schema as the short type notation of a signature:
// string, integer, number, boolean, []T, map[string]T, {a: T, b?: T}, an
// enum as "x"|"y", alternatives joined by |.
func typeText(b *strings.Builder, n *lenient.Node, depth int) {
	if n == nil || n.Kind != lenient.Object || depth > 8 {
		b.WriteString("any")
		return
	}
	if e := n.Get("enum"); e != nil && e.Kind == lenient.Array && len(e.Kids) > 0 {
		for i, v := range e.Kids {
			if i > 0 {
				b.WriteByte('|')
			}
			b.Write(lenient.AppendJSON(nil, lenient.Detach(v), nil))
		}
		return
	}
	if c := n.Get("const"); c != nil {
		b.Write(lenient.AppendJSON(nil, lenient.Detach(c), nil))
		return
	}
	for _, alt := range []string{"anyOf", "oneOf"} {
		if a := n.Get(alt); a != nil && a.Kind == lenient.Array && len(a.Kids) > 0 {
			for i, k := range a.Kids {
				if i > 0 {
					b.WriteByte('|')
				}
				typeText(b, k, depth+1)
			}
			return
		}
	}
	var types []string
	switch t := n.Get("type"); {
	case t == nil:
		if n.Get("properties") != nil {
			types = []string{"object"}
		}
	case t.Kind == lenient.String:
		types = []string{t.Str}
	case t.Kind == lenient.Array:
		for _, k := range t.Kids {
			if k.Kind == lenient.String && k.Str != "null" {
				types = append(types, k.Str)
			}
		}
		for _, k := range t.Kids {
			if k.Kind == lenient.String && k.Str == "null" {
				types = append(types, k.Str)
			}
		}
	}
	if len(types) == 0 {
		b.WriteString("any")
		return
	}
	for i, t := range types {
		if i > 0 {
			b.WriteByte('|')
		}
		switch t {
		case "array":
			b.WriteString("[]")
			typeText(b, n.Get("items"), depth+1)
		case "object":
			objectText(b, n, depth)
		default:
			b.WriteString(t)
		}
	}
}

// objectText writes an object schema as {a: T, b?: T}, or map[string]T for
// a map, or object when it says nothing of its members.
func objectText(b *strings.Builder, n *lenient.Node, depth int) {
	props := n.Get("properties")
	if props == nil || props.Kind != lenient.Object || len(props.Keys) == 0 {
		if a := n.Get("additionalProperties"); a != nil && a.Kind == lenient.Object {
			b.WriteString("map[string]")
			typeText(b, a, depth+1)
			return
		}
		b.WriteString("object")
		return
	}
	req := n.Get("required")
	b.WriteByte('{')
	for i, k := range props.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		if !required(req, k) {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		typeText(b, props.Kids[i], depth+1)
	}
	b.WriteByte('}')
}

func required(req *lenient.Node, name string) bool {
	if req == nil || req.Kind != lenient.Array {
		return false
	}
	for _, r := range req.Kids {
		if r.Kind == lenient.String && r.Str == name {
			return true
		}
	}
	return false
}

// signature writes name(a T, b? T) -> Out.
func signature(name string, in, out *lenient.Node) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	if in != nil && in.Kind == lenient.Object {
		if props := in.Get("properties"); props != nil && props.Kind == lenient.Object {
			req := in.Get("required")
			for i, k := range props.Keys {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(k)
				if !required(req, k) {
					b.WriteByte('?')
				}
				b.WriteByte(' ')
				typeText(&b, props.Kids[i], 1)
			}
		}
	}
	b.WriteString(") -> ")
	typeText(&b, out, 0)
	return b.String()
}
