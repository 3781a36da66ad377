package schema

import (
	"encoding/json"
	"github.com/ptkit/ptk/lenient"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// sch is a tool's parameter schema compiled for coercion and for the fast
// validity check: local $refs resolved, types, properties and enums read
// once, when the Parser is made.
type sch struct {
	types    []string // empty: any type
	props    []string // declared properties, in order
	sub      []*sch   // their schemas
	required []string
	enum     []string // string enum values, when every value is a string
	items    *sch
	prefix   []*sch // prefixItems, or draft-4 items arrays
	addl     *sch   // additionalProperties as a schema
	extraOK  bool   // properties beyond props are allowed
	alts     bool   // anyOf/oneOf: several shapes are allowed
	altSch   []*sch // those shapes
	patterns []patternSch
	nullOK   bool // null is allowed
	// simple: only keywords validSimple checks exactly.
	simple bool
}

func (s *sch) prop(name string) *sch {
	for i, p := range s.props {
		if p == name {
			return s.sub[i]
		}
	}
	return nil
}

func (s *sch) isRequired(name string) bool {
	for _, r := range s.required {
		if r == name {
			return true
		}
	}
	return false
}

// assertions are the JSON Schema keywords that can reject a value. A schema
// using any beyond type, properties, required, items, enum and a boolean
// additionalProperties is checked by the full validator only.
var assertions = map[string]bool{
	"const": true, "multipleOf": true, "maximum": true, "exclusiveMaximum": true, "minimum": true,
	"exclusiveMinimum": true, "maxLength": true, "minLength": true, "pattern": true, "maxItems": true,
	"minItems": true, "uniqueItems": true, "maxContains": true, "minContains": true, "maxProperties": true,
	"minProperties": true, "dependentRequired": true, "dependentSchemas": true, "propertyNames": true,
	"patternProperties": true, "additionalItems": true, "prefixItems": true, "contains": true, "allOf": true,
	"anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true, "$ref": true,
	"$dynamicRef": true, "$recursiveRef": true, "unevaluatedItems": true, "unevaluatedProperties": true,
	"dependencies": true, "$schema": true,
}

// patternSch is a patternProperties entry.
type patternSch struct {
	re  *regexp.Regexp
	sub *sch
}

type schCompiler struct {
	root *lenient.Node
	memo map[*lenient.Node]*sch
	n    int
}

func compileSch(root *lenient.Node) *sch {
	if root == nil {
		return nil
	}
	c := &schCompiler{root: root, memo: map[*lenient.Node]*sch{}}
	return c.build(root, 0)
}

func (c *schCompiler) build(n *lenient.Node, depth int) *sch {
	if n == nil || n.Kind != lenient.Object || depth > lenient.MaxDepth || c.n > 10000 {
		return &sch{extraOK: true, nullOK: true}
	}
	if s := c.memo[n]; s != nil {
		return s
	}
	s := &sch{simple: true}
	c.memo[n] = s
	c.n++
	for _, k := range n.Keys {
		if assertions[k] {
			s.simple = false
		}
	}
	if t := deref(c.root, n); t != n {
		s.simple = false
		*s = *c.build(t, depth+1) // an unresolvable reference (t nil) allows anything
		s.simple = false
		return s
	}
	s.types = schemaTypes(n)
	for _, alt := range []string{"anyOf", "oneOf"} {
		if al := n.Get(alt); al != nil && al.Kind == lenient.Array {
			s.alts = true
			for _, sub := range al.Kids {
				a := c.build(sub, depth+1)
				s.altSch = append(s.altSch, a)
				s.types = append(s.types, a.types...)
			}
		}
	}
	if pp := n.Get("patternProperties"); pp != nil && pp.Kind == lenient.Object {
		for i, k := range pp.Keys {
			if re, err := regexp.Compile(k); err == nil {
				s.patterns = append(s.patterns, patternSch{re, c.build(pp.Kids[i], depth+1)})
			}
		}
	}
	props := n.Get("properties")
	if len(s.types) == 0 && props != nil {
		s.types = []string{"object"}
	}
	if props != nil && props.Kind == lenient.Object {
		for i, k := range props.Keys {
			if lenient.Shadowed(props.Keys, i) {
				continue
			}
			sub := c.build(props.Kids[i], depth+1)
			s.props = append(s.props, k)
			s.sub = append(s.sub, sub)
			s.simple = s.simple && sub.simple
		}
	}
	if r := n.Get("required"); r != nil && r.Kind == lenient.Array {
		for _, e := range r.Kids {
			if e.Kind == lenient.String {
				s.required = append(s.required, e.Str)
			} else {
				s.simple = false
			}
		}
	}
	if e := n.Get("enum"); e != nil && e.Kind == lenient.Array {
		for _, v := range e.Kids {
			if v.Kind != lenient.String {
				s.enum, s.simple = nil, false
				break
			}
			s.enum = append(s.enum, v.Str)
		}
	}
	switch it := n.Get("items"); {
	case it == nil:
	case it.Kind == lenient.Object:
		s.items = c.build(it, depth+1)
		s.simple = s.simple && s.items.simple
	case it.Kind == lenient.Array:
		s.simple = false
		for _, k := range it.Kids {
			s.prefix = append(s.prefix, c.build(k, depth+1))
		}
	default:
		s.simple = false
	}
	if p := n.Get("prefixItems"); p != nil && p.Kind == lenient.Array {
		for _, k := range p.Kids {
			s.prefix = append(s.prefix, c.build(k, depth+1))
		}
	}
	addl := n.Get("additionalProperties")
	s.extraOK = len(s.props) == 0 || len(s.patterns) > 0
	switch {
	case addl == nil:
	case addl.Kind == lenient.Bool:
		s.extraOK = addl.Bool
	case addl.Kind == lenient.Object:
		s.addl = c.build(addl, depth+1)
		s.extraOK = true
		s.simple = false
	default:
		s.simple = false
	}
	s.nullOK = len(s.types) == 0 || s.alts
	for _, t := range s.types {
		if t == "null" {
			s.nullOK = true
		}
	}
	return s
}

// validSimple reports whether v certainly passes a simple schema; false
// means "ask the full validator", which also says why.
func validSimple(v *lenient.Node, s *sch, depth int) bool {
	if s == nil {
		return true
	}
	if !s.simple || depth > lenient.MaxDepth {
		return false
	}
	if len(s.types) > 0 && !matchesAny(v, s.types) {
		return false
	}
	if len(s.enum) > 0 {
		if v.Kind != lenient.String {
			return false
		}
		found := false
		for _, e := range s.enum {
			found = found || e == v.Text()
		}
		if !found {
			return false
		}
	}
	switch v.Kind {
	case lenient.Object:
		for _, r := range s.required {
			if v.Get(r) == nil {
				return false
			}
		}
		for i, k := range v.Keys {
			ps := s.prop(k)
			if ps == nil {
				if !s.extraOK {
					return false
				}
				continue
			}
			if !validSimple(v.Kids[i], ps, depth+1) {
				return false
			}
		}
	case lenient.Array:
		for _, k := range v.Kids {
			if !validSimple(k, s.items, depth+1) {
				return false
			}
		}
	}
	return true
}

// Note is one thing coercion did, or one problem a check found, with the
// JSON Pointer of the argument it concerns.
type Note struct {
	Issue   Issue
	Pointer string
	Message string
}

// coercer converts argument values to the types their schema asks for, and
// drops arguments the schema does not declare.
type coercer struct {
	text  bool // values were written as text
	notes []Note
}

func (c *coercer) note(k Issue, ptr, msg string) { c.notes = append(c.notes, Note{k, ptr, msg}) }

func ptrName(p string) string {
	if p == "" {
		return "arguments"
	}
	return p
}

func (c *coercer) coerce(v *lenient.Node, s *sch) *lenient.Node {
	v = c.coerceIn(v, s, "", 0)
	refreshClean(v, 0)
	return v
}

// refreshClean marks unclean every value with an unclean part: its source
// bytes no longer say what it holds.
func refreshClean(n *lenient.Node, depth int) bool {
	if n == nil || depth > lenient.MaxDepth+1 {
		return false
	}
	for _, k := range n.Kids {
		if !refreshClean(k, depth+1) {
			n.Clean = false
		}
	}
	return n.Clean
}

// textAsJSON reads text that is, whole, a JSON object or array, when there
// is no schema to go by.
func (c *coercer) textAsJSON(v *lenient.Node, ptr string) *lenient.Node {
	if n, _, ok := lenient.Unwrap(v.Text()); ok {
		c.note(Coerced, ptr, ptrName(ptr)+": text read as JSON "+n.Kind.String())
		return lenient.Detach(n)
	}
	return v
}

func (c *coercer) coerceIn(v *lenient.Node, s *sch, ptr string, depth int) *lenient.Node {
	if v == nil || depth > lenient.MaxDepth {
		return v
	}
	if s == nil {
		switch {
		case c.text && v.Kind == lenient.Object && depth == 0:
			for i, k := range v.Kids {
				v.Kids[i] = c.coerceIn(k, nil, ptr+"/"+escapePointer(v.Keys[i]), depth+1)
			}
		case c.text && v.Kind == lenient.String:
			return c.textAsJSON(v, ptr)
		}
		return v
	}
	if nv := c.textLiteral(v, s, ptr); nv != nil {
		return nv
	}
	if len(s.altSch) > 0 && v.Kind != lenient.Object && v.Kind != lenient.Array {
		if nv, ok := c.coerceAlternatives(v, s, ptr); ok {
			return nv
		}
	}
	if len(s.types) > 0 && !matchesAny(v, s.types) {
		if nv, how := convert(v, s.types); nv != nil {
			c.note(Coerced, ptr, ptrName(ptr)+": "+how)
			v = nv
		}
	} else if len(s.types) == 0 && c.text && v.Kind == lenient.String {
		v = c.textAsJSON(v, ptr)
	}
	if len(s.enum) > 0 && v.Kind == lenient.String {
		v = c.fixEnum(v, s.enum, ptr)
	}
	switch v.Kind {
	case lenient.Object:
		c.coerceObject(v, s, ptr, depth)
	case lenient.Array:
		for i, k := range v.Kids {
			is := s.items
			if i < len(s.prefix) {
				is = s.prefix[i]
			}
			if is != nil {
				v.Kids[i] = c.coerceIn(k, is, ptr+"/"+strconv.Itoa(i), depth+1)
			}
		}
	}
	return v
}

// textLiteral reads a value that came as text (an XML parameter, say) as
// the JSON literal it spells, 42, true or null, where the schema allows a
// string and that literal's type: llama.cpp, Ollama, vLLM and SGLang read
// <parameter=n>42</parameter> as 42 for ["string", "integer"], and null as
// null for anyOf [string, null]. It returns nil for any other value.
func (c *coercer) textLiteral(v *lenient.Node, s *sch, ptr string) *lenient.Node {
	if !c.text || v.Kind != lenient.String {
		return nil
	}
	t := v.Text()
	var kind string
	switch {
	case t == "null":
		kind = "null"
	case t == "true" || t == "false":
		kind = "boolean"
	case t != "" && (t[0] == '-' || t[0] >= '0' && t[0] <= '9') && json.Valid([]byte(t)):
		kind = "number"
	default:
		return nil
	}
	types := slices.Clone(s.types)
	for _, a := range s.altSch {
		types = append(types, a.types...)
	}
	if !slices.Contains(types, "string") {
		return nil // converted as any value is
	}
	var as []string
	for _, ty := range types {
		if ty == kind || kind == "number" && ty == "integer" {
			as = append(as, ty)
		}
	}
	nv, how := convert(v, as)
	if nv == nil {
		return nil
	}
	c.note(Coerced, ptr, ptrName(ptr)+": "+how)
	return nv
}

// coerceAlternatives fits a scalar to one of the shapes of an anyOf/oneOf:
// as it is, converted to a shape's type, or in the letter case of a shape's
// enum.
func (c *coercer) coerceAlternatives(v *lenient.Node, s *sch, ptr string) (*lenient.Node, bool) {
	for _, a := range s.altSch {
		if validSimple(v, a, 0) {
			return v, true
		}
	}
	for _, a := range s.altSch {
		if len(a.types) > 0 && !matchesAny(v, a.types) {
			if nv, how := convert(v, a.types); nv != nil && (len(a.enum) == 0 || nv.Kind == lenient.String && slices.Contains(a.enum, nv.Text())) {
				c.note(Coerced, ptr, ptrName(ptr)+": "+how)
				return nv, true
			}
			continue
		}
		if len(a.enum) > 0 && v.Kind == lenient.String && !slices.Contains(a.enum, v.Text()) {
			if nv := c.fixEnum(v, a.enum, ptr); nv != v {
				return nv, true
			}
		}
	}
	return v, false
}

func (c *coercer) coerceObject(v *lenient.Node, s *sch, ptr string, depth int) {
	for i := 0; i < len(v.Keys); i++ {
		k := v.Keys[i]
		kp := ptr + "/" + escapePointer(k)
		ps := s.prop(k)
		if ps == nil {
			for _, p := range s.patterns {
				if p.re.MatchString(k) {
					ps = p.sub
					break
				}
			}
		}
		if ps == nil && !s.extraOK {
			c.note(UnexpectedArgument, kp, "dropped unexpected argument "+kp+" (not in the schema)")
			v.Keys = append(v.Keys[:i], v.Keys[i+1:]...)
			v.Kids = append(v.Kids[:i], v.Kids[i+1:]...)
			v.Clean = false
			i--
			continue
		}
		if ps == nil {
			ps = s.addl
		}
		if ps == nil {
			continue
		}
		if c.text && v.Kids[i].Kind == lenient.String && !slices.Contains(ps.types, "string") && len(ps.types) > 0 {
			// XML text "null" (or "None") for a value that cannot be a string
			if t := strings.TrimSpace(v.Kids[i].Text()); t == "null" || t == "None" {
				v.Kids[i] = &lenient.Node{Kind: lenient.Null}
				v.Clean = false
			}
		}
		if v.Kids[i].Kind == lenient.Null && !s.isRequired(k) && !ps.nullOK {
			c.note(Coerced, kp, "dropped null for optional argument "+kp)
			v.Keys = append(v.Keys[:i], v.Keys[i+1:]...)
			v.Kids = append(v.Kids[:i], v.Kids[i+1:]...)
			v.Clean = false
			i--
			continue
		}
		v.Kids[i] = c.coerceIn(v.Kids[i], ps, kp, depth+1)
	}
}

func (c *coercer) fixEnum(v *lenient.Node, enum []string, ptr string) *lenient.Node {
	match := ""
	found := false
	text := v.Text()
	for _, opt := range enum {
		if opt == text {
			return v
		}
		if strings.EqualFold(strings.TrimSpace(opt), strings.TrimSpace(text)) {
			if found {
				return v
			}
			match, found = opt, true
		}
	}
	if !found {
		return v
	}
	c.note(Coerced, ptr, ptrName(ptr)+": "+strconv.Quote(text)+" read as "+strconv.Quote(match))
	return &lenient.Node{Kind: lenient.String, Str: match}
}
