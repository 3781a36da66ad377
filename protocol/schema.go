package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/ptkit/ptk/lenient"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/ptkit/ptk"
)

// toolSpec is a declared tool, ready to check calls against.
type toolSpec struct {
	info     ptk.ToolInfo
	schema   *lenient.Node // normalized schema, in source order; nil: no arguments
	compiled *jsonschema.Schema
	norm     string // name normalized for lenient matching
	sch      *sch   // schema compiled for coercion and quick checks
}

// NormalizeSchema turns the JSON-Schema-like parameter definitions found in
// the wild into JSON Schema: the Berkeley Function Calling Leaderboard's
// "dict", "float", "tuple" and "any", Java and JavaScript type names
// ("String", "HashMap", "long"...), and the non-standard "optional" flag.
// Valid JSON Schema comes back unchanged.
func NormalizeSchema(raw json.RawMessage) (json.RawMessage, error) {
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
				t, ok := typeNames[strings.ToLower(v.Str)]
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
						if t, ok := typeNames[strings.ToLower(e.Str)]; ok && t != e.Str {
							e.Str, e.Clean, v.Clean, n.Clean = t, false, false, false
						}
					}
				}
			}
		case "optional":
			if v.Kind == lenient.Bool {
				n.Keys = append(n.Keys[:i], n.Keys[i+1:]...)
				n.Kids = append(n.Kids[:i], n.Kids[i+1:]...)
				n.Clean = false
				i--
				continue
			}
		case "properties", "$defs", "definitions", "patternProperties":
			if v.Kind == lenient.Object {
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
				// "required": true on a property (an old draft-3 habit) means nothing here
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

// compiledTools caches compiled tools by name and parameters: compiling a
// schema costs far more than a model call's parsing, and programs (a
// gateway, an agent run after run) declare the same tools again and again.
// A toolSpec does not change once compiled, so parsers may share one.
var compiledTools struct {
	sync.Mutex
	m map[string]*toolSpec
}

// compiledToolsMax bounds the cache; when it is full it starts again.
const compiledToolsMax = 1024

func compileTool(t ptk.ToolInfo) (*toolSpec, error) {
	if t.Name == "" {
		return nil, &ToolError{Tool: t.Name, Msg: "has no name"}
	}
	key := t.Name + "\x00" + string(t.Parameters)
	compiledTools.Lock()
	cached := compiledTools.m[key]
	compiledTools.Unlock()
	if cached != nil {
		ts := *cached
		ts.info = t
		return &ts, nil
	}
	ts, err := compileToolUncached(t)
	if err == nil {
		compiledTools.Lock()
		if compiledTools.m == nil || len(compiledTools.m) >= compiledToolsMax {
			compiledTools.m = make(map[string]*toolSpec)
		}
		compiledTools.m[key] = ts
		compiledTools.Unlock()
	}
	return ts, err
}

func compileToolUncached(t ptk.ToolInfo) (*toolSpec, error) {
	ts := &toolSpec{info: t, norm: normName(t.Name)}
	n, err := normalizedSchema(t.Parameters)
	if err != nil {
		return nil, &ToolError{Tool: t.Name, Msg: "parameters: " + err.Error()}
	}
	if n == nil {
		return ts, nil
	}
	ts.schema = n
	ts.sch = compileSch(n)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(lenient.AppendJSON(nil, n, t.Parameters)))
	if err != nil {
		return nil, &ToolError{Tool: t.Name, Msg: "parameters: " + err.Error()}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "ptk:///parameters.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, &ToolError{Tool: t.Name, Msg: "parameters: " + err.Error()}
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, &ToolError{Tool: t.Name, Msg: "parameters are not a valid JSON Schema: " + err.Error()}
	}
	ts.compiled = s
	return ts, nil
}

// normName folds case and separators, so get_weather, getWeather,
// Get-Weather and math.factorial / math_factorial compare equal.
func normName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

