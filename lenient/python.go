package lenient

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads the pythonic call format, [f(a=1), pkg.g(b='x')], that
// Llama 3.2+, BFCL's prompting mode and others use: a bracket-matching
// scanner finds where a call list ends (incrementally), and a small
// recursive-descent reader turns Python literals into JSON values.

// PyScan finds the end of a bracketed Python expression incrementally:
// strings (single, double, triple-quoted) are skipped, brackets must match.
type PyScan struct {
	Pos    int
	stack  []byte // expected closers
	inStr  bool
	quote  byte
	triple bool
	End    int
	// FailPos and failMsg say where and why the brackets did not match.
	FailPos int
	FailMsg string
}

func NewPyScan(open int) *PyScan { return &PyScan{Pos: open} }

func closerOf(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	}
	return '}'
}

func (s *PyScan) Feed(buf []byte, eof bool) Status {
	i := s.Pos
	for i < len(buf) {
		c := buf[i]
		if s.inStr {
			switch {
			case c == '\\':
				if i+1 >= len(buf) {
					s.Pos = i
					if eof {
						return s.fail(i, "the input ends inside a string")
					}
					return Need
				}
				i += 2
				continue
			case c == s.quote:
				if !s.triple {
					if c == '\'' && i > 0 && isLetter(buf[i-1]) {
						if i+1 >= len(buf) && !eof {
							s.Pos = i
							return Need
						}
						if i+1 < len(buf) && isLetter(buf[i+1]) {
							i++ // an apostrophe: 'It's fresh'
							continue
						}
					}
					s.inStr = false
					i++
					continue
				}
				if i+2 >= len(buf) {
					if !eof {
						s.Pos = i
						return Need
					}
					i++
					continue
				}
				if buf[i+1] == c && buf[i+2] == c {
					s.inStr = false
					i += 3
					continue
				}
			case c == '\n' && !s.triple:
				return s.fail(i, "line break inside a string")
			}
			i++
			continue
		}
		switch c {
		case '(', '[', '{':
			if len(s.stack) >= MaxDepth {
				return s.fail(i, "nested too deeply")
			}
			s.stack = append(s.stack, closerOf(c))
		case ')', ']', '}':
			if len(s.stack) == 0 || s.stack[len(s.stack)-1] != c {
				return s.fail(i, "mismatched "+string(c))
			}
			s.stack = s.stack[:len(s.stack)-1]
			if len(s.stack) == 0 {
				s.End = i + 1
				s.Pos = i + 1
				return Done
			}
		case '"', '\'':
			if i+2 >= len(buf) && !eof {
				s.Pos = i
				return Need
			}
			s.inStr, s.quote, s.triple = true, c, i+2 < len(buf) && buf[i+1] == c && buf[i+2] == c
			if s.triple {
				i += 3
				continue
			}
		}
		i++
	}
	s.Pos = i
	if eof {
		return s.fail(i, "the input ends before the brackets close")
	}
	return Need
}

func (s *PyScan) fail(i int, msg string) Status {
	s.FailPos, s.FailMsg = i, msg
	return Fail
}

// PyCall is one call read from pythonic text.
type PyCall struct {
	Name       string
	Args       *Node   // object of keyword arguments
	Positional []*Node // positional arguments, in order
	Start, End int
	// Err says why the call, well formed, has a value JSON cannot hold (a
	// bytes literal, a number out of range): it must not run.
	Err string
	// Nested are the calls written as argument values, f(x=g(y=1)), as
	// written, outermost first: the call must not run with them as values.
	Nested []string
	// InExpr reports a call read out of an expression in the list,
	// [f(a=1) + g(b=2)]: the expression's operators are not applied.
	InExpr bool
}

// Python reads Python literals and calls from src.
type Python struct {
	Src   []byte
	Pos   int
	End   int
	depth int
	Err   string
	ErrAt int
	// bad is the first value of the current call JSON cannot hold.
	bad string
	// nested are the calls in the current call's arguments.
	nested []string
}

func (p *Python) fail(msg string) {
	if p.Err == "" {
		p.Err, p.ErrAt = msg, p.Pos
	}
}

func (p *Python) WS() {
	for p.Pos < p.End {
		c := p.Src[p.Pos]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			p.Pos++
			continue
		}
		return
	}
}

