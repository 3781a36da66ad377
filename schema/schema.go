package schema

import (
	"encoding/json"
	"fmt"
	"github.com/ptkit/ptk/lenient"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Normalize turns the JSON-Schema-like parameter definitions found in
// the wild into JSON Schema: the Berkeley Function Calling Leaderboard's
// "dict", "float", "tuple" and "any", Java and JavaScript type names
// ("String", "HashMap", "long"...), and the non-standard "optional" flag.
// Valid JSON Schema comes back unchanged.
func Normalize(raw json.RawMessage) (json.RawMessage, error) {
	n, err := normalizedSchema(raw)
	if err != nil || n == nil {
		return raw, err
	}
	if n.Clean {
		return raw, nil
	}
	return lenient.AppendJSON(nil, n, raw), nil
}

func normalizedSchema(raw json.RawMessage) (*lenient.Node, error) {
	if len(strings.TrimSpace(string(raw))) == 0 || strings.TrimSpace(string(raw)) == "null" {
		return nil, nil
	}
	n, _, err := lenient.Parse(raw)
	if err != nil {
		return nil, err
	}
	if n.Kind != lenient.Object {
		return nil, fmt.Errorf("parameters must be a JSON Schema object, not a %s", n.Kind)
	}
	normalizeSchemaNode(n, 0)
	return n, nil
}

var typeNames = map[string]string{
	"dict": "object", "hashmap": "object", "map": "object", "object": "object",
	"float": "number", "double": "number", "number": "number", "decimal": "number",
	"integer": "integer", "int": "integer", "long": "integer", "short": "integer", "byte": "integer",
	"string": "string", "str": "string", "char": "string", "character": "string", "text": "string",
	"boolean": "boolean", "bool": "boolean",
	"array": "array", "list": "array", "tuple": "array", "arraylist": "array", "set": "array",
	"null": "null",
}

// propertyFlags applies the flags properties carry themselves to the
// "required" list of the object n that holds them: "required": true (an old
// draft-3 habit) adds a property, "optional": true (BFCL's) removes it. The
// flags themselves are then dropped from the properties, so the checker and
// the prompt read one list.
func propertyFlags(n, props *lenient.Node) {
	var add, drop []string
	for i, p := range props.Kids {
		if lenient.Shadowed(props.Keys, i) {
			continue
		}
		if r := p.Get("required"); r != nil && r.Kind == lenient.Bool && r.Bool {
			add = append(add, props.Keys[i])
		}
		if truthy(p.Get("optional")) {
			drop = append(drop, props.Keys[i])
		}
	}
	if len(add) == 0 && len(drop) == 0 {
		return
	}
	var names []string
	if r := n.Get("required"); r != nil && r.Kind == lenient.Array {
		for _, e := range r.Kids {
			if e.Kind == lenient.String {
				names = append(names, e.Str)
			}
		}
	}
	for _, a := range add {
		if !slices.Contains(names, a) {
			names = append(names, a)
		}
	}
	names = slices.DeleteFunc(names, func(x string) bool { return slices.Contains(drop, x) })
	req := &lenient.Node{Kind: lenient.Array}
	for _, x := range names {
		req.Kids = append(req.Kids, &lenient.Node{Kind: lenient.String, Str: x})
	}
	n.Clean = false
	for i := len(n.Keys) - 1; i >= 0; i-- {
		if n.Keys[i] == "required" {
			n.Keys = append(n.Keys[:i], n.Keys[i+1:]...)
			n.Kids = append(n.Kids[:i], n.Kids[i+1:]...)
		}
	}
	if len(names) > 0 {
		n.Keys = append(n.Keys, "required")
		n.Kids = append(n.Kids, req)
	}
}

// truthy reports whether a flag is set: true, or a string such as "true",
// "yes" or "1".
func truthy(n *lenient.Node) bool {
	if n == nil {
		return false
	}
	switch n.Kind {
	case lenient.Bool:
		return n.Bool
	case lenient.String:
		switch strings.ToLower(n.Text()) {
		case "true", "yes", "1":
			return true
		}
	}
	return false
}

// canonicalType returns the JSON Schema type a type name stands for (any
// case, any alias in typeNames), or "" for a name it does not know. The
// checker and the prompt both go by it.
func canonicalType(name string) string { return typeNames[strings.ToLower(name)] }

// maxRefHops bounds a chain of references (a $ref to a $ref ...): a longer
// chain, or a cycle, cannot be followed.
const maxRefHops = 32

// deref follows the $ref chain of schema n inside root: it returns n when n
// has no $ref, the schema the chain ends at, or nil when a reference cannot
// be followed (not local, not found, a cycle, a chain over maxRefHops). It is
// the one resolver: the checker's compiler and the prompt's renderer both
// use it, so they always agree on what a reference means.
func deref(root, n *lenient.Node) *lenient.Node {
	for hops := 0; n != nil && n.Kind == lenient.Object; hops++ {
		ref := n.Get("$ref")
		if ref == nil || ref.Kind != lenient.String {
			return n
		}
		if hops == maxRefHops {
			return nil
		}
		n = lookup(root, ref.Str)
	}
	return n
}

// lookup resolves a local reference ("#", "#/$defs/Name", any JSON Pointer,
// array indices included) inside root, or returns nil.
func lookup(root *lenient.Node, ref string) *lenient.Node {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	n := root
	if ptr == "" {
		return n
	}
	if ptr[0] != '/' {
		return nil
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n.Kind {
		case lenient.Object:
			n = n.Get(tok)
		case lenient.Array:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.Kids) {
				return nil
			}
			n = n.Kids[i]
		default:
			n = nil
		}
		if n == nil {
			return nil
		}
	}
	return n
}

