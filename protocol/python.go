package protocol

import (
	"github.com/ptkit/ptk/lenient"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads the pythonic call format, [f(a=1), pkg.g(b='x')], that
// Llama 3.2+, BFCL's prompting mode and others use: a bracket-matching
// scanner finds where a call list ends (incrementally), and a small
// recursive-descent reader turns Python literals into JSON values.

// pyScan finds the end of a bracketed Python expression incrementally:
// strings (single, double, triple-quoted) are skipped, brackets must match.
type pyScan struct {
	pos    int
	stack  []byte // expected closers
	inStr  bool
	quote  byte
	triple bool
	end    int
	// failPos and failMsg say where and why the brackets did not match.
	failPos int
	failMsg string
}

func newPyScan(open int) *pyScan { return &pyScan{pos: open} }

func closerOf(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	}
	return '}'
}

func (s *pyScan) feed(buf []byte, eof bool) lenient.Status {
	i := s.pos
	for i < len(buf) {
		c := buf[i]
		if s.inStr {
			switch {
			case c == '\\':
				if i+1 >= len(buf) {
					s.pos = i
					if eof {
						return s.fail(i, "the input ends inside a string")
					}
					return lenient.Need
				}
				i += 2
				continue
			case c == s.quote:
				if !s.triple {
					s.inStr = false
					i++
					continue
				}
				if i+2 >= len(buf) {
					if !eof {
						s.pos = i
						return lenient.Need
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
			if len(s.stack) >= lenient.MaxDepth {
				return s.fail(i, "nested too deeply")
			}
			s.stack = append(s.stack, closerOf(c))
		case ')', ']', '}':
			if len(s.stack) == 0 || s.stack[len(s.stack)-1] != c {
				return s.fail(i, "mismatched "+string(c))
			}
			s.stack = s.stack[:len(s.stack)-1]
			if len(s.stack) == 0 {
				s.end = i + 1
				s.pos = i + 1
				return lenient.Done
			}
		case '"', '\'':
			if i+2 >= len(buf) && !eof {
				s.pos = i
				return lenient.Need
			}
			s.inStr, s.quote, s.triple = true, c, i+2 < len(buf) && buf[i+1] == c && buf[i+2] == c
			if s.triple {
				i += 3
				continue
			}
		}
		i++
	}
	s.pos = i
	if eof {
		return s.fail(i, "the input ends before the brackets close")
	}
	return lenient.Need
}

func (s *pyScan) fail(i int, msg string) lenient.Status {
	s.failPos, s.failMsg = i, msg
	return lenient.Fail
}

// pyCall is one call read from pythonic text.
type pyCall struct {
	name       string
	args       *lenient.Node   // object of keyword arguments
	positional []*lenient.Node // positional arguments, in order
	start, end int
}

// pyParser reads Python literals and calls from src.
type pyParser struct {
	src   []byte
	i     int
	end   int
	depth int
	err   string
	errAt int
}

func (p *pyParser) fail(msg string) {
	if p.err == "" {
		p.err, p.errAt = msg, p.i
	}
}

func (p *pyParser) ws() {
	for p.i < p.end {
		c := p.src[p.i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			p.i++
			continue
		}
		return
	}
}

func (p *pyParser) peek() byte {
	if p.i < p.end {
		return p.src[p.i]
	}
	return 0
}

func isPyIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= utf8.RuneSelf
}

// dottedName reads a (possibly dotted) identifier: get_weather, math.sqrt.
func (p *pyParser) dottedName() string {
	start := p.i
	for {
		s := p.i
		if p.i < p.end && (lenient.IsIdentStart(p.src[p.i]) || p.src[p.i] >= utf8.RuneSelf) {
			p.i++
			for p.i < p.end && isPyIdentByte(p.src[p.i]) {
				p.i++
			}
		}
		if p.i == s {
			p.i = start
			return ""
		}
		if p.i+1 < p.end && p.src[p.i] == '.' && (lenient.IsIdentStart(p.src[p.i+1]) || p.src[p.i+1] >= utf8.RuneSelf) {
			p.i++
			continue
		}
		return string(p.src[start:p.i])
	}
}

// callList reads `[call, call, ...]` (or one bare call when bracket is false)
// and returns the calls read before any error.
func (p *pyParser) callList(bracket bool) []pyCall {
	var calls []pyCall
	p.ws()
	if bracket {
		if p.peek() != '[' {
			p.fail("expected '['")
			return nil
		}
		p.i++
	}
	for {
		p.ws()
		if bracket && p.peek() == ']' && len(calls) > 0 {
			p.i++
			return calls
		}
		c, ok := p.call()
		if !ok {
			return calls
		}
		calls = append(calls, c)
		p.ws()
		switch {
		case p.peek() == ',' || p.peek() == ';':
			p.i++
		case bracket && p.peek() == ']':
			p.i++
			return calls
		case !bracket && p.i >= p.end:
			return calls
		case !bracket && lenient.IsIdentStart(p.peek()):
			// calls on lines of their own, as OLMo writes them
		default:
			p.fail("expected ',' between calls")
			return calls
		}
	}
}

// call reads name(args).
func (p *pyParser) call() (pyCall, bool) {
	start := p.i
	name := p.dottedName()
	if name == "" {
		p.fail("expected a function name")
		return pyCall{}, false
	}
	p.ws()
	if p.peek() != '(' {
		p.fail("expected '(' after " + name)
		return pyCall{}, false
	}
	p.i++
	c := pyCall{name: name, args: &lenient.Node{Kind: lenient.Object}, start: start}
	if !p.arguments(&c) {
		return pyCall{}, false
	}
	c.end = p.i
	return c, true
}

// arguments reads the argument list after '(' through ')'.
func (p *pyParser) arguments(c *pyCall) bool {
	for {
		p.ws()
		if p.peek() == ')' {
			p.i++
			return true
		}
		// keyword argument?
		save := p.i
		if p.i < p.end && lenient.IsIdentStart(p.src[p.i]) {
			for p.i < p.end && isPyIdentByte(p.src[p.i]) {
				p.i++
			}
			key := string(p.src[save:p.i])
			p.ws()
			if p.peek() == '=' && (p.i+1 >= p.end || p.src[p.i+1] != '=') {
				p.i++
				v := p.value()
				if v == nil {
					return false
				}
				c.args.Keys = append(c.args.Keys, key)
				c.args.Kids = append(c.args.Kids, v)
				goto next
			}
			p.i = save
		}
		{
			v := p.value()
			if v == nil {
				return false
			}
			c.positional = append(c.positional, v)
		}
	next:
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
		case ')':
			p.i++
			return true
		default:
			p.fail("expected ',' or ')' in the arguments")
			return false
		}
	}
}

// value reads one Python literal as a JSON value; nil on error.
func (p *pyParser) value() *lenient.Node {
	p.ws()
	if p.i >= p.end {
		p.fail("expected a value")
		return nil
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > lenient.MaxDepth {
		p.fail("nested too deeply")
		return nil
	}
	c := p.src[p.i]
	switch {
	case c == '"' || c == '\'':
		return p.strings()
	case c == '[' || c == '(':
		closer := closerOf(c)
		p.i++
		n := &lenient.Node{Kind: lenient.Array}
		for {
			p.ws()
			if p.peek() == closer {
				p.i++
				return n
			}
			v := p.value()
			if v == nil {
				return nil
			}
			n.Kids = append(n.Kids, v)
			p.ws()
			switch p.peek() {
			case ',':
				p.i++
			case closer:
				p.i++
				return n
			default:
				p.fail("expected ',' or '" + string(closer) + "'")
				return nil
			}
		}
	case c == '{':
		p.i++
		n := &lenient.Node{Kind: lenient.Object}
		set := false
		for {
			p.ws()
			if p.peek() == '}' {
				p.i++
				if set {
					n.Kind, n.Keys = lenient.Array, nil
				}
				return n
			}
			k := p.value()
			if k == nil {
				return nil
			}
			p.ws()
			if p.peek() == ':' && !set {
				p.i++
				v := p.value()
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
			p.ws()
			switch p.peek() {
			case ',':
				p.i++
			case '}':
			default:
				p.fail("expected ',' or '}' in a dict")
				return nil
			}
		}
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	case lenient.IsIdentStart(c) || c >= utf8.RuneSelf:
		start := p.i
		name := p.dottedName()
		if name == "" {
			p.fail("unexpected character")
			return nil
		}
		// string prefixes: r'..', b"..", u'..', f'..'
		if p.i < p.end && (p.src[p.i] == '\'' || p.src[p.i] == '"') && len(name) <= 2 && strings.ContainsAny(strings.ToLower(name), "rbuf") && strings.Trim(strings.ToLower(name), "rbuf") == "" {
			raw := strings.ContainsAny(name, "rR")
			p.i = start + len(name)
			return p.stringsRaw(raw)
		}
		switch name {
		case "True", "true":
			return &lenient.Node{Kind: lenient.Bool, Bool: true}
		case "False", "false":
			return &lenient.Node{Kind: lenient.Bool}
		case "None", "null":
			return &lenient.Node{Kind: lenient.Null}
		}
		p.ws()
		if p.peek() == '(' {
			// A nested call: with keyword arguments it becomes {name: {args}},
			// without them its source text, as BFCL reads it.
			p.i++
			nc := pyCall{name: name, args: &lenient.Node{Kind: lenient.Object}}
			if !p.arguments(&nc) {
				return nil
			}
			if len(nc.positional) == 0 && len(nc.args.Kids) > 0 {
				return &lenient.Node{Kind: lenient.Object, Keys: []string{name}, Kids: []*lenient.Node{nc.args}}
			}
			return &lenient.Node{Kind: lenient.String, Str: string(p.src[start:p.i])}
		}
		// A bare name stands for itself.
		return &lenient.Node{Kind: lenient.String, Str: name}
	}
	p.fail("unexpected character " + strconv.QuoteRune(rune(c)))
	return nil
}

func keyText(k *lenient.Node) string {
	switch k.Kind {
	case lenient.String, lenient.Number:
		return k.Str
	case lenient.Bool:
		if k.Bool {
			return "true"
		}
		return "false"
	case lenient.Null:
		return "null"
	}
	return string(lenient.AppendJSON(nil, k, nil))
}

// strings reads one or more adjacent string literals ('a' 'b' is 'ab').
func (p *pyParser) strings() *lenient.Node { return p.stringsRaw(false) }

func (p *pyParser) stringsRaw(raw bool) *lenient.Node {
	var sb []byte
	for {
		s, ok := p.stringLit(raw, sb)
		if !ok {
			return nil
		}
		sb = s
		save := p.i
		p.ws()
		// adjacent literal, possibly with a prefix
		j := p.i
		for j < p.end && j-p.i < 2 && strings.IndexByte("rRbBuUfF", p.src[j]) >= 0 {
			j++
		}
		if j < p.end && (p.src[j] == '\'' || p.src[j] == '"') {
			raw = strings.ContainsAny(string(p.src[p.i:j]), "rR")
			p.i = j
			continue
		}
		p.i = save
		return &lenient.Node{Kind: lenient.String, Str: string(sb)}
	}
}

func (p *pyParser) stringLit(raw bool, sb []byte) ([]byte, bool) {
	q := p.src[p.i]
	triple := p.i+2 < p.end && p.src[p.i+1] == q && p.src[p.i+2] == q
	if triple {
		p.i += 3
	} else {
		p.i++
	}
	for p.i < p.end {
		c := p.src[p.i]
		switch {
		case c == q:
			if !triple {
				p.i++
				return sb, true
			}
			if p.i+2 < p.end && p.src[p.i+1] == q && p.src[p.i+2] == q {
				p.i += 3
				return sb, true
			}
			sb = append(sb, c)
			p.i++
		case c == '\\' && p.i+1 < p.end:
			e := p.src[p.i+1]
			if raw {
				sb = append(sb, c, e)
				p.i += 2
				continue
			}
			p.i += 2
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
				if p.i+n <= p.end {
					if v, err := strconv.ParseUint(string(p.src[p.i:p.i+n]), 16, 32); err == nil && utf8.ValidRune(rune(v)) {
						sb = utf8.AppendRune(sb, rune(v))
						p.i += n
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
			p.i++
		}
	}
	p.fail("the input ends inside a string")
	return nil, false
}

func (p *pyParser) number() *lenient.Node {
	start := p.i
	neg := false
	for p.i < p.end && (p.src[p.i] == '-' || p.src[p.i] == '+') {
		if p.src[p.i] == '-' {
			neg = !neg
		}
		p.i++
		p.ws()
	}
	if p.i < p.end && lenient.IsIdentStart(p.src[p.i]) {
		// -inf, -x: not a literal we read
		p.fail("expected a number")
		return nil
	}
	ds := p.i
	for p.i < p.end && (isPyIdentByte(p.src[p.i]) || p.src[p.i] == '.' ||
		(p.src[p.i] == '+' || p.src[p.i] == '-') && p.i > ds && (p.src[p.i-1] == 'e' || p.src[p.i-1] == 'E')) {
		p.i++
	}
	w := strings.ReplaceAll(string(p.src[ds:p.i]), "_", "")
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
			p.i = start
			p.fail("invalid number")
			return nil
		}
		out = v.String()
	default:
		if lenient.IsNumber(w) {
			out = w
		} else if f, err := strconv.ParseFloat(w, 64); err == nil && !strings.ContainsAny(lw, "nfi") {
			out = strconv.FormatFloat(f, 'g', -1, 64)
			if !lenient.IsNumber(out) {
				p.fail("invalid number")
				return nil
			}
		} else {
			p.i = start
			p.fail("invalid number")
			return nil
		}
	}
	if neg && out != "0" {
		out = "-" + out
	}
	return &lenient.Node{Kind: lenient.Number, Str: out}
}