func (p *Python) peek() byte {
	if p.Pos < p.End {
		return p.Src[p.Pos]
	}
	return 0
}

func IsPyIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= utf8.RuneSelf
}

// dottedName reads a (possibly dotted) identifier: get_weather, math.sqrt.
func (p *Python) dottedName() string { return p.name(false) }

// name reads a dotted name; with hyphens, a call's name may also join its
// parts with '-' (tools named weather-forecast, as llama-stack's are).
func (p *Python) name(hyphens bool) string {
	start := p.Pos
	for {
		s := p.Pos
		if p.Pos < p.End && (IsIdentStart(p.Src[p.Pos]) || p.Src[p.Pos] >= utf8.RuneSelf) {
			p.Pos++
			for p.Pos < p.End && IsPyIdentByte(p.Src[p.Pos]) {
				p.Pos++
			}
		}
		if p.Pos == s {
			p.Pos = start
			return ""
		}
		if p.Pos+1 < p.End && (p.Src[p.Pos] == '.' || hyphens && p.Src[p.Pos] == '-') && (IsIdentStart(p.Src[p.Pos+1]) || p.Src[p.Pos+1] >= utf8.RuneSelf) {
			p.Pos++
			continue
		}
		return string(p.Src[start:p.Pos])
	}
}

// CallList reads `[call, call, ...]` (or one bare call when bracket is false)
// and returns the calls read before any error.
func (p *Python) CallList(bracket bool) []PyCall {
	var calls []PyCall
	p.WS()
	closer := byte(']')
	if bracket {
		// a list, [f(a=1), g(b=2)], or a tuple, (f(a=1), g(b=2))
		if c := p.peek(); c != '[' && c != '(' {
			p.fail("expected '['")
			return nil
		} else {
			closer = closerOf(c)
		}
		p.Pos++
	}
	for {
		p.WS()
		if bracket && p.peek() == closer && len(calls) > 0 {
			p.Pos++
			return calls
		}
		c, ok := p.call()
		if !ok {
			return calls
		}
		calls = append(calls, c)
		p.WS()
		if bracket && closer == ']' && p.operator() {
			// [f(a=1) + g(b=2)], [f(a=1)["key"]]: the calls of an
			// expression are the list's, its operators not applied
			if !p.operands(&calls, closer) {
				return calls
			}
		}
		switch {
		case p.peek() == ',' || p.peek() == ';':
			p.Pos++
		case bracket && p.peek() == closer:
			p.Pos++
			return calls
		case !bracket && p.Pos >= p.End:
			return calls
		case !bracket && IsIdentStart(p.peek()):
			// calls on lines of their own, as OLMo writes them
		default:
			p.fail("expected ',' between calls")
			return calls
		}
	}
}

// operator reports an operator after a call: the call is an operand.
func (p *Python) operator() bool {
	c := p.peek()
	if c != 0 && strings.IndexByte("+-*/%|&^<>=[.@", c) >= 0 {
		return true
	}
	for _, w := range []string{"or", "and"} {
		if e := p.Pos + len(w); e <= p.End && string(p.Src[p.Pos:e]) == w && (e == p.End || !IsPyIdentByte(p.Src[e])) {
			return true
		}
	}
	return false
}

// operands reads on through the expression the last call of calls is an
// operand of, up to the ',' or ']' that ends the list's element: the calls
// among its operands are read, the rest (operators, numbers, subscripts)
// skipped. It returns false when the expression cannot be read.
func (p *Python) operands(calls *[]PyCall, closer byte) bool {
	(*calls)[len(*calls)-1].InExpr = true
	for p.Pos < p.End {
		switch c := p.Src[p.Pos]; {
		case c == ',' || c == closer:
			return true
		case c == '"' || c == '\'':
			if p.strings() == nil {
				return false
			}
		case c == '(' || c == '[' || c == '{':
			if !p.skipGroup() {
				return false
			}
		case c == ')' || c == ']' || c == '}':
			p.fail("mismatched " + string(c))
			return false
		case IsIdentStart(c):
			start := p.Pos
			p.name(false)
			p.WS()
			if p.peek() != '(' {
				continue
			}
			p.Pos = start
			nc, ok := p.call()
			if !ok {
				return false
			}
			nc.InExpr = true
			*calls = append(*calls, nc)
		default:
			p.Pos++
		}
	}
	p.fail("the input ends inside an expression")
	return false
}