func normalizeSchemaNode(n *lenient.Node, depth int) {
	if n == nil || n.Kind != lenient.Object || depth > lenient.MaxDepth {
		return
	}
	for i := 0; i < len(n.Keys); i++ {
		k, v := n.Keys[i], n.Kids[i]
		switch k {
		case "type":
			switch v.Kind {
			case lenient.String:
				t := canonicalType(v.Str)
				ok := t != ""
				if !ok || v.Str == "" || strings.EqualFold(v.Str, "any") {
					// "any", "", or an unknown name: no constraint
					n.Keys = append(n.Keys[:i], n.Keys[i+1:]...)
					n.Kids = append(n.Kids[:i], n.Kids[i+1:]...)
					n.Clean = false
					i--
					continue
				}
				if t != v.Str {
					v.Str, v.Clean, n.Clean = t, false, false
				}
			case lenient.Array:
				for _, e := range v.Kids {
					if e.Kind == lenient.String {
						if t := canonicalType(e.Str); t != "" && t != e.Str {
							e.Str, e.Clean, v.Clean, n.Clean = t, false, false, false
						}
					}
				}
			}
		case "optional":
			// read by the object that holds this property (propertyFlags)
			n.Keys = append(n.Keys[:i], n.Keys[i+1:]...)
			n.Kids = append(n.Kids[:i], n.Kids[i+1:]...)
			n.Clean = false
			i--
			continue
		case "properties", "$defs", "definitions", "patternProperties":
			if v.Kind == lenient.Object {
				if k == "properties" {
					propertyFlags(n, v)
				}
				for _, p := range v.Kids {
					normalizeSchemaNode(p, depth+1)
					if !p.Clean {
						v.Clean, n.Clean = false, false
					}
				}
			}
		case "items", "additionalProperties", "not", "contains", "propertyNames", "additionalItems":
			normalizeSchemaNode(v, depth+1)
			if v.Kind == lenient.Array { // draft-4 tuple items
				for _, p := range v.Kids {
					normalizeSchemaNode(p, depth+1)
					if !p.Clean {
						v.Clean = false
					}
				}
			}
			if !v.Clean {
				n.Clean = false
			}
		case "anyOf", "oneOf", "allOf", "prefixItems":
			if v.Kind == lenient.Array {
				for _, p := range v.Kids {
					normalizeSchemaNode(p, depth+1)
					if !p.Clean {
						v.Clean, n.Clean = false, false
					}
				}
			}
		case "required":
			if v.Kind != lenient.Array {
				// "required": true on a property (an old draft-3 habit) was read
				// by the object that holds it (propertyFlags)
				n.Keys = append(n.Keys[:i], n.Keys[i+1:]...)
				n.Kids = append(n.Kids[:i], n.Kids[i+1:]...)
				n.Clean = false
				i--
				continue
			}
		}
	}
	if n.Get("type") == nil && n.Get("properties") != nil {
		n.Keys = append([]string{"type"}, n.Keys...)
		n.Kids = append([]*lenient.Node{{Kind: lenient.String, Str: "object"}}, n.Kids...)
		n.Clean = false
	}
}

