package distill

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// GoTypes returns Go declarations of the types In and Out for a ptool's
// input and output JSON Schemas: objects become structs whose fields carry
// the JSON names (omitempty when not required), strings, numbers,
// integers and booleans their Go types, arrays slices, and what has no
// simple Go form (alternatives, references, no type) any. A string enum is
// kept as an `enum:"..."` tag, as ptool.New reads it.
func GoTypes(in, out json.RawMessage) (string, error) {
	var b strings.Builder
	for _, t := range []struct {
		name string
		raw  json.RawMessage
	}{{"In", in}, {"Out", out}} {
		var s map[string]any
		if err := json.Unmarshal(t.raw, &s); err != nil {
			return "", fmt.Errorf("distill: the %s schema: %w", strings.ToLower(t.name), err)
		}
		if doc, ok := s["description"].(string); ok && doc != "" {
			fmt.Fprintf(&b, "// %s is %s\n", t.name, oneLine(doc))
		} else {
			fmt.Fprintf(&b, "// %s is the ptool's %s.\n", t.name, map[string]string{"In": "input", "Out": "output"}[t.name])
		}
		ty := goType(s, 0)
		if strings.HasPrefix(ty, "struct") {
			fmt.Fprintf(&b, "type %s %s\n\n", t.name, ty)
		} else {
			fmt.Fprintf(&b, "type %s = %s\n\n", t.name, ty)
		}
	}
	return b.String(), nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

func goType(s map[string]any, depth int) string {
	if depth > 20 || s == nil {
		return "any"
	}
	typ, _ := s["type"].(string)
	if typ == "" {
		if _, ok := s["properties"]; ok {
			typ = "object"
		}
	}
	switch typ {
	case "string":
		return "string"
	case "integer":
		return "int64"
	case "number":
		return "float64"
	case "boolean":
		return "bool"
	case "array":
		items, _ := s["items"].(map[string]any)
		return "[]" + goType(items, depth+1)
	case "object":
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			return "map[string]any"
		}
		req := map[string]bool{}
		if r, ok := s["required"].([]any); ok {
			for _, n := range r {
				if n, ok := n.(string); ok {
					req[n] = true
				}
			}
		}
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		var b strings.Builder
		b.WriteString("struct {\n")
		used := map[string]bool{}
		for _, n := range names {
			p, _ := props[n].(map[string]any)
			if d, ok := p["description"].(string); ok && d != "" {
				fmt.Fprintf(&b, "\t// %s\n", oneLine(d))
			}
			field := fieldName(n)
			for used[field] {
				field += "_"
			}
			used[field] = true
			tag := n
			if !req[n] {
				tag += ",omitempty"
			}
			extra := ""
			if e, ok := p["enum"].([]any); ok && p["type"] == "string" {
				var vals []string
				for _, v := range e {
					if v, ok := v.(string); ok && !strings.ContainsAny(v, ",\"`") {
						vals = append(vals, v)
					}
				}
				if len(vals) == len(e) {
					extra = fmt.Sprintf(" enum:%q", strings.Join(vals, ","))
				}
			}
			fmt.Fprintf(&b, "\t%s %s `json:%q%s`\n", field, goType(p, depth+1), tag, extra)
		}
		b.WriteString("}")
		return b.String()
	}
	return "any"
}

// fieldName makes a JSON name an exported Go identifier: "user_id" is
// UserID's cousin UserId, "2fa" is F2fa.
func fieldName(n string) string {
	var b strings.Builder
	up := true
	for _, r := range n {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	s := b.String()
	if s == "" || !unicode.IsLetter([]rune(s)[0]) {
		s = "F" + s
	}
	return s
}

// outputEnum returns the values of an output schema that is a string enum.
func outputEnum(out json.RawMessage) []string {
	var s struct {
		Type string `json:"type"`
		Enum []any  `json:"enum"`
	}
	if json.Unmarshal(out, &s) != nil || s.Type != "string" {
		return nil
	}
	var vals []string
	for _, v := range s.Enum {
		if v, ok := v.(string); ok {
			vals = append(vals, v)
		}
	}
	return vals
}