// skipGroup skips a bracketed group, (...), [...] or {...}, and the strings
// in it.
func (p *Python) skipGroup() bool {
	depth := 0
	for p.Pos < p.End {
		switch c := p.Src[p.Pos]; c {
		case '"', '\'':
			if p.strings() == nil {
				return false
			}
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				p.Pos++
				return true
			}
		}
		p.Pos++
	}
	p.fail("the input ends inside brackets")
	return false
}

// call reads name(args), the name perhaps quoted: 'name'(args).
func (p *Python) call() (PyCall, bool) {
	start := p.Pos
	var name string
	if c := p.peek(); c == '\'' || c == '"' {
		if n := p.strings(); n != nil && isDottedName(n.Str) {
			name = n.Str
		} else {
			p.Pos = start
		}
	} else {
		name = p.name(true)
	}
	if name == "" {
		p.fail("expected a function name")
		return PyCall{}, false
	}
	p.WS()
	if p.peek() != '(' {
		p.fail("expected '(' after " + name)
		return PyCall{}, false
	}
	p.Pos++
	c := PyCall{Name: name, Args: &Node{Kind: Object}, Start: start}
	p.bad, p.nested = "", nil
	if !p.arguments(&c) {
		return PyCall{}, false
	}
	c.End = p.Pos
	c.Err, p.bad = p.bad, ""
	c.Nested, p.nested = p.nested, nil
	return c, true
}

// arguments reads the argument list after '(' through ')'.
func (p *Python) arguments(c *PyCall) bool {
	for {
		p.WS()
		if p.peek() == ')' {
			p.Pos++
			return true
		}
		// keyword argument?
		save := p.Pos
		if p.Pos < p.End && IsIdentStart(p.Src[p.Pos]) {
			for p.Pos < p.End && IsPyIdentByte(p.Src[p.Pos]) {
				p.Pos++
			}
			key := string(p.Src[save:p.Pos])
			p.WS()
			if p.peek() == '=' && (p.Pos+1 >= p.End || p.Src[p.Pos+1] != '=') {
				p.Pos++
				v := p.Value()
				if v == nil {
					return false
				}
				c.Args.Keys = append(c.Args.Keys, key)
				c.Args.Kids = append(c.Args.Kids, v)
				goto next
			}
			p.Pos = save
		}
		{
			v := p.Value()
			if v == nil {
				return false
			}
			c.Positional = append(c.Positional, v)
		}
	next:
		p.WS()
		switch p.peek() {
		case ',':
			p.Pos++
		case ')':
			p.Pos++
			return true
		default:
			p.fail("expected ',' or ')' in the arguments")
			return false
		}
	}
}