var printer = message.NewPrinter(language.English)

// toAny turns a value into what the validator reads: maps, slices,
// json.Number (numbers exactly as written), strings, booleans and nil.
func toAny(n *lenient.Node, depth int) any {
	if depth > lenient.MaxDepth+1 {
		return nil
	}
	switch n.Kind {
	case lenient.Null:
		return nil
	case lenient.Bool:
		return n.Bool
	case lenient.Number:
		return json.Number(n.Str)
	case lenient.String:
		return n.Text()
	case lenient.Array:
		out := make([]any, len(n.Kids))
		for i, k := range n.Kids {
			out[i] = toAny(k, depth+1)
		}
		return out
	}
	out := make(map[string]any, len(n.Keys))
	for i, k := range n.Kids {
		out[n.Keys[i]] = toAny(k, depth+1)
	}
	return out
}

func QuoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, " or ")
}

func Dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func pointerOf(loc []string) string {
	var b strings.Builder
	for _, s := range loc {
		b.WriteByte('/')
		b.WriteString(escapePointer(s))
	}
	return b.String()
}

func leaves(err error) []*jsonschema.ValidationError {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return nil
	}
	var out []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError, depth int)
	walk = func(e *jsonschema.ValidationError, depth int) {
		if len(e.Causes) == 0 || depth > 32 {
			out = append(out, e)
			return
		}
		for _, c := range e.Causes {
			walk(c, depth+1)
		}
	}
	walk(ve, 0)
	// The validator visits an object's properties in map order: sort by
	// where each failure is (a stable sort: the failures of one place stay
	// in the order of the keywords), so that a call with several bad
	// arguments reads the same every time.
	slices.SortStableFunc(out, func(a, b *jsonschema.ValidationError) int {
		return slices.Compare(a.InstanceLocation, b.InstanceLocation)
	})
	return out
}

// describe turns one validation failure into a diagnostic kind, a JSON
// Pointer and a message a model can act on.
func describe(e *jsonschema.ValidationError) (Issue, string, string) {
	ptr := pointerOf(e.InstanceLocation)
	at := ptr
	if at == "" {
		at = "arguments"
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		if len(k.Missing) > 0 {
			p := ptr + "/" + escapePointer(k.Missing[0])
			names := QuoteList(k.Missing)
			if len(k.Missing) == 1 {
				return MissingArgument, p, "missing required argument " + names + " (at " + p + ")"
			}
			msg := "missing required arguments " + strings.ReplaceAll(names, " or ", ", ")
			if ptr != "" {
				msg += " (at " + ptr + ")"
			}
			return MissingArgument, p, msg
		}
	case *kind.Type:
		return WrongType, ptr, at + ": expected " + strings.Join(k.Want, " or ") + ", got " + k.Got
	case *kind.AdditionalProperties:
		return UnexpectedArgument, ptr, at + ": unexpected arguments " + QuoteList(k.Properties)
	case *kind.Enum:
		var vals []string
		for _, v := range k.Want {
			b, _ := json.Marshal(v)
			vals = append(vals, string(b))
		}
		got, _ := json.Marshal(k.Got)
		return InvalidArgument, ptr, at + ": " + lenient.Clip(string(got), 60) + " is not one of " + strings.Join(vals, ", ")
	case *kind.Minimum:
		return InvalidArgument, ptr, at + ": " + ratText(k.Got) + " is below the minimum " + ratText(k.Want)
	case *kind.Maximum:
		return InvalidArgument, ptr, at + ": " + ratText(k.Got) + " is above the maximum " + ratText(k.Want)
	case *kind.ExclusiveMinimum:
		return InvalidArgument, ptr, at + ": " + ratText(k.Got) + " must be greater than " + ratText(k.Want)
	case *kind.ExclusiveMaximum:
		return InvalidArgument, ptr, at + ": " + ratText(k.Got) + " must be less than " + ratText(k.Want)
	case *kind.MinLength:
		return InvalidArgument, ptr, at + ": " + strconv.Itoa(k.Got) + " characters, at least " + strconv.Itoa(k.Want) + " wanted"
	case *kind.MaxLength:
		return InvalidArgument, ptr, at + ": " + strconv.Itoa(k.Got) + " characters, at most " + strconv.Itoa(k.Want) + " allowed"
	case *kind.MinItems:
		return InvalidArgument, ptr, at + ": " + strconv.Itoa(k.Got) + " items, at least " + strconv.Itoa(k.Want) + " wanted"
	case *kind.MaxItems:
		return InvalidArgument, ptr, at + ": " + strconv.Itoa(k.Got) + " items, at most " + strconv.Itoa(k.Want) + " allowed"
	case *kind.Pattern:
		return InvalidArgument, ptr, at + ": " + strconv.Quote(lenient.Clip(k.Got, 60)) + " does not match the pattern " + k.Want
	}
	return InvalidArgument, ptr, at + ": " + e.ErrorKind.LocalizedString(printer)
}

