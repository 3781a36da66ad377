package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/lenient"
)

// Tool definitions.

// defMaxDepth bounds the nesting of the parameter lists and of the type
// expressions written for a schema; defMaxDecodeDepth bounds the nesting kept
// when a schema is decoded.
const (
	defMaxDepth       = 6
	defMaxTypeDepth   = 4
	defMaxDecodeDepth = 64
	defMaxRefHops     = 8
	defMaxExample     = 4 // top-level arguments in the example call
	// defMaxSteps bounds the work spent on one tool's schema (parameter lines
	// and type expressions), which $ref could otherwise make exponential.
	defMaxSteps = 5000
)

type defKind uint8

const (
	defNull defKind = iota
	defBool
	defNumber
	defString
	defArray
	defObject
	defElided // a value nested deeper than defMaxDecodeDepth
)

// defNode is a decoded JSON value that keeps the order of object members,
// which encoding/json's maps lose.
type defNode struct {
	kind    defKind
	text    string // string value, or number literal
	bool    bool
	members []defMember // object members, in order
	elems   []*defNode  // array elements
}

type defMember struct {
	key string
	val *defNode
}

// get returns the value of the last member named key of an object, or nil.
func (n *defNode) get(key string) *defNode {
	if n == nil || n.kind != defObject {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

func (n *defNode) list(key string) []*defNode {
	if v := n.get(key); v != nil && v.kind == defArray {
		return v.elems
	}
	return nil
}

var errDefTrailing = errors.New("data after the schema")

// decodeDef decodes one JSON value, keeping the order of object members. Empty
// input decodes as null.
func decodeDef(data []byte) (*defNode, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &defNode{kind: defNull}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeDefValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errDefTrailing
	}
	return n, nil
}

func decodeDefValue(dec *json.Decoder, depth int) (*defNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &defNode{kind: defNull}, nil
	case bool:
		return &defNode{kind: defBool, bool: t}, nil
	case json.Number:
		return &defNode{kind: defNumber, text: string(t)}, nil
	case string:
		return &defNode{kind: defString, text: t}, nil
	}
	open := tok.(json.Delim)
	if depth >= defMaxDecodeDepth {
		// Skip the value without recursing.
		for level := 1; level > 0; {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				level++
			case json.Delim('}'), json.Delim(']'):
				level--
			}
		}
		return &defNode{kind: defElided}, nil
	}
	if open == '[' {
		n := &defNode{kind: defArray}
		for dec.More() {
			e, err := decodeDefValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, e)
		}
		_, err := dec.Token() // ]
		return n, err
	}
	n := &defNode{kind: defObject}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		v, err := decodeDefValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, defMember{key: key, val: v})
	}
	_, err = dec.Token() // }
	return n, err
}

// appendDefJSON appends n as compact JSON with a space after each comma and
// colon.
func appendDefJSON(dst []byte, n *defNode) []byte {
	switch n.kind {
	case defNull:
		return append(dst, "null"...)
	case defBool:
		if n.bool {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case defNumber:
		return append(dst, n.text...)
	case defString:
		return lenient.AppendQuoted(dst, n.text)
	case defArray:
		dst = append(dst, '[')
		for i, e := range n.elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendDefJSON(dst, e)
		}
		return append(dst, ']')
	case defObject:
		dst = append(dst, '{')
		for i, m := range n.members {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = lenient.AppendQuoted(dst, m.key)
			dst = append(dst, ": "...)
			dst = appendDefJSON(dst, m.val)
		}
		return append(dst, '}')
	}
	return append(dst, "…"...)
}

func defJSON(n *defNode) string { return string(appendDefJSON(nil, n)) }

// defRenderer writes the parameters of one tool's schema.
type defRenderer struct {
	b     *strings.Builder
	root  *defNode
	path  []*defNode // the schemas whose fields are being listed, outermost first
	steps int        // parameter lines and type expressions written so far
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
	root, err := decodeDef(t.Parameters)
	if err != nil || root.kind != defObject && root.kind != defNull {
		b.WriteString("(parameters schema unreadable)\n")
		return
	}
	r := defRenderer{b: b, root: root}
	if r.fields(root, 0) {
		return
	}
	if r.view(root) != nil {
		// A schema that is not an object's.
		if typ := r.typeOf(root, 0); typ != "any" && !defIsObjectType(strings.ToLower(typ)) {
			b.WriteString("Arguments: " + typ + "\n")
			return
		}
	}
	b.WriteString("No arguments.\n")
}

