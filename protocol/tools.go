package protocol

import (
	"encoding/json"
	"fmt"
	"github.com/ptkit/ptk/dialect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/lenient"
	"github.com/ptkit/ptk/schema"
)

// toolSpec is a declared tool, ready to check calls against.
type toolSpec struct {
	info   ptk.ToolInfo
	schema *schema.Schema // nil: no arguments
	norm   string         // name normalized for lenient matching
}

// compileTool readies a tool for the parser; its schema is compiled once
// (schema.Compile keeps what it compiled).
func compileTool(t ptk.ToolInfo) (*toolSpec, error) {
	if t.Name == "" {
		return nil, &ToolError{Tool: t.Name, Msg: "has no name"}
	}
	s, err := schema.Compile(t.Parameters)
	if err != nil {
		return nil, &ToolError{Tool: t.Name, Msg: err.Error()}
	}
	return &toolSpec{info: t, schema: s, norm: declaredNorm(t.Name)}, nil
}

// normNames keeps the normalized names of the declared tools seen (at most
// maxNormNames: declarations come from clients too), so that a parser made
// for every request (the gateway) does not normalize the same names again.
var (
	normNames     sync.Map // string → string
	normNamesSize atomic.Int64
)

const maxNormNames = 4096

// declaredNorm is normName for a declared tool's name.
func declaredNorm(s string) string {
	if n, ok := normNames.Load(s); ok {
		return n.(string)
	}
	n := normName(s)
	if normNamesSize.Load() < maxNormNames {
		if _, loaded := normNames.LoadOrStore(s, n); !loaded {
			normNamesSize.Add(1)
		}
	}
	return n
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
func (p *Parser) finish(rc dialect.RawCall, id string) (a Attempt, diags []Diagnostic) {
	a = Attempt{Call: ptk.Call{ID: id, Tool: rc.Name, Reasoning: rc.Reasoning}, Offset: rc.Offset}
	d := func(k DiagKind, ptr, msg string) {
		diags = append(diags, Diagnostic{Kind: k, Message: msg, Offset: rc.Offset, CallID: id, Tool: a.Call.Tool, Pointer: ptr})
	}
	repairs := append([]string(nil), rc.Repairs...)
	defer func() {
		a.Call.Repairs = repairs
		if a.Call.Args == nil {
			a.Call.Args = json.RawMessage("{}")
		}
	}()
	if rc.Err != "" {
		a.Err = ptk.NewError(ptk.ParseError, rc.ErrMsg, nil)
		a.Err.Tool = rc.Name
		d(rc.Err, "", rc.ErrMsg)
		if rc.Args != nil {
			a.Call.Args = lenient.AppendJSON(nil, rc.Args, rc.Src)
		}
		return a, diags
	}
	for _, r := range rc.Repairs {
		d(DiagRepaired, "", r)
	}

	var spec *toolSpec
	if len(p.tools) > 0 {
		t, corrected := p.resolve(rc.Name)
		if t == nil {
			msg := "unknown tool " + strconv.Quote(rc.Name)
			if s := p.suggest(rc.Name); len(s) > 0 {
				msg += "; did you mean " + schema.QuoteList(s) + "?"
			} else {
				msg += "."
			}
			msg += " Available tools: " + p.toolNames() + "."
			a.Err = ptk.NewError(ptk.ToolNotFound, msg, nil)
			a.Err.Tool = rc.Name
			d(DiagUnknownTool, "", msg)
			if rc.Args != nil {
				a.Call.Args = lenient.AppendJSON(nil, rc.Args, rc.Src)
			}
			return a, diags
		}
		if corrected {
			msg := "tool name " + strconv.Quote(rc.Name) + " read as " + strconv.Quote(t.info.Name)
			repairs = append(repairs, msg)
			d(DiagNameCorrected, "", msg)
			a.Call.Tool = t.info.Name
		}
		spec = t
	}

	args := rc.Args
	src := rc.Src
	var sc *schema.Schema
	if spec != nil {
		sc = spec.schema
	}
	switch {
	case args == nil && len(rc.Positional) == 0:
		args = &lenient.Node{Kind: lenient.Object}
	case args == nil || len(rc.Positional) > 0:
		if args == nil {
			args = &lenient.Node{Kind: lenient.Object}
		}
		if len(rc.Positional) == 1 && len(args.Kids) == 0 && rc.Positional[0].Kind == lenient.Object {
			args = rc.Positional[0]
			break
		}
		props := sc.Params()
		if len(rc.Positional) > len(props) {
			msg := "positional arguments need parameter names: write name(param=value, ...)"
			a.Err = ptk.NewError(ptk.InvalidToolCall, msg, nil)
			a.Err.Tool = a.Call.Tool
			d(DiagInvalidArgument, "", msg)
			a.Call.Args = lenient.AppendJSON(nil, args, nil)
			return a, diags
		}
		merged := &lenient.Node{Kind: lenient.Object}
		for i, v := range rc.Positional {
			merged.Keys = append(merged.Keys, props[i])
			merged.Kids = append(merged.Kids, v)
		}
		merged.Keys = append(merged.Keys, args.Keys...)
		merged.Kids = append(merged.Kids, args.Kids...)
		args = merged
		repairs = append(repairs, "positional arguments matched to parameters in schema order")
	}
	if args.Kind == lenient.String {
		if n, s, ok := lenient.Unwrap(args.Text()); ok && n.Kind == lenient.Object {
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

	args, notes := sc.Coerce(args, rc.TextArgs)
	for _, n := range notes {
		repairs = append(repairs, n.Message)
		d(DiagKind(n.Issue), n.Pointer, n.Message)
	}
	if args.Clean && stableArgs(rc.Stable && len(src) > 0 && &src[0] == &rc.Src[0], src, args.Start, args.End) {
		a.Call.Args = src[args.Start:args.End:args.End] // the stream's bytes, not copied
	} else {
		a.Call.Args = lenient.AppendJSON(nil, args, src)
	}

	if len(rc.Nested) > 0 {
		// f(x=g(y=1)): x would be g's text, not its result
		inner := lenient.Clip(rc.Nested[0], 200)
		msg := "an argument of " + a.Call.Tool + " is a call, " + inner + ": ptk runs no call written inside another's arguments. Call " +
			firstName(rc.Nested[0]) + " first, then " + a.Call.Tool + " with its result."
		d(DiagNestedCall, "", msg)
		a.Err = ptk.NewError(ptk.InvalidToolCall, msg, nil)
		a.Err.Tool = a.Call.Tool
		return a, diags
	}
	if problems := sc.Check(args); len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, pr := range problems {
			d(DiagKind(pr.Issue), pr.Pointer, pr.Message)
			msgs[i] = pr.Message
		}
		msg := "invalid arguments for " + spec.info.Name + ": " + strings.Join(schema.Dedupe(msgs), "; ") +
			". Parameters: " + sc.Summary() + "."
		a.Err = ptk.NewError(ptk.InvalidToolCall, msg, nil)
		a.Err.Tool = spec.info.Name
	} else {
		sc.Passed(a.Call.Args) // the tool need not validate these bytes again
	}
	return a, diags
}

// stableArgs reports whether a call's arguments, the bytes src[start:end],
// may be a slice of src rather than a copy: src is a stream's buffer
// (dialect.RawCall.Stable) and they are most of it, so that the slice keeps
// little more alive than the arguments themselves (at most a third more). A
// long argument streamed whole, a file's content, is then not copied again.
func stableArgs(stable bool, src []byte, start, end int) bool {
	return stable && 0 <= start && start <= end && end <= len(src) && 4*(end-start) >= 3*cap(src)
}

// NormalizeSchema turns the JSON-Schema-like parameter definitions found in
// the wild into JSON Schema; see [schema.Normalize].
func NormalizeSchema(raw json.RawMessage) (json.RawMessage, error) { return schema.Normalize(raw) }

// firstName is the name of the call written in s, name(...).
func firstName(s string) string {
	if i := strings.IndexByte(s, '('); i > 0 {
		return s[:i]
	}
	return s
}
