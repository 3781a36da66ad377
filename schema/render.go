package schema

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/lenient"
)

// Tool definitions.

// defMaxDepth bounds the nesting of the parameter lists and of the type
// expressions written for a schema.
const (
	defMaxDepth     = 6
	defMaxTypeDepth = 4
	defMaxExample   = 4 // top-level arguments in the example call
	// defMaxSteps bounds the work spent on one tool's schema (parameter lines
	// and type expressions), which $ref could otherwise make exponential.
	defMaxSteps = 5000
)

// list returns the elements of n's array member key, or nil.
func list(n *lenient.Node, key string) []*lenient.Node {
	if v := n.Get(key); v != nil && v.Kind == lenient.Array {
		return v.Kids
	}
	return nil
}

// member is one member of an object.
type member struct {
	key string
	val *lenient.Node
}

// members returns the members of object n, in order.
func members(n *lenient.Node) []member {
	if n == nil || n.Kind != lenient.Object {
		return nil
	}
	out := make([]member, len(n.Keys))
	for i, k := range n.Keys {
		out[i] = member{k, n.Kids[i]}
	}
	return out
}

// addMember appends a member to object n.
func addMember(n *lenient.Node, key string, val *lenient.Node) {
	n.Keys = append(n.Keys, key)
	n.Kids = append(n.Kids, val)
}