// view returns the schema n stands for: $ref followed, allOf merged. It returns
// nil when n is not a schema object or its reference cannot be followed.
func (r *defRenderer) view(n *defNode) *defNode {
	for hops := 0; n != nil && n.kind == defObject; hops++ {
		ref := n.get("$ref")
		if ref == nil || ref.kind != defString {
			break
		}
		if hops == defMaxRefHops {
			return nil
		}
		n = r.lookup(ref.text)
	}
	if n == nil || n.kind != defObject {
		return nil
	}
	if all := n.list("allOf"); len(all) > 0 {
		return r.mergeAllOf(n, all)
	}
	return n
}

// lookup resolves a local reference ("#", "#/$defs/Name", any JSON Pointer).
func (r *defRenderer) lookup(ref string) *defNode {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	n := r.root
	if ptr == "" {
		return n
	}
	if ptr[0] != '/' {
		return nil
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n.kind {
		case defObject:
			n = n.get(tok)
		case defArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.elems) {
				return nil
			}
			n = n.elems[i]
		default:
			n = nil
		}
		if n == nil {
			return nil
		}
	}
	return n
}

// mergeAllOf returns n with the members of its allOf schemas: n's own members
// first, properties and required lists concatenated.
func (r *defRenderer) mergeAllOf(n *defNode, all []*defNode) *defNode {
	merged := &defNode{kind: defObject}
	props := &defNode{kind: defObject}
	req := &defNode{kind: defArray}
	seen := map[string]bool{"allOf": true, "properties": true, "required": true}
	add := func(s *defNode) {
		if s == nil {
			return
		}
		if p := s.get("properties"); p != nil && p.kind == defObject {
			props.members = append(props.members, p.members...)
		}
		req.elems = append(req.elems, s.list("required")...)
		for _, m := range s.members {
			if !seen[m.key] {
				seen[m.key] = true
				merged.members = append(merged.members, m)
			}
		}
	}
	add(n)
	for _, s := range all {
		if s != n {
			add(r.viewNoAllOf(s))
		}
	}
	if len(props.members) > 0 {
		merged.members = append(merged.members, defMember{"properties", props})
	}
	if len(req.elems) > 0 {
		merged.members = append(merged.members, defMember{"required", req})
	}
	return merged
}

// viewNoAllOf follows the $ref of n without merging allOf, which bounds the
// work of nested allOf.
func (r *defRenderer) viewNoAllOf(n *defNode) *defNode {
	for hops := 0; n != nil && n.kind == defObject && hops < defMaxRefHops; hops++ {
		ref := n.get("$ref")
		if ref == nil || ref.kind != defString {
			return n
		}
		n = r.lookup(ref.text)
	}
	if n == nil || n.kind != defObject {
		return nil
	}
	return n
}

func (r *defRenderer) onPath(n *defNode) bool { return slices.Contains(r.path, n) }