// ratText writes a number from the validator plainly: 65535, 0.5.
func ratText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// ---- schema helpers ----

func schemaProps(s *lenient.Node) []string {
	if p := s.Get("properties"); p != nil && p.Kind == lenient.Object {
		return p.Keys
	}
	return nil
}

func schemaTypes(s *lenient.Node) []string {
	t := s.Get("type")
	if t == nil {
		return nil
	}
	if t.Kind == lenient.String {
		return []string{t.Str}
	}
	var out []string
	for _, e := range t.Kids {
		if e.Kind == lenient.String {
			out = append(out, e.Str)
		}
	}
	return out
}

// paramSummary lists a schema's parameters for an error message.
func paramSummary(s *sch) string {
	if s == nil || len(s.props) == 0 {
		return "none"
	}
	var parts []string
	for i, k := range s.props {
		sub := s.sub[i]
		var types []string
		for _, t := range sub.types {
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
		t := strings.Join(types, "|")
		if t == "" {
			t = "any"
		}
		if len(sub.enum) > 0 && len(sub.enum) <= 8 {
			t = QuoteList(sub.enum)
			t = strings.ReplaceAll(t, " or ", "|")
		}
		req := ""
		if s.isRequired(k) {
			req = ", required"
		}
		parts = append(parts, k+" ("+t+req+")")
		if i == 30 {
			parts = append(parts, "…")
			break
		}
	}
	return strings.Join(parts, ", ")
}

func matchesAny(v *lenient.Node, types []string) bool {
	for _, t := range types {
		if matches(v, t) {
			return true
		}
	}
	return false
}

func matches(v *lenient.Node, t string) bool {
	switch t {
	case "object":
		return v.Kind == lenient.Object
	case "array":
		return v.Kind == lenient.Array
	case "string":
		return v.Kind == lenient.String
	case "boolean":
		return v.Kind == lenient.Bool
	case "null":
		return v.Kind == lenient.Null
	case "number":
		return v.Kind == lenient.Number
	case "integer":
		return v.Kind == lenient.Number && lenient.IsIntegral(v.Str)
	}
	return true
}

// smallExp reports whether a number's exponent, if any, is below 30.
func smallExp(num string) bool {
	_, exp, ok := strings.Cut(strings.ToLower(num), "e")
	if !ok {
		return true
	}
	v, err := strconv.Atoi(exp)
	return err == nil && v < 30 && v > -30
}

// convert tries to turn v into one of types; it returns the new value and
// what was done, or nil.
func convert(v *lenient.Node, types []string) (*lenient.Node, string) {
	for _, t := range types {
		switch v.Kind {
		case lenient.String:
			s := strings.TrimSpace(v.Text())
			switch t {
			case "integer", "number":
				if num, ok, _ := lenient.ParseNumberWord(s); ok && (t == "number" || lenient.IsIntegral(num)) {
					if t == "integer" && !lenient.IsNumber(num) {
						continue
					}
					if t == "integer" && strings.ContainsAny(num, ".eE") {
						if len(num) > 32 || strings.ContainsAny(num, "eE") && !smallExp(num) {
							continue // 1e100000 stays text: no tool wants that integer
						}
						r, _ := new(big.Rat).SetString(num)
						num = r.Num().String()
					}
					return &lenient.Node{Kind: lenient.Number, Str: num}, strconv.Quote(lenient.Clip(v.Text(), 40)) + " read as " + t + " " + num
				}
			case "boolean":
				switch strings.ToLower(s) {
				case "true":
					return &lenient.Node{Kind: lenient.Bool, Bool: true}, strconv.Quote(v.Text()) + " read as boolean true"
				case "false":
					return &lenient.Node{Kind: lenient.Bool}, strconv.Quote(v.Text()) + " read as boolean false"
				}
			case "null":
				if s == "null" || s == "None" || s == "" {
					return &lenient.Node{Kind: lenient.Null}, strconv.Quote(v.Text()) + " read as null"
				}
			case "array", "object":
				if n := lenient.ParseLiteral(s); n != nil && (t == "array" && n.Kind == lenient.Array || t == "object" && n.Kind == lenient.Object) {
					return n, "text read as " + t
				}
				// elements: <unit>c</unit><range>...</range> for an object,
				// <item>a</item><item>b</item> for a list (MiniMax-M3)
				if n := xmlElements(s, t == "array"); n != nil {
					return n, "elements read as " + t
				}
				// JSON escaped as a string's content: [{\"id\": \"1\"}] (GLM-4.7)
				var u string
				if strings.Contains(s, `\"`) && json.Unmarshal([]byte(`"`+s+`"`), &u) == nil {
					if n := lenient.ParseLiteral(u); n != nil && (t == "array" && n.Kind == lenient.Array || t == "object" && n.Kind == lenient.Object) {
						return n, "escaped text read as " + t
					}
				}
			}
		case lenient.Number:
			if t == "string" {
				return &lenient.Node{Kind: lenient.String, Str: v.Str}, "number " + v.Str + " read as string"
			}
			if t == "integer" && lenient.IsIntegral(v.Str) && len(v.Str) <= 32 && smallExp(v.Str) {
				r, _ := new(big.Rat).SetString(v.Str)
				return &lenient.Node{Kind: lenient.Number, Str: r.Num().String()}, "number " + v.Str + " read as integer"
			}
		case lenient.Bool:
			if t == "string" {
				s := "false"
				if v.Bool {
					s = "true"
				}
				return &lenient.Node{Kind: lenient.String, Str: s}, "boolean read as string " + strconv.Quote(s)
			}
		case lenient.Array, lenient.Object:
			if t == "string" {
				// the value written where its text was asked for (a list for
				// a parameter that is "a JavaScript array in string
				// representation"): its JSON text keeps all of it
				text := string(lenient.AppendJSON(nil, v, nil))
				return &lenient.Node{Kind: lenient.String, Str: text}, v.Kind.String() + " read as its JSON text"
			}
		}
	}
	return nil, ""
}

// xmlElements reads text that is, whole, a run of XML elements,
// <a>x</a><b><c>y</c></b>, as an object of their contents as text (or, with
// list, an array of them), which the schema's types then convert: nil when
// the text is not such a run, or an object's keys repeat.
func xmlElements(s string, list bool) *lenient.Node {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "<") {
		return nil
	}
	n := &lenient.Node{Kind: lenient.Object}
	if list {
		n.Kind = lenient.Array
	}
	for s != "" {
		if s[0] != '<' {
			return nil
		}
		end := strings.IndexByte(s, '>')
		if end < 2 {
			return nil
		}
		name := s[1:end]
		if strings.ContainsAny(name, " /<\"=") {
			return nil
		}
		open, closer := s[:end+1], "</"+name+">"
		depth, i := 1, end+1
		for depth > 0 {
			o, c := strings.Index(s[i:], open), strings.Index(s[i:], closer)
			if c < 0 {
				return nil
			}
			if o >= 0 && o < c {
				depth, i = depth+1, i+o+len(open)
				continue
			}
			depth, i = depth-1, i+c+len(closer)
		}
		v := &lenient.Node{Kind: lenient.String, Str: strings.TrimSpace(s[end+1 : i-len(closer)])}
		if !list {
			if slices.Contains(n.Keys, name) {
				return nil
			}
			n.Keys = append(n.Keys, name)
		}
		n.Kids = append(n.Kids, v)
		s = strings.TrimSpace(s[i:])
	}
	return n
}