// appendDefJSON appends n as compact JSON with a space after each comma and
// colon.
func appendDefJSON(dst []byte, n *lenient.Node) []byte {
	switch n.Kind {
	case lenient.Null:
		return append(dst, "null"...)
	case lenient.Bool:
		if n.Bool {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case lenient.Number:
		return append(dst, n.Str...)
	case lenient.String:
		return lenient.AppendQuoted(dst, n.Str)
	case lenient.Array:
		dst = append(dst, '[')
		for i, e := range n.Kids {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendDefJSON(dst, e)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, k := range n.Keys {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = lenient.AppendQuoted(dst, k)
		dst = append(dst, ": "...)
		dst = appendDefJSON(dst, n.Kids[i])
	}
	return append(dst, '}')
}

func defJSON(n *lenient.Node) string { return string(appendDefJSON(nil, n)) }

// defRenderer writes the parameters of one tool's schema.
type defRenderer struct {
	b     *strings.Builder
	root  *lenient.Node
	path  []*lenient.Node // the schemas whose fields are being listed, outermost first
	steps int             // parameter lines and type expressions written so far
}

// WriteToolDef writes t as the model reads it: a heading with its name, its
// description, and a list of its parameters with their types, what is
// required and what each is for (see protocol.PTK.Tools for the details).
func WriteToolDef(b *strings.Builder, t ptk.ToolInfo) {
	b.WriteString("## ")
	b.WriteString(defOneLine(t.Name))
	b.WriteByte('\n')
	if d := strings.TrimSpace(t.Description); d != "" {
		b.WriteString(d)
		b.WriteByte('\n')
	}
	root, err := schemaTree(t.Parameters)
	if err != nil {
		b.WriteString("(parameters schema unreadable)\n")
		return
	}
	r := defRenderer{b: b, root: root}
	if r.fields(root, 0) {
		return
	}
	if r.view(root) != nil {
		// A schema that is not an object's.
		if typ := r.typeOf(root, 0); typ != "any" && canonicalType(typ) != "object" {
			b.WriteString("Arguments: " + typ + "\n")
			return
		}
	}
	b.WriteString("No arguments.\n")
}

// view returns the schema n stands for: $ref followed, allOf merged. It returns
// nil when n is not a schema object or its reference cannot be followed.
func (r *defRenderer) view(n *lenient.Node) *lenient.Node {
	n = deref(r.root, n)
	if n == nil || n.Kind != lenient.Object {
		return nil
	}
	if all := list(n, "allOf"); len(all) > 0 {
		return r.mergeAllOf(n, all)
	}
	return n
}

// mergeAllOf returns n with the members of its allOf schemas: n's own members
// first, properties and required lists concatenated.
func (r *defRenderer) mergeAllOf(n *lenient.Node, all []*lenient.Node) *lenient.Node {
	merged := &lenient.Node{Kind: lenient.Object}
	props := &lenient.Node{Kind: lenient.Object}
	req := &lenient.Node{Kind: lenient.Array}
	seen := map[string]bool{"allOf": true, "properties": true, "required": true}
	add := func(s *lenient.Node) {
		if s == nil {
			return
		}
		if p := s.Get("properties"); p != nil && p.Kind == lenient.Object {
			props.Keys = append(props.Keys, p.Keys...)
			props.Kids = append(props.Kids, p.Kids...)
		}
		req.Kids = append(req.Kids, list(s, "required")...)
		for i, k := range s.Keys {
			if !seen[k] {
				seen[k] = true
				addMember(merged, k, s.Kids[i])
			}
		}
	}
	add(n)
	for _, s := range all {
		if s != n {
			add(r.viewNoAllOf(s))
		}
	}
	if len(props.Keys) > 0 {
		addMember(merged, "properties", props)
	}
	if len(req.Kids) > 0 {
		addMember(merged, "required", req)
	}
	return merged
}

// viewNoAllOf follows the $ref of n without merging allOf, which bounds the
// work of nested allOf.
func (r *defRenderer) viewNoAllOf(n *lenient.Node) *lenient.Node {
	n = deref(r.root, n)
	if n == nil || n.Kind != lenient.Object {
		return nil
	}
	return n
}

func (r *defRenderer) onPath(n *lenient.Node) bool { return slices.Contains(r.path, n) }

// fields writes the fields of schema n (an object's properties, an array's
// item fields, the fields of anyOf/oneOf object variants) as a list at depth,
// and reports whether it wrote anything.
func (r *defRenderer) fields(n *lenient.Node, depth int) bool {
	v := r.view(n)
	if v == nil || r.onPath(v) {
		return false
	}
	if depth >= defMaxDepth {
		if r.hasFields(v) {
			r.indent(depth)
			r.b.WriteString("- …\n")
			return true
		}
		return false
	}
	r.path = append(r.path, v)
	defer func() { r.path = r.path[:len(r.path)-1] }()

	if props := v.Get("properties"); props != nil && props.Kind == lenient.Object && len(props.Keys) > 0 {
		required := list(v, "required")
		for _, m := range members(props) {
			if r.steps >= defMaxSteps {
				r.indent(depth)
				r.b.WriteString("- …\n")
				break
			}
			r.field(m.key, m.val, defRequired(m.key, required), depth)
		}
		return true
	}
	if items := v.Get("items"); items != nil && items.Kind == lenient.Object {
		return r.fields(items, depth)
	}
	// The variants with fields, each once: "X | array of X" lists X's fields
	// once.
	var variants, targets []*lenient.Node
	for _, alt := range defAlternatives(v) {
		target := r.view(alt)
		if !r.hasFields(target) {
			continue
		}
		if items := r.view(target.Get("items")); target.Get("properties") == nil && items != nil {
			target = items
		}
		if !slices.Contains(targets, target) {
			variants = append(variants, alt)
			targets = append(targets, target)
		}
	}
	switch len(variants) {
	case 0:
		return false
	case 1:
		return r.fields(variants[0], depth)
	}
	for k, alt := range variants {
		r.indent(depth)
		r.b.WriteString("- variant ")
		r.b.WriteString(strconv.Itoa(k + 1))
		r.b.WriteString(":\n")
		r.fields(alt, depth+1)
	}
	return true
}

// hasFields reports whether fields would write something for schema v,
// looking one level down.
func (r *defRenderer) hasFields(v *lenient.Node) bool {
	if v == nil {
		return false
	}
	if props := v.Get("properties"); props != nil && props.Kind == lenient.Object && len(props.Keys) > 0 {
		return true
	}
	if items := r.view(v.Get("items")); items != nil {
		if props := items.Get("properties"); props != nil && props.Kind == lenient.Object && len(props.Keys) > 0 {
			return true
		}
	}
	for _, alt := range defAlternatives(v) {
		if alt := r.view(alt); alt != nil {
			if props := alt.Get("properties"); props != nil && props.Kind == lenient.Object && len(props.Keys) > 0 {
				return true
			}
		}
	}
	return false
}

func defAlternatives(v *lenient.Node) []*lenient.Node {
	if alts := list(v, "anyOf"); len(alts) > 0 {
		return alts
	}
	return list(v, "oneOf")
}

func (r *defRenderer) indent(depth int) {
	for range depth {
		r.b.WriteString("  ")
	}
}

// field writes one parameter line and the fields nested in it.
func (r *defRenderer) field(name string, n *lenient.Node, required bool, depth int) {
	r.steps++
	v := r.view(n)
	keyword := func(key string) *lenient.Node {
		if a := n.Get(key); a != nil {
			return a
		}
		return v.Get(key)
	}
	r.indent(depth)
	r.b.WriteString("- ")
	r.b.WriteString(defOneLine(name))
	r.b.WriteString(" (")
	r.b.WriteString(r.typeOf(n, 0))
	if required {
		r.b.WriteString(", required")
	} else {
		r.b.WriteString(", optional")
	}
	if d := keyword("default"); d != nil {
		r.b.WriteString(", default ")
		r.b.WriteString(defJSON(d))
	}
	if f := keyword("format"); f != nil && f.Kind == lenient.String && f.Str != "" {
		r.b.WriteString(", format ")
		r.b.WriteString(defOneLine(f.Str))
	}
	writeBound := func(key, op, unit string) {
		if a := keyword(key); a != nil && a.Kind == lenient.Number {
			r.b.WriteString(", ")
			r.b.WriteString(op)
			r.b.WriteString(a.Str)
			r.b.WriteString(unit)
		}
	}
	if a := keyword("exclusiveMinimum"); a != nil && a.Kind == lenient.Bool && a.Bool {
		writeBound("minimum", "> ", "")
	} else {
		writeBound("minimum", ">= ", "")
		writeBound("exclusiveMinimum", "> ", "")
	}
	if a := keyword("exclusiveMaximum"); a != nil && a.Kind == lenient.Bool && a.Bool {
		writeBound("maximum", "< ", "")
	} else {
		writeBound("maximum", "<= ", "")
		writeBound("exclusiveMaximum", "< ", "")
	}
	writeBound("minLength", ">= ", " chars")
	writeBound("maxLength", "<= ", " chars")
	writeBound("minItems", ">= ", " items")
	writeBound("maxItems", "<= ", " items")
	if p := keyword("pattern"); p != nil && p.Kind == lenient.String {
		r.b.WriteString(", pattern ")
		r.b.WriteString(defOneLine(p.Str))
	}
	r.b.WriteByte(')')
	desc := defDescription(keyword("description"))
	if desc == "" {
		desc = defDescription(keyword("title"))
	}
	if items := v.Get("items"); items != nil && items.Kind == lenient.Object {
		if d := defDescription(items.Get("description")); d != "" {
			if desc != "" {
				desc += " "
			}
			desc += "Items: " + d
		}
	}
	if desc != "" {
		r.b.WriteString(": ")
		r.b.WriteString(desc)
	}
	r.b.WriteByte('\n')
	r.fields(n, depth+1)
}

// defDescription returns a description as one line.
func defDescription(d *lenient.Node) string {
	if d == nil || d.Kind != lenient.String {
		return ""
	}
	return strings.Join(strings.Fields(d.Str), " ")
}

// defRequired reports whether a property is listed in its object's
// "required" (normalization has already applied the properties' own
// "required": true and "optional" flags to the list).
func defRequired(name string, required []*lenient.Node) bool {
	for _, r := range required {
		if r.Kind == lenient.String && r.Str == name {
			return true
		}
	}
	return false
}

// typeOf returns the type expression of schema n.
func (r *defRenderer) typeOf(n *lenient.Node, depth int) string {
	r.steps++
	if depth > defMaxTypeDepth || r.steps > defMaxSteps {
		return "…"
	}
	v := r.view(n)
	if v == nil {
		if ref := n.Get("$ref"); ref != nil && ref.Kind == lenient.String {
			return defRefName(ref.Str)
		}
		return "any"
	}
	if r.onPath(v) {
		if ref := n.Get("$ref"); ref != nil && ref.Kind == lenient.String {
			return defRefName(ref.Str)
		}
	}
	nullable := truthy(v.Get("nullable"))
	withNull := func(s string) string {
		if nullable && s != "null" && !strings.HasSuffix(s, " | null") {
			return s + " | null"
		}
		return s
	}
	if c := v.Get("const"); c != nil {
		return withNull(defJSON(c))
	}
	if e := list(v, "enum"); len(e) > 0 {
		vals := make([]string, len(e))
		for i, x := range e {
			vals[i] = defJSON(x)
		}
		return withNull(strings.Join(vals, " | "))
	}
	if alts := defAlternatives(v); len(alts) > 0 {
		var parts []string
		for _, alt := range alts {
			parts = defAppendUnique(parts, r.typeOf(alt, depth+1))
		}
		return withNull(strings.Join(parts, " | "))
	}
	var names []string
	switch t := v.Get("type"); {
	case t == nil:
	case t.Kind == lenient.String:
		names = []string{t.Str}
	case t.Kind == lenient.Array:
		for _, e := range t.Kids {
			if e.Kind == lenient.String {
				names = append(names, e.Str)
			}
		}
	}
	if len(names) == 0 {
		switch {
		case v.Get("properties") != nil:
			names = []string{"object"}
		case v.Get("items") != nil:
			names = []string{"array"}
		default:
			names = []string{"any"}
		}
	}
	var parts []string
	for _, name := range names {
		parts = defAppendUnique(parts, r.typeName(v, name, depth))
	}
	return withNull(strings.Join(parts, " | "))
}

// typeName returns the type expression of schema v for one of its type names.
func (r *defRenderer) typeName(v *lenient.Node, name string, depth int) string {
	shown := canonicalType(name)
	if shown == "" {
		shown = name
	}
	shown = defOneLine(shown)
	switch canonicalType(name) {
	case "array":
		items := v.Get("items")
		if tuple := list(v, "prefixItems"); len(tuple) > 0 {
			items = &lenient.Node{Kind: lenient.Array, Kids: tuple}
		}
		switch {
		case items == nil:
		case items.Kind == lenient.Array:
			elems := make([]string, len(items.Kids))
			for i, e := range items.Kids {
				elems[i] = r.typeOf(e, depth+1)
			}
			shown += " [" + strings.Join(elems, ", ") + "]"
		case items.Kind == lenient.Object:
			shown += " of " + defParen(r.typeOf(items, depth+1))
		}
	case "object":
		if props := v.Get("properties"); props == nil || props.Kind != lenient.Object || len(props.Keys) == 0 {
			if ap := v.Get("additionalProperties"); ap != nil && ap.Kind == lenient.Object {
				shown += " of " + defParen(r.typeOf(ap, depth+1))
			}
		}
	}
	return shown
}

func defParen(t string) string {
	if strings.Contains(t, " | ") || strings.Contains(t, " of ") {
		return "(" + t + ")"
	}
	return t
}

func defAppendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// defRefName returns the last segment of a reference: "#/$defs/Address" gives
// "Address".
func defRefName(ref string) string {
	if i := strings.LastIndexAny(ref, "/#"); i >= 0 && i < len(ref)-1 {
		ref = ref[i+1:]
	}
	return defOneLine(ref)
}

// defOneLine returns s with its line breaks replaced by spaces.
func defOneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\u0085\u2028\u2029") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			return ' '
		}
		return r
	}, s)
}

