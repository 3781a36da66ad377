package protocol

import (
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
	root *jnode
	memo map[*jnode]*sch
	n    int
}

func compileSch(root *jnode) *sch {
	if root == nil {
		return nil
	}
	c := &schCompiler{root: root, memo: map[*jnode]*sch{}}
	return c.build(root, 0)
}

// deref follows a local $ref ("#/$defs/x", "#/definitions/x").
func (c *schCompiler) deref(n *jnode) *jnode {
	for hops := 0; n != nil && hops < 32; hops++ {
		r := n.get("$ref")
		if r == nil || r.kind != jString || !strings.HasPrefix(r.s, "#") {
			return n
		}
		cur := c.root
		if r.s != "#" {
			for _, part := range strings.Split(strings.TrimPrefix(r.s, "#/"), "/") {
				part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
				if cur = cur.get(part); cur == nil {
					return n
				}
			}
		}
		n = cur
	}
	return n
}

func (c *schCompiler) build(n *jnode, depth int) *sch {
	if n == nil || n.kind != jObject || depth > maxDepth || c.n > 10000 {
		return &sch{extraOK: true, nullOK: true}
	}
	if s := c.memo[n]; s != nil {
		return s
	}
	s := &sch{simple: true}
	c.memo[n] = s
	c.n++
	for _, k := range n.keys {
		if assertions[k] {
			s.simple = false
		}
	}
	t := c.deref(n)
	if t != n {
		s.simple = false
		*s = *c.build(t, depth+1)
		s.simple = false
		return s
	}
	s.types = schemaTypes(n)
	for _, alt := range []string{"anyOf", "oneOf"} {
		if al := n.get(alt); al != nil && al.kind == jArray {
			s.alts = true
			for _, sub := range al.kids {
				a := c.build(sub, depth+1)
				s.altSch = append(s.altSch, a)
				s.types = append(s.types, a.types...)
			}
		}
	}
	if pp := n.get("patternProperties"); pp != nil && pp.kind == jObject {
		for i, k := range pp.keys {
			if re, err := regexp.Compile(k); err == nil {
				s.patterns = append(s.patterns, patternSch{re, c.build(pp.kids[i], depth+1)})
			}
		}
	}
	props := n.get("properties")
	if len(s.types) == 0 && props != nil {
		s.types = []string{"object"}
	}
	if props != nil && props.kind == jObject {
		for i, k := range props.keys {
			if shadowed(props.keys, i) {
				continue
			}
			sub := c.build(props.kids[i], depth+1)
			s.props = append(s.props, k)
			s.sub = append(s.sub, sub)
			s.simple = s.simple && sub.simple
		}
	}
	if r := n.get("required"); r != nil && r.kind == jArray {
		for _, e := range r.kids {
			if e.kind == jString {
				s.required = append(s.required, e.s)
			} else {
				s.simple = false
			}
		}
	}
	if e := n.get("enum"); e != nil && e.kind == jArray {
		for _, v := range e.kids {
			if v.kind != jString {
				s.enum, s.simple = nil, false
				break
			}
			s.enum = append(s.enum, v.s)
		}
	}
	switch it := n.get("items"); {
	case it == nil:
	case it.kind == jObject:
		s.items = c.build(it, depth+1)
		s.simple = s.simple && s.items.simple
	case it.kind == jArray:
		s.simple = false
		for _, k := range it.kids {
			s.prefix = append(s.prefix, c.build(k, depth+1))
		}
	default:
		s.simple = false
	}
	if p := n.get("prefixItems"); p != nil && p.kind == jArray {
		for _, k := range p.kids {
			s.prefix = append(s.prefix, c.build(k, depth+1))
		}
	}
	addl := n.get("additionalProperties")
	s.extraOK = len(s.props) == 0 || len(s.patterns) > 0
	switch {
	case addl == nil:
	case addl.kind == jBool:
		s.extraOK = addl.b
	case addl.kind == jObject:
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
func validSimple(v *jnode, s *sch, depth int) bool {
	if s == nil {
		return true
	}
	if !s.simple || depth > maxDepth {
		return false
	}
	if len(s.types) > 0 && !matchesAny(v, s.types) {
		return false
	}
	if len(s.enum) > 0 {
		if v.kind != jString {
			return false
		}
		found := false
		for _, e := range s.enum {
			found = found || e == v.s
		}
		if !found {
			return false
		}
	}
	switch v.kind {
	case jObject:
		for _, r := range s.required {
			if v.get(r) == nil {
				return false
			}
		}
		for i, k := range v.keys {
			ps := s.prop(k)
			if ps == nil {
				if !s.extraOK {
					return false
				}
				continue
			}
			if !validSimple(v.kids[i], ps, depth+1) {
				return false
			}
		}
	case jArray:
		for _, k := range v.kids {
			if !validSimple(k, s.items, depth+1) {
				return false
			}
		}
	}
	return true
}

type note struct {
	kind DiagKind
	ptr  string
	msg  string
}

// coercer converts argument values to the types their schema asks for, and
// drops arguments the schema does not declare.
type coercer struct {
	text  bool // values were written as text
	notes []note
}

func (c *coercer) note(k DiagKind, ptr, msg string) { c.notes = append(c.notes, note{k, ptr, msg}) }

func ptrName(p string) string {
	if p == "" {
		return "arguments"
	}
	return p
}

func (c *coercer) coerce(v *jnode, s *sch) *jnode {
	v = c.coerceIn(v, s, "", 0)
	refreshClean(v, 0)
	return v
}

// refreshClean marks unclean every value with an unclean part: its source
// bytes no longer say what it holds.
func refreshClean(n *jnode, depth int) bool {
	if n == nil || depth > maxDepth+1 {
		return false
	}
	for _, k := range n.kids {
		if !refreshClean(k, depth+1) {
			n.clean = false
		}
	}
	return n.clean
}

// textAsJSON reads text that is, whole, a JSON object or array, when there
// is no schema to go by.
func (c *coercer) textAsJSON(v *jnode, ptr string) *jnode {
	if n, _, ok := unwrapArgs(v.s); ok {
		c.note(DiagCoerced, ptr, ptrName(ptr)+": text read as JSON "+n.kind.String())
		return detach(n)
	}
	return v
}

func (c *coercer) coerceIn(v *jnode, s *sch, ptr string, depth int) *jnode {
	if v == nil || depth > maxDepth {
		return v
	}
	if s == nil {
		switch {
		case c.text && v.kind == jObject && depth == 0:
			for i, k := range v.kids {
				v.kids[i] = c.coerceIn(k, nil, ptr+"/"+escapePointer(v.keys[i]), depth+1)
			}
		case c.text && v.kind == jString:
			return c.textAsJSON(v, ptr)
		}
		return v
	}
	if len(s.altSch) > 0 && v.kind != jObject && v.kind != jArray {
		if nv, ok := c.coerceAlternatives(v, s, ptr); ok {
			return nv
		}
	}
	if len(s.types) > 0 && !matchesAny(v, s.types) {
		if nv, how := convert(v, s.types); nv != nil {
			c.note(DiagCoerced, ptr, ptrName(ptr)+": "+how)
			v = nv
		}
	} else if len(s.types) == 0 && c.text && v.kind == jString {
		v = c.textAsJSON(v, ptr)
	}
	if len(s.enum) > 0 && v.kind == jString {
		v = c.fixEnum(v, s.enum, ptr)
	}
	switch v.kind {
	case jObject:
		c.coerceObject(v, s, ptr, depth)
	case jArray:
		for i, k := range v.kids {
			is := s.items
			if i < len(s.prefix) {
				is = s.prefix[i]
			}
			if is != nil {
				v.kids[i] = c.coerceIn(k, is, ptr+"/"+strconv.Itoa(i), depth+1)
			}
		}
	}
	return v
}

// coerceAlternatives fits a scalar to one of the shapes of an anyOf/oneOf:
// as it is, converted to a shape's type, or in the letter case of a shape's
// enum.
func (c *coercer) coerceAlternatives(v *jnode, s *sch, ptr string) (*jnode, bool) {
	for _, a := range s.altSch {
		if validSimple(v, a, 0) {
			return v, true
		}
	}
	for _, a := range s.altSch {
		if len(a.types) > 0 && !matchesAny(v, a.types) {
			if nv, how := convert(v, a.types); nv != nil && (len(a.enum) == 0 || nv.kind == jString && slices.Contains(a.enum, nv.s)) {
				c.note(DiagCoerced, ptr, ptrName(ptr)+": "+how)
				return nv, true
			}
			continue
		}
		if len(a.enum) > 0 && v.kind == jString && !slices.Contains(a.enum, v.s) {
			if nv := c.fixEnum(v, a.enum, ptr); nv != v {
				return nv, true
			}
		}
	}
	return v, false
}

func (c *coercer) coerceObject(v *jnode, s *sch, ptr string, depth int) {
	for i := 0; i < len(v.keys); i++ {
		k := v.keys[i]
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
			c.note(DiagUnexpectedArgument, kp, "dropped unexpected argument "+kp+" (not in the schema)")
			v.keys = append(v.keys[:i], v.keys[i+1:]...)
			v.kids = append(v.kids[:i], v.kids[i+1:]...)
			v.clean = false
			i--
			continue
		}
		if ps == nil {
			ps = s.addl
		}
		if ps == nil {
			continue
		}
		if c.text && v.kids[i].kind == jString && !slices.Contains(ps.types, "string") && len(ps.types) > 0 {
			// XML text "null" (or "None") for a value that cannot be a string
			if t := strings.TrimSpace(v.kids[i].s); t == "null" || t == "None" {
				v.kids[i] = &jnode{kind: jNull}
				v.clean = false
			}
		}
		if v.kids[i].kind == jNull && !s.isRequired(k) && !ps.nullOK {
			c.note(DiagCoerced, kp, "dropped null for optional argument "+kp)
			v.keys = append(v.keys[:i], v.keys[i+1:]...)
			v.kids = append(v.kids[:i], v.kids[i+1:]...)
			v.clean = false
			i--
			continue
		}
		v.kids[i] = c.coerceIn(v.kids[i], ps, kp, depth+1)
	}
}

func (c *coercer) fixEnum(v *jnode, enum []string, ptr string) *jnode {
	match := ""
	found := false
	for _, opt := range enum {
		if opt == v.s {
			return v
		}
		if strings.EqualFold(strings.TrimSpace(opt), strings.TrimSpace(v.s)) {
			if found {
				return v
			}
			match, found = opt, true
		}
	}
	if !found {
		return v
	}
	c.note(DiagCoerced, ptr, ptrName(ptr)+": "+strconv.Quote(v.s)+" read as "+strconv.Quote(match))
	return &jnode{kind: jString, s: match}
}
