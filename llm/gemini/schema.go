package gemini

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// openAPISchema converts a JSON Schema to the OpenAPI subset that the
// "parameters" field of a function declaration takes (the API rejects a
// request with any key the subset lacks). It keeps the keys of [kept];
// inlines "$ref"s to "#/$defs/..." and "#/definitions/..." (a reference it
// cannot resolve, or one within itself, becomes an empty schema); turns
// "type": [T, "null"] and anyOf [S, {"type": "null"}] into T or S with
// "nullable": true, another type list into its first type, oneOf into
// anyOf, and a string "const" into an enum of one; and keeps only the
// formats the subset has, enums of strings, and the required properties
// that are defined.
func openAPISchema(raw json.RawMessage) (map[string]any, error) {
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, err
	}
	if root == nil {
		return nil, errors.New("not a JSON object")
	}
	return convert(root, root, nil), nil
}

// kept are the keys whose values are copied as they are.
var kept = []string{"title", "description", "nullable", "minimum", "maximum", "minItems", "maxItems",
	"minLength", "maxLength", "pattern", "minProperties", "maxProperties", "propertyOrdering"}

// formats are the formats the subset has, by type.
var formats = map[string][]string{"string": {"enum", "date-time"}, "number": {"float", "double"}, "integer": {"int32", "int64"}}

// convert converts schema s of document root; refs are the references
// being inlined, to stop at a cycle.
func convert(s, root map[string]any, refs []string) map[string]any {
	if ref, ok := s["$ref"].(string); ok {
		return withDescription(s, convertRef(ref, root, refs))
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[key].([]any); ok {
			return convertAnyOf(s, branches, root, refs)
		}
	}
	out := map[string]any{}
	for _, k := range kept {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	typ, _ := s["type"].(string)
	types, _ := s["type"].([]any)
	for _, t := range types {
		if t == "null" {
			out["nullable"] = true
		} else if t, ok := t.(string); ok && typ == "" {
			typ = t
		}
	}
	enum, _ := s["enum"].([]any)
	if c, ok := s["const"].(string); ok {
		enum = []any{c}
	}
	if len(enum) > 0 && !slices.ContainsFunc(enum, func(v any) bool { _, ok := v.(string); return !ok }) {
		out["enum"] = enum
		typ = cmp.Or(typ, "string")
	}
	if typ != "" && typ != "null" {
		out["type"] = typ
	}
	if f, ok := s["format"].(string); ok && slices.Contains(formats[typ], f) {
		out["format"] = f
	}
	if items, ok := s["items"].(map[string]any); ok {
		out["items"] = convert(items, root, refs)
	}
	if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 {
		converted := map[string]any{}
		for name, p := range props {
			if p, ok := p.(map[string]any); ok {
				converted[name] = convert(p, root, refs)
			}
		}
		out["properties"] = converted
		names, _ := s["required"].([]any)
		var required []any
		for _, name := range names {
			if name, ok := name.(string); ok && converted[name] != nil {
				required = append(required, name)
			}
		}
		if len(required) > 0 {
			out["required"] = required
		}
	}
	return out
}

// convertRef inlines the schema a local reference points to.
func convertRef(ref string, root map[string]any, refs []string) map[string]any {
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		name, ok := strings.CutPrefix(ref, prefix)
		defs, _ := root[strings.Trim(prefix, "#/")].(map[string]any)
		if target, _ := defs[name].(map[string]any); ok && target != nil && !slices.Contains(refs, ref) {
			return convert(target, root, append(refs, ref))
		}
	}
	return map[string]any{}
}

// convertAnyOf converts anyOf or oneOf branches: a null branch makes the
// rest nullable, and a single other branch stands alone.
func convertAnyOf(s map[string]any, branches []any, root map[string]any, refs []string) map[string]any {
	var out []any
	nullable := false
	for _, b := range branches {
		if b, ok := b.(map[string]any); ok && b["type"] == "null" {
			nullable = true
		} else if ok {
			out = append(out, convert(b, root, refs))
		}
	}
	c := map[string]any{"anyOf": out} // the API takes no other key beside anyOf
	if len(out) == 1 {
		c = withDescription(s, out[0].(map[string]any))
	}
	if nullable {
		c["nullable"] = true
	}
	return c
}

func withDescription(s, out map[string]any) map[string]any {
	if d, ok := s["description"].(string); ok {
		out["description"] = d
	}
	return out
}