// The example call.

// ExampleCall makes an example call of t for a prompt, {"tool": …, "args":
// …, "reasoning": …} on one line: its real name and arguments built from its
// schema (the required parameters, or the first one, with placeholder values
// by type).
func ExampleCall(t ptk.ToolInfo) string {
	var dst []byte
	dst = append(dst, `{"tool": `...)
	dst = lenient.AppendQuoted(dst, t.Name)
	dst = append(dst, `, "args": `...)
	root, _ := schemaTree(t.Parameters)
	r := defRenderer{root: root}
	dst = r.exampleArgs(dst, r.view(root), 0)
	dst = append(dst, `, "reasoning": "why this call"}`...)
	return string(dst)
}

// exampleArgs appends an example object for object schema v: its required
// properties (at most defMaxExample, 2 in nested objects), or else its first
// one.
func (r *defRenderer) exampleArgs(dst []byte, v *lenient.Node, depth int) []byte {
	dst = append(dst, '{')
	if props := v.Get("properties"); props != nil && props.Kind == lenient.Object && depth < 3 && !r.onPath(v) {
		r.path = append(r.path, v)
		required := list(v, "required")
		limit := defMaxExample
		if depth > 0 {
			limit = 2
		}
		var chosen []member
		for _, m := range members(props) {
			if defRequired(m.key, required) && len(chosen) < limit {
				chosen = append(chosen, m)
			}
		}
		if len(chosen) == 0 && len(props.Keys) > 0 {
			chosen = members(props)[:1]
		}
		for i, m := range chosen {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = lenient.AppendQuoted(dst, m.key)
			dst = append(dst, ": "...)
			dst = r.exampleValue(dst, m.val, depth+1)
		}
		r.path = r.path[:len(r.path)-1]
	}
	return append(dst, '}')
}