var namespaces = []string{"functions.", "function.", "default_api.", "tools.", "tool.", "api.", "functions:", "tools:"}

// resolveExact finds a declared tool by its name, or its name behind a
// namespace a model added (functions.get_weather).
func (p *Parser) resolveExact(name string) *toolSpec {
	if t := p.byName[name]; t != nil {
		return t
	}
	for _, ns := range namespaces {
		if len(name) > len(ns) && strings.EqualFold(name[:len(ns)], ns) {
			if t := p.byName[name[len(ns):]]; t != nil {
				return t
			}
		}
	}
	if base, ok := strings.CutSuffix(name, ".call"); ok {
		return p.byName[base]
	}
	return nil
}

// resolve finds the declared tool a name means: exactly, behind a namespace,
// or as the one declared name equal to it but for case and separators.
func (p *Parser) resolve(name string) (t *toolSpec, corrected bool) {
	if t := p.resolveExact(name); t != nil {
		return t, t.info.Name != name
	}
	n := normName(name)
	var found *toolSpec
	for _, t := range p.tools {
		if t.norm == n {
			if found != nil {
				return nil, false
			}
			found = t
		}
	}
	return found, found != nil
}

// suggest returns declared names close to name, best first.
func (p *Parser) suggest(name string) []string {
	type cand struct {
		name string
		d    int
	}
	n := normName(name)
	if len(n) > 100 {
		n = n[:100]
	}
	var cs []cand
	for _, t := range p.tools {
		tn := t.norm
		if len(tn) > 100 {
			tn = tn[:100]
		}
		d := levenshtein(n, tn)
		limit := max(2, len(tn)/3)
		if d <= limit || len(n) >= 3 && (strings.Contains(tn, n) || strings.Contains(n, tn)) {
			cs = append(cs, cand{t.info.Name, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	out := make([]string, 0, 3)
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (p *Parser) toolNames() string {
	var b strings.Builder
	for i, t := range p.tools {
		if i == 20 {
			fmt.Fprintf(&b, ", and %d more", len(p.tools)-20)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.info.Name)
	}
	return b.String()
}

// finish checks a raw call against the declared tools and makes it an Attempt.
func (p *Parser) finish(rc rawCall, id string) (a Attempt, diags []Diagnostic) {
	a = Attempt{Call: ptk.Call{ID: id, Tool: rc.name, Reasoning: rc.reasoning}, Offset: rc.offset}
	d := func(k DiagKind, ptr, msg string) {
		diags = append(diags, Diagnostic{Kind: k, Message: msg, Offset: rc.offset, CallID: id, Tool: a.Call.Tool, Pointer: ptr})
	}
	repairs := append([]string(nil), rc.repairs...)
	defer func() {
		a.Call.Repairs = repairs
		if a.Call.Args == nil {
			a.Call.Args = json.RawMessage("{}")
		}
	}()
	if rc.err != "" {
		a.Err = ptk.NewError(ptk.ParseError, rc.errMsg, nil)
		a.Err.Tool = rc.name
		d(rc.err, "", rc.errMsg)
		if rc.args != nil {
			a.Call.Args = lenient.AppendJSON(nil, rc.args, rc.src)
		}
		return a, diags
	}
	for _, r := range rc.repairs {
		d(DiagRepaired, "", r)
	}

	var spec *toolSpec
	if len(p.tools) > 0 {
		t, corrected := p.resolve(rc.name)
		if t == nil {
			msg := "unknown tool " + strconv.Quote(rc.name)
			if s := p.suggest(rc.name); len(s) > 0 {
				msg += "; did you mean " + quoteList(s) + "?"
			} else {
				msg += "."
			}
			msg += " Available tools: " + p.toolNames() + "."
			a.Err = ptk.NewError(ptk.ToolNotFound, msg, nil)
			a.Err.Tool = rc.name
			d(DiagUnknownTool, "", msg)
			if rc.args != nil {
				a.Call.Args = lenient.AppendJSON(nil, rc.args, rc.src)
			}
			return a, diags
		}
		if corrected {
			msg := "tool name " + strconv.Quote(rc.name) + " read as " + strconv.Quote(t.info.Name)
			repairs = append(repairs, msg)
			d(DiagNameCorrected, "", msg)
			a.Call.Tool = t.info.Name
		}
		spec = t
	}

	args := rc.args
	src := rc.src
	var schema *lenient.Node
	if spec != nil {
		schema = spec.schema
	}
	switch {
	case args == nil && len(rc.positional) == 0:
		args = &lenient.Node{Kind: lenient.Object}
	case args == nil || len(rc.positional) > 0:
		if args == nil {
			args = &lenient.Node{Kind: lenient.Object}
		}
		if len(rc.positional) == 1 && len(args.Kids) == 0 && rc.positional[0].Kind == lenient.Object {
			args = rc.positional[0]
			break
		}
		props := schemaProps(schema)
		if len(rc.positional) > len(props) {
			msg := "positional arguments need parameter names: write name(param=value, ...)"
			a.Err = ptk.NewError(ptk.InvalidToolCall, msg, nil)
			a.Err.Tool = a.Call.Tool
			d(DiagInvalidArgument, "", msg)
			a.Call.Args = lenient.AppendJSON(nil, args, nil)
			return a, diags
		}
		merged := &lenient.Node{Kind: lenient.Object}
		for i, v := range rc.positional {
			merged.Keys = append(merged.Keys, props[i])
			merged.Kids = append(merged.Kids, v)
		}
		merged.Keys = append(merged.Keys, args.Keys...)
		merged.Kids = append(merged.Kids, args.Kids...)
		args = merged
		repairs = append(repairs, "positional arguments matched to parameters in schema order")
	}
	if args.Kind == lenient.String {
		if n, s, ok := unwrapArgs(args.Str); ok && n.Kind == lenient.Object {
			args, src = n, s
			repairs = append(repairs, "arguments given as a JSON string were decoded")
		}
	}
	if args.Kind == lenient.Array && len(args.Kids) == 0 {
		args = &lenient.Node{Kind: lenient.Object}
	}
	if args.Kind == lenient.Null {
		args = &lenient.Node{Kind: lenient.Object}
		repairs = append(repairs, "null arguments read as {}")
	}

	c := coercer{text: rc.textArgs}
	switch {
	case spec != nil && spec.sch != nil:
		args = c.coerce(args, spec.sch)
	case rc.textArgs:
		args = c.coerce(args, nil)
	}
	for _, r := range c.notes {
		repairs = append(repairs, r.msg)
		d(r.kind, r.ptr, r.msg)
	}
	a.Call.Args = lenient.AppendJSON(nil, args, src)

	if spec != nil && spec.compiled != nil && !validSimple(args, spec.sch, 0) {
		{
			v := toAny(args, 0)
			if err := spec.compiled.Validate(v); err != nil {
				var problems []string
				for _, leaf := range leaves(err) {
					k, ptr, msg := describe(leaf)
					d(k, ptr, msg)
					problems = append(problems, msg)
				}
				msg := "invalid arguments for " + spec.info.Name + ": " + strings.Join(dedupe(problems), "; ") +
					". Parameters: " + paramSummary(spec.sch) + "."
				a.Err = ptk.NewError(ptk.InvalidToolCall, msg, nil)
				a.Err.Tool = spec.info.Name
			}
		}
	}
	return a, diags
}

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
		return n.Str
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

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, " or ")
}

func dedupe(s []string) []string {
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
	return out
}

// describe turns one validation failure into a diagnostic kind, a JSON
// Pointer and a message a model can act on.
func describe(e *jsonschema.ValidationError) (DiagKind, string, string) {
	ptr := pointerOf(e.InstanceLocation)
	at := ptr
	if at == "" {
		at = "arguments"
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		if len(k.Missing) > 0 {
			p := ptr + "/" + escapePointer(k.Missing[0])
			names := quoteList(k.Missing)
			if len(k.Missing) == 1 {
				return DiagMissingArgument, p, "missing required argument " + names + " (at " + p + ")"
			}
			return DiagMissingArgument, p, "missing required arguments " + strings.ReplaceAll(names, " or ", ", ") + " (at " + ptr + ")"
		}
	case *kind.Type:
		return DiagWrongType, ptr, at + ": expected " + strings.Join(k.Want, " or ") + ", got " + k.Got
	case *kind.AdditionalProperties:
		return DiagUnexpectedArgument, ptr, at + ": unexpected arguments " + quoteList(k.Properties)
	case *kind.Enum:
		var vals []string
		for _, v := range k.Want {
			b, _ := json.Marshal(v)
			vals = append(vals, string(b))
		}
		got, _ := json.Marshal(k.Got)
		return DiagInvalidArgument, ptr, at + ": " + lenient.Clip(string(got), 60) + " is not one of " + strings.Join(vals, ", ")
	case *kind.Minimum:
		return DiagInvalidArgument, ptr, at + ": " + ratText(k.Got) + " is below the minimum " + ratText(k.Want)
	case *kind.Maximum:
		return DiagInvalidArgument, ptr, at + ": " + ratText(k.Got) + " is above the maximum " + ratText(k.Want)
	case *kind.ExclusiveMinimum:
		return DiagInvalidArgument, ptr, at + ": " + ratText(k.Got) + " must be greater than " + ratText(k.Want)
	case *kind.ExclusiveMaximum:
		return DiagInvalidArgument, ptr, at + ": " + ratText(k.Got) + " must be less than " + ratText(k.Want)
	case *kind.MinLength:
		return DiagInvalidArgument, ptr, at + ": " + strconv.Itoa(k.Got) + " characters, at least " + strconv.Itoa(k.Want) + " wanted"
	case *kind.MaxLength:
		return DiagInvalidArgument, ptr, at + ": " + strconv.Itoa(k.Got) + " characters, at most " + strconv.Itoa(k.Want) + " allowed"
	case *kind.MinItems:
		return DiagInvalidArgument, ptr, at + ": " + strconv.Itoa(k.Got) + " items, at least " + strconv.Itoa(k.Want) + " wanted"
	case *kind.MaxItems:
		return DiagInvalidArgument, ptr, at + ": " + strconv.Itoa(k.Got) + " items, at most " + strconv.Itoa(k.Want) + " allowed"
	case *kind.Pattern:
		return DiagInvalidArgument, ptr, at + ": " + strconv.Quote(lenient.Clip(k.Got, 60)) + " does not match the pattern " + k.Want
	}
	return DiagInvalidArgument, ptr, at + ": " + e.ErrorKind.LocalizedString(printer)
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
			t = quoteList(sub.enum)
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
			s := strings.TrimSpace(v.Str)
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
					return &lenient.Node{Kind: lenient.Number, Str: num}, strconv.Quote(lenient.Clip(v.Str, 40)) + " read as " + t + " " + num
				}
			case "boolean":
				switch strings.ToLower(s) {
				case "true":
					return &lenient.Node{Kind: lenient.Bool, Bool: true}, strconv.Quote(v.Str) + " read as boolean true"
				case "false":
					return &lenient.Node{Kind: lenient.Bool}, strconv.Quote(v.Str) + " read as boolean false"
				}
			case "null":
				if s == "null" || s == "None" || s == "" {
					return &lenient.Node{Kind: lenient.Null}, strconv.Quote(v.Str) + " read as null"
				}
			case "array", "object":
				if n := lenient.ParseLiteral(s); n != nil && (t == "array" && n.Kind == lenient.Array || t == "object" && n.Kind == lenient.Object) {
					return n, "text read as " + t
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
		}
	}
	return nil, ""
}