// Value reads one Python literal as a JSON Value; nil on error.
func (p *Python) Value() *Node {
	p.WS()
	if p.Pos >= p.End {
		p.fail("expected a value")
		return nil
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > MaxDepth {
		p.fail("nested too deeply")
		return nil
	}
	c := p.Src[p.Pos]
	switch {
	case c == '"' || c == '\'':
		return p.strings()
	case c == '[' || c == '(':
		closer := closerOf(c)
		p.Pos++
		n := &Node{Kind: Array}
		for {
			p.WS()
			if p.peek() == closer {
				p.Pos++
				return n
			}
			v := p.Value()
			if v == nil {
				return nil
			}
			n.Kids = append(n.Kids, v)
			p.WS()
			switch p.peek() {
			case ',':
				p.Pos++
			case closer:
				p.Pos++
				return n
			default:
				p.fail("expected ',' or '" + string(closer) + "'")
				return nil
			}
		}
	case c == '{':
		p.Pos++
		n := &Node{Kind: Object}
		set := false
		for {
			p.WS()
			if p.peek() == '}' {
				p.Pos++
				if set {
					n.Kind, n.Keys = Array, nil
				}
				return n
			}
			k := p.Value()
			if k == nil {
				return nil
			}
			p.WS()
			if p.peek() == ':' && !set {
				p.Pos++
				v := p.Value()
				if v == nil {
					return nil
				}
				n.Keys = append(n.Keys, keyText(k))
				n.Kids = append(n.Kids, v)
			} else if len(n.Kids) == 0 || set {
				set = true // a set literal: {1, 2}
				n.Kids = append(n.Kids, k)
			} else {
				p.fail("expected ':' in a dict")
				return nil
			}
			p.WS()
			switch p.peek() {
			case ',':
				p.Pos++
			case '}':
			default:
				p.fail("expected ',' or '}' in a dict")
				return nil
			}
		}
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	case IsIdentStart(c) || c >= utf8.RuneSelf:
		start := p.Pos
		name := p.dottedName()
		if name == "" {
			p.fail("unexpected character")
			return nil
		}
		// string prefixes: r'..', b"..", u'..', f'..'
		if p.Pos < p.End && (p.Src[p.Pos] == '\'' || p.Src[p.Pos] == '"') && len(name) <= 2 && strings.ContainsAny(strings.ToLower(name), "rbuf") && strings.Trim(strings.ToLower(name), "rbuf") == "" {
			raw := strings.ContainsAny(name, "rR")
			p.Pos = start + len(name)
			if strings.ContainsAny(name, "bB") && p.bad == "" {
				p.bad = "a bytes literal (" + name + "'...') has no JSON value"
			}
			return p.stringsRaw(raw)
		}
		switch name {
		case "True", "true":
			return &Node{Kind: Bool, Bool: true}
		case "False", "false":
			return &Node{Kind: Bool}
		case "None", "null":
			return &Node{Kind: Null}
		}
		p.WS()
		if p.peek() == '(' {
			// A nested call: with keyword arguments it becomes {name: {args}},
			// without them its source text, as BFCL reads it.
			p.Pos++
			nc := PyCall{Name: name, Args: &Node{Kind: Object}}
			at := len(p.nested)
			p.nested = append(p.nested, "")
			if !p.arguments(&nc) {
				return nil
			}
			p.nested[at] = string(p.Src[start:p.Pos])
			if len(nc.Positional) == 0 && len(nc.Args.Kids) > 0 {
				return &Node{Kind: Object, Keys: []string{name}, Kids: []*Node{nc.Args}}
			}
			return &Node{Kind: String, Str: string(p.Src[start:p.Pos])}
		}
		// A bare name stands for itself, and so does a name subscripted,
		// data['sales']: a variable's text, as BFCL reads one.
		end := start + len(name)
		if end >= p.End || p.Src[end] != '[' {
			return &Node{Kind: String, Str: name}
		}
		for n := 0; n < 8 && end < p.End && p.Src[end] == '['; n++ {
			p.Pos = end
			if !p.skipGroup() {
				p.Pos = end
				break
			}
			end = p.Pos
		}
		p.Pos = end
		return &Node{Kind: String, Str: string(p.Src[start:end])}
	}
	p.fail("unexpected character " + strconv.QuoteRune(rune(c)))
	return nil
}

func keyText(k *Node) string {
	switch k.Kind {
	case String, Number:
		return k.Str
	case Bool:
		if k.Bool {
			return "true"
		}
		return "false"
	case Null:
		return "null"
	}
	return string(AppendJSON(nil, k, nil))
}

// strings reads one or more adjacent string literals ('a' 'b' is 'ab').
func (p *Python) strings() *Node { return p.stringsRaw(false) }

func (p *Python) stringsRaw(raw bool) *Node {
	var sb []byte
	for {
		s, ok := p.stringLit(raw, sb)
		if !ok {
			return nil
		}
		sb = s
		save := p.Pos
		p.WS()
		// adjacent literal, possibly with a prefix
		j := p.Pos
		for j < p.End && j-p.Pos < 2 && strings.IndexByte("rRbBuUfF", p.Src[j]) >= 0 {
			j++
		}
		if j < p.End && (p.Src[j] == '\'' || p.Src[j] == '"') {
			raw = strings.ContainsAny(string(p.Src[p.Pos:j]), "rR")
			p.Pos = j
			continue
		}
		p.Pos = save
		return &Node{Kind: String, Str: string(sb)}
	}
}

func (p *Python) stringLit(raw bool, sb []byte) ([]byte, bool) {
	q := p.Src[p.Pos]
	triple := p.Pos+2 < p.End && p.Src[p.Pos+1] == q && p.Src[p.Pos+2] == q
	if triple {
		p.Pos += 3
	} else {
		p.Pos++
	}
	for p.Pos < p.End {
		c := p.Src[p.Pos]
		switch {
		case c == q:
			if !triple {
				if c == '\'' && apostrophe(p.Src, p.Pos, p.End) {
					sb = append(sb, c)
					p.Pos++
					continue
				}
				p.Pos++
				return sb, true
			}
			if p.Pos+2 < p.End && p.Src[p.Pos+1] == q && p.Src[p.Pos+2] == q {
				p.Pos += 3
				return sb, true
			}
			sb = append(sb, c)
			p.Pos++
		case c == '\\' && p.Pos+1 < p.End:
			e := p.Src[p.Pos+1]
			if raw {
				sb = append(sb, c, e)
				p.Pos += 2
				continue
			}
			p.Pos += 2
			switch e {
			case 'n':
				sb = append(sb, '\n')
			case 't':
				sb = append(sb, '\t')
			case 'r':
				sb = append(sb, '\r')
			case '0':
				sb = append(sb, 0)
			case '\\', '\'', '"':
				sb = append(sb, e)
			case '\n':
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if p.Pos+n <= p.End {
					if v, err := strconv.ParseUint(string(p.Src[p.Pos:p.Pos+n]), 16, 32); err == nil && utf8.ValidRune(rune(v)) {
						sb = utf8.AppendRune(sb, rune(v))
						p.Pos += n
						continue
					}
				}
				sb = append(sb, '\\', e)
			default:
				sb = append(sb, '\\', e)
			}
		case c == '\n' && !triple:
			p.fail("line break inside a string")
			return nil, false
		default:
			sb = append(sb, c)
			p.Pos++
		}
	}
	p.fail("the input ends inside a string")
	return nil, false
}

func (p *Python) number() *Node {
	start := p.Pos
	neg := false
	for p.Pos < p.End && (p.Src[p.Pos] == '-' || p.Src[p.Pos] == '+') {
		if p.Src[p.Pos] == '-' {
			neg = !neg
		}
		p.Pos++
		p.WS()
	}
	if p.Pos < p.End && IsIdentStart(p.Src[p.Pos]) {
		// -inf, -x: not a literal we read
		p.fail("expected a number")
		return nil
	}
	ds := p.Pos
	for p.Pos < p.End && (IsPyIdentByte(p.Src[p.Pos]) || p.Src[p.Pos] == '.' ||
		(p.Src[p.Pos] == '+' || p.Src[p.Pos] == '-') && p.Pos > ds && (p.Src[p.Pos-1] == 'e' || p.Src[p.Pos-1] == 'E')) {
		p.Pos++
	}
	w := strings.ReplaceAll(string(p.Src[ds:p.Pos]), "_", "")
	if w == "" {
		p.fail("expected a number")
		return nil
	}
	lw := strings.ToLower(w)
	var out string
	switch {
	case strings.HasPrefix(lw, "0x"), strings.HasPrefix(lw, "0o"), strings.HasPrefix(lw, "0b"):
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[lw[1]]
		v, ok := new(big.Int).SetString(lw[2:], base)
		if !ok {
			p.Pos = start
			p.fail("invalid number")
			return nil
		}
		out = v.String()
	default:
		if IsNumber(w) {
			out = w
		} else if f, err := strconv.ParseFloat(w, 64); err == nil && !strings.ContainsAny(lw, "nfi") {
			out = strconv.FormatFloat(f, 'g', -1, 64)
			if !IsNumber(out) {
				p.fail("invalid number")
				return nil
			}
		} else {
			p.Pos = start
			p.fail("invalid number")
			return nil
		}
	}
	if neg && out != "0" {
		out = "-" + out
	}
	if strings.ContainsAny(out, ".eE") && p.bad == "" {
		if f, err := strconv.ParseFloat(out, 64); err != nil && math.IsInf(f, 0) {
			p.bad = "the number " + Clip(out, 20) + " is out of range"
		}
	}
	return &Node{Kind: Number, Str: out}
}

// ParseLiteral reads text as a JSON or Python literal (a list or dict), or
// returns nil.
func ParseLiteral(s string) *Node {
	if s == "" {
		return nil
	}
	if n, _, err := Parse([]byte(s)); err == nil {
		return Detach(n)
	}
	pp := &Python{Src: []byte(s), End: len(s)}
	n := pp.Value()
	pp.WS()
	if n == nil || pp.Err != "" || pp.Pos != pp.End {
		return nil
	}
	return n
}

// Detach marks a value read from another text, so it is written out anew.
func Detach(n *Node) *Node {
	n.Clean = false
	for _, k := range n.Kids {
		Detach(k)
	}
	return n
}

// NamedList reads a list that names a tool first and then gives its
// arguments — ['f', {'a': 1}], [f, a=1, b=2] — or a list of such pairs
// (lists or tuples): [('f', {'a': 1}), ['g', {'b': 2}]]. It returns nil,
// with Err set, for anything else.
func (p *Python) NamedList() []PyCall {
	p.WS()
	if p.peek() != '[' {
		p.fail("expected '['")
		return nil
	}
	p.Pos++
	p.WS()
	if c := p.peek(); c != '[' && c != '(' {
		call, ok := p.named(']')
		if !ok {
			return nil
		}
		return []PyCall{call}
	}
	var calls []PyCall
	for {
		p.WS()
		c := p.peek()
		if c != '[' && c != '(' {
			p.fail("expected a pair of a name and arguments")
			return nil
		}
		p.Pos++
		call, ok := p.named(closerOf(c))
		if !ok {
			return nil
		}
		calls = append(calls, call)
		p.WS()
		switch p.peek() {
		case ',':
			p.Pos++
			p.WS()
			if p.peek() == ']' {
				p.Pos++
				return calls
			}
		case ']':
			p.Pos++
			return calls
		default:
			p.fail("expected ',' or ']' between pairs")
			return nil
		}
	}
}

// named reads a name (quoted or not), a comma, and the arguments — one
// dict, or keyword arguments — up to closer.
func (p *Python) named(closer byte) (PyCall, bool) {
	p.WS()
	start := p.Pos
	var name string
	if c := p.peek(); c == '\'' || c == '"' {
		n := p.strings()
		if n == nil {
			return PyCall{}, false
		}
		name = n.Str
	} else {
		name = p.dottedName()
	}
	if name == "" || !IsIdentStart(name[0]) {
		p.fail("expected a function name")
		return PyCall{}, false
	}
	c := PyCall{Name: name, Args: &Node{Kind: Object}, Start: start}
	p.WS()
	if p.peek() != ',' {
		p.fail("expected ',' after the name")
		return PyCall{}, false
	}
	p.Pos++
	p.WS()
	if p.peek() == '{' {
		v := p.Value()
		if v == nil || v.Kind != Object {
			p.fail("expected the arguments as a dict")
			return PyCall{}, false
		}
		c.Args = v
		p.WS()
		if p.peek() == ',' {
			p.Pos++
			p.WS()
		}
		if p.peek() != closer {
			p.fail("expected " + string(closer) + " after the arguments")
			return PyCall{}, false
		}
		p.Pos++
		c.End = p.Pos
		return c, true
	}
	for {
		p.WS()
		if p.peek() == closer {
			p.Pos++
			c.End = p.Pos
			return c, len(c.Args.Keys) > 0
		}
		k := p.Pos
		for p.Pos < p.End && IsPyIdentByte(p.Src[p.Pos]) {
			p.Pos++
		}
		key := string(p.Src[k:p.Pos])
		p.WS()
		if key == "" || !IsIdentStart(key[0]) || p.peek() != '=' {
			p.fail("expected keyword arguments")
			return PyCall{}, false
		}
		p.Pos++
		v := p.Value()
		if v == nil {
			return PyCall{}, false
		}
		c.Args.Keys = append(c.Args.Keys, key)
		c.Args.Kids = append(c.Args.Kids, v)
		p.WS()
		if p.peek() == ',' {
			p.Pos++
		} else if p.peek() != closer {
			p.fail("expected ',' or " + string(closer) + " in the arguments")
			return PyCall{}, false
		}
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// apostrophe reports a single quote between two letters, inside a string
// it does not end: 'It's fresh' is one string, as the model meant it.
func apostrophe(src []byte, i, end int) bool {
	return i > 0 && isLetter(src[i-1]) && i+1 < end && isLetter(src[i+1])
}

// isDottedName reports a name such as math.factorial.
func isDottedName(s string) bool {
	if s == "" || len(s) > 256 || !IsIdentStart(s[0]) || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !IsPyIdentByte(s[i]) && s[i] != '.' {
			return false
		}
	}
	return true
}