// exampleValue appends a plausible value for schema n: its first example,
// const, first enum value or default, else a placeholder of its type.
func (r *defRenderer) exampleValue(dst []byte, n *lenient.Node, depth int) []byte {
	v := r.view(n)
	if v == nil {
		return append(dst, `"..."`...)
	}
	if ex := list(v, "examples"); len(ex) > 0 {
		return appendDefJSON(dst, ex[0])
	}
	if c := v.Get("const"); c != nil {
		return appendDefJSON(dst, c)
	}
	if e := list(v, "enum"); len(e) > 0 {
		return appendDefJSON(dst, e[0])
	}
	if d := v.Get("default"); d != nil {
		return appendDefJSON(dst, d)
	}
	if alts := defAlternatives(v); len(alts) > 0 && depth < 3 {
		return r.exampleValue(dst, alts[0], depth+1)
	}
	name := ""
	switch t := v.Get("type"); {
	case t == nil:
	case t.Kind == lenient.String:
		name = t.Str
	case t.Kind == lenient.Array:
		for _, e := range t.Kids {
			if e.Kind == lenient.String && e.Str != "null" {
				name = e.Str
				break
			}
		}
	}
	if name == "" {
		switch {
		case v.Get("properties") != nil:
			name = "object"
		case v.Get("items") != nil:
			name = "array"
		}
	}
	switch canonicalType(name) {
	case "object":
		return r.exampleArgs(dst, v, depth)
	case "array":
		if items := v.Get("items"); items != nil && items.Kind == lenient.Object && depth < 3 {
			dst = append(dst, '[')
			dst = r.exampleValue(dst, items, depth+1)
			return append(dst, ']')
		}
		return append(dst, "[]"...)
	case "integer":
		return append(dst, '1')
	case "number":
		return append(dst, "1.5"...)
	case "boolean":
		return append(dst, "true"...)
	}
	return append(dst, `"..."`...)
}

// schemaTree is the tree a schema is rendered from: the one the checker
// compiled, so the model is shown what its calls are checked against, or
// for a schema the validator refuses, the same normalization of it.
func schemaTree(raw json.RawMessage) (*lenient.Node, error) {
	if s, err := Compile(raw); err == nil {
		if s == nil {
			return nil, nil
		}
		return s.root, nil
	}
	return normalizedSchema(raw)
}