// fields writes the fields of schema n (an object's properties, an array's
// item fields, the fields of anyOf/oneOf object variants) as a list at depth,
// and reports whether it wrote anything.
func (r *defRenderer) fields(n *defNode, depth int) bool {
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

	if props := v.get("properties"); props != nil && props.kind == defObject && len(props.members) > 0 {
		required := v.list("required")
		for _, m := range props.members {
			if r.steps >= defMaxSteps {
				r.indent(depth)
				r.b.WriteString("- …\n")
				break
			}
			r.field(m.key, m.val, defRequired(m.key, m.val, required), depth)
		}
		return true
	}
	if items := v.get("items"); items != nil && items.kind == defObject {
		return r.fields(items, depth)
	}
	// The variants with fields, each once: "X | array of X" lists X's fields
	// once.
	var variants, targets []*defNode
	for _, alt := range defAlternatives(v) {
		target := r.view(alt)
		if !r.hasFields(target) {
			continue
		}
		if items := r.view(target.get("items")); target.get("properties") == nil && items != nil {
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
func (r *defRenderer) hasFields(v *defNode) bool {
	if v == nil {
		return false
	}
	if props := v.get("properties"); props != nil && props.kind == defObject && len(props.members) > 0 {
		return true
	}
	if items := r.view(v.get("items")); items != nil {
		if props := items.get("properties"); props != nil && props.kind == defObject && len(props.members) > 0 {
			return true
		}
	}
	for _, alt := range defAlternatives(v) {
		if alt := r.view(alt); alt != nil {
			if props := alt.get("properties"); props != nil && props.kind == defObject && len(props.members) > 0 {
				return true
			}
		}
	}
	return false
}

func defAlternatives(v *defNode) []*defNode {
	if alts := v.list("anyOf"); len(alts) > 0 {
		return alts
	}
	return v.list("oneOf")
}

func (r *defRenderer) indent(depth int) {
	for range depth {
		r.b.WriteString("  ")
	}
}

// field writes one parameter line and the fields nested in it.
func (r *defRenderer) field(name string, n *defNode, required bool, depth int) {
	r.steps++
	v := r.view(n)
	keyword := func(key string) *defNode {
		if a := n.get(key); a != nil {
			return a
		}
		return v.get(key)
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
	if f := keyword("format"); f != nil && f.kind == defString && f.text != "" {
		r.b.WriteString(", format ")
		r.b.WriteString(defOneLine(f.text))
	}
	writeBound := func(key, op, unit string) {
		if a := keyword(key); a != nil && a.kind == defNumber {
			r.b.WriteString(", ")
			r.b.WriteString(op)
			r.b.WriteString(a.text)
			r.b.WriteString(unit)
		}
	}
	if a := keyword("exclusiveMinimum"); a != nil && a.kind == defBool && a.bool {
		writeBound("minimum", "> ", "")
	} else {
		writeBound("minimum", ">= ", "")
		writeBound("exclusiveMinimum", "> ", "")
	}
	if a := keyword("exclusiveMaximum"); a != nil && a.kind == defBool && a.bool {
		writeBound("maximum", "< ", "")
	} else {
		writeBound("maximum", "<= ", "")
		writeBound("exclusiveMaximum", "< ", "")
	}
	writeBound("minLength", ">= ", " chars")
	writeBound("maxLength", "<= ", " chars")
	writeBound("minItems", ">= ", " items")
	writeBound("maxItems", "<= ", " items")
	if p := keyword("pattern"); p != nil && p.kind == defString {
		r.b.WriteString(", pattern ")
		r.b.WriteString(defOneLine(p.text))
	}
	r.b.WriteByte(')')
	desc := defDescription(keyword("description"))
	if desc == "" {
		desc = defDescription(keyword("title"))
	}
	if items := v.get("items"); items != nil && items.kind == defObject {
		if d := defDescription(items.get("description")); d != "" {
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
func defDescription(d *defNode) string {
	if d == nil || d.kind != defString {
		return ""
	}
	return strings.Join(strings.Fields(d.text), " ")
}

// defRequired reports whether a property is required: listed in its object's
// required list or marked "required": true (draft 3), and not marked
// "optional": true (as some BFCL schemas do).
func defRequired(name string, prop *defNode, required []*defNode) bool {
	req := false
	for _, r := range required {
		if r.kind == defString && r.text == name {
			req = true
			break
		}
	}
	if r := prop.get("required"); r != nil && r.kind == defBool && r.bool {
		req = true
	}
	if defTruthy(prop.get("optional")) {
		req = false
	}
	return req
}

func defTruthy(n *defNode) bool {
	if n == nil {
		return false
	}
	switch n.kind {
	case defBool:
		return n.bool
	case defString:
		switch strings.ToLower(n.text) {
		case "true", "yes", "1":
			return true
		}
	}
	return false
}

// typeOf returns the type expression of schema n.
func (r *defRenderer) typeOf(n *defNode, depth int) string {
	r.steps++
	if depth > defMaxTypeDepth || r.steps > defMaxSteps {
		return "…"
	}
	v := r.view(n)
	if v == nil {
		if ref := n.get("$ref"); ref != nil && ref.kind == defString {
			return defRefName(ref.text)
		}
		return "any"
	}
	if r.onPath(v) {
		if ref := n.get("$ref"); ref != nil && ref.kind == defString {
			return defRefName(ref.text)
		}
	}
	nullable := defTruthy(v.get("nullable"))
	withNull := func(s string) string {
		if nullable && s != "null" && !strings.HasSuffix(s, " | null") {
			return s + " | null"
		}
		return s
	}
	if c := v.get("const"); c != nil {
		return withNull(defJSON(c))
	}
	if e := v.list("enum"); len(e) > 0 {
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
	switch t := v.get("type"); {
	case t == nil:
	case t.kind == defString:
		names = []string{t.text}
	case t.kind == defArray:
		for _, e := range t.elems {
			if e.kind == defString {
				names = append(names, e.text)
			}
		}
	}
	if len(names) == 0 {
		switch {
		case v.get("properties") != nil:
			names = []string{"object"}
		case v.get("items") != nil:
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
func (r *defRenderer) typeName(v *defNode, name string, depth int) string {
	shown := name
	switch name {
	case "dict":
		shown = "object"
	case "float":
		shown = "number"
	case "tuple":
		shown = "array"
	case "":
		shown = "any"
	}
	shown = defOneLine(shown)
	switch lower := strings.ToLower(name); {
	case defIsArrayType(lower):
		items := v.get("items")
		if tuple := v.list("prefixItems"); len(tuple) > 0 {
			items = &defNode{kind: defArray, elems: tuple}
		}
		switch {
		case items == nil:
		case items.kind == defArray:
			elems := make([]string, len(items.elems))
			for i, e := range items.elems {
				elems[i] = r.typeOf(e, depth+1)
			}
			shown += " [" + strings.Join(elems, ", ") + "]"
		case items.kind == defObject:
			shown += " of " + defParen(r.typeOf(items, depth+1))
		}
	case defIsObjectType(lower):
		if props := v.get("properties"); props == nil || props.kind != defObject || len(props.members) == 0 {
			if ap := v.get("additionalProperties"); ap != nil && ap.kind == defObject {
				shown += " of " + defParen(r.typeOf(ap, depth+1))
			}
		}
	}
	return shown
}

func defIsArrayType(lower string) bool {
	switch lower {
	case "array", "tuple", "list", "arraylist":
		return true
	}
	return false
}

func defIsObjectType(lower string) bool {
	switch lower {
	case "object", "dict", "map", "hashmap":
		return true
	}
	return false
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
	root, err := decodeDef(t.Parameters)
	if err != nil {
		root = nil
	}
	r := defRenderer{root: root}
	dst = r.exampleArgs(dst, r.view(root), 0)
	dst = append(dst, `, "reasoning": "why this call"}`...)
	return string(dst)
}

// exampleArgs appends an example object for object schema v: its required
// properties (at most defMaxExample, 2 in nested objects), or else its first
// one.
func (r *defRenderer) exampleArgs(dst []byte, v *defNode, depth int) []byte {
	dst = append(dst, '{')
	if props := v.get("properties"); props != nil && props.kind == defObject && depth < 3 && !r.onPath(v) {
		r.path = append(r.path, v)
		required := v.list("required")
		limit := defMaxExample
		if depth > 0 {
			limit = 2
		}
		var chosen []defMember
		for _, m := range props.members {
			if defRequired(m.key, m.val, required) && len(chosen) < limit {
				chosen = append(chosen, m)
			}
		}
		if len(chosen) == 0 && len(props.members) > 0 {
			chosen = props.members[:1]
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
func (r *defRenderer) exampleValue(dst []byte, n *defNode, depth int) []byte {
	v := r.view(n)
	if v == nil {
		return append(dst, `"..."`...)
	}
	if ex := v.list("examples"); len(ex) > 0 {
		return appendDefJSON(dst, ex[0])
	}
	if c := v.get("const"); c != nil {
		return appendDefJSON(dst, c)
	}
	if e := v.list("enum"); len(e) > 0 {
		return appendDefJSON(dst, e[0])
	}
	if d := v.get("default"); d != nil {
		return appendDefJSON(dst, d)
	}
	if alts := defAlternatives(v); len(alts) > 0 && depth < 3 {
		return r.exampleValue(dst, alts[0], depth+1)
	}
	name := ""
	switch t := v.get("type"); {
	case t == nil:
	case t.kind == defString:
		name = t.text
	case t.kind == defArray:
		for _, e := range t.elems {
			if e.kind == defString && e.text != "null" {
				name = e.text
				break
			}
		}
	}
	if name == "" {
		switch {
		case v.get("properties") != nil:
			name = "object"
		case v.get("items") != nil:
			name = "array"
		}
	}
	switch lower := strings.ToLower(name); {
	case defIsObjectType(lower):
		return r.exampleArgs(dst, v, depth)
	case defIsArrayType(lower):
		if items := v.get("items"); items != nil && items.kind == defObject && depth < 3 {
			dst = append(dst, '[')
			dst = r.exampleValue(dst, items, depth+1)
			return append(dst, ']')
		}
		return append(dst, "[]"...)
	case lower == "integer" || lower == "int" || lower == "long" || lower == "short":
		return append(dst, '1')
	case lower == "number" || lower == "float" || lower == "double":
		return append(dst, "1.5"...)
	case lower == "boolean" || lower == "bool":
		return append(dst, "true"...)
	}
	return append(dst, `"..."`...)
}
