package protocol

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// This file holds ptk's lenient JSON reader. It is incremental: it is fed the
// growing input and resumes where it stopped, so a streamed reply is read once,
// byte by byte, and the reader decides exactly as it would on the whole text.
// It never changes valid JSON: a value that needed no repair keeps its bytes.
//
// What it accepts beyond JSON, each recorded as a repair: single-quoted
// strings, unescaped quotes inside strings (a quote ends a string only where
// the JSON after it makes sense), raw control characters in strings, invalid
// escapes, Python True/False/None, NaN/Infinity/undefined (as null), bare
// object keys, // and /* */ comments, trailing commas, missing commas between
// values (not in prose), and lenient numbers (+1, .5, 1., 0x1F).

// maxDepth bounds the nesting of containers; deeper input is rejected.
const maxDepth = 128

// quoteLookahead bounds how far past a quote the reader looks to decide
// whether the quote ends its string.
const quoteLookahead = 256

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

func (k jkind) String() string {
	switch k {
	case jNull:
		return "null"
	case jBool:
		return "boolean"
	case jNumber:
		return "number"
	case jString:
		return "string"
	case jArray:
		return "array"
	}
	return "object"
}

// jnode is a JSON value with the byte span it came from. Objects keep their
// keys in order.
type jnode struct {
	kind       jkind
	start, end int // span in the source; meaningful only when clean
	s          string
	b          bool
	keys       []string
	kids       []*jnode
	// clean reports that source[start:end] is valid JSON for this value
	// exactly: no repair, coercion or edit touched it.
	clean bool
}

func (n *jnode) get(key string) *jnode {
	if n == nil || n.kind != jObject {
		return nil
	}
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return n.kids[i]
		}
	}
	return nil
}

// appendJSON writes n as compact JSON. A clean node is copied from src.
func appendJSON(dst []byte, n *jnode, src []byte) []byte {
	if n.clean && src != nil && n.end <= len(src) {
		return append(dst, src[n.start:n.end]...)
	}
	switch n.kind {
	case jNull:
		return append(dst, "null"...)
	case jBool:
		if n.b {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case jNumber:
		return append(dst, n.s...)
	case jString:
		return appendJSONString(dst, n.s)
	case jArray:
		dst = append(dst, '[')
		for i, k := range n.kids {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, k, src)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	first := true
	for i, k := range n.kids {
		if shadowed(n.keys, i) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, n.keys[i])
		dst = append(dst, ':')
		dst = appendJSON(dst, k, src)
	}
	return append(dst, '}')
}

// shadowed reports whether keys[i] appears again later: the last value of a
// repeated key wins, as in encoding/json.
func shadowed(keys []string, i int) bool {
	for j := i + 1; j < len(keys); j++ {
		if keys[j] == keys[i] {
			return true
		}
	}
	return false
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string, without HTML escaping, with
// invalid UTF-8 replaced by U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// repair kinds, recorded once each, in the order they first happen.
type repairKind uint8

const (
	rSingleQuotes repairKind = iota
	rUnescapedQuote
	rControlChar
	rBadEscape
	rPythonLiteral
	rNonFinite
	rBareKey
	rComment
	rTrailingComma
	rMissingComma
	rNumber
	rExtraClosers
	rLiteralBackslash
	rMissingClosers
	nRepairKinds
)

var repairText = [nRepairKinds]string{
	rSingleQuotes:     "json: single-quoted strings read as JSON strings",
	rUnescapedQuote:   "json: unescaped quote inside a string kept as text",
	rControlChar:      "json: raw control character inside a string escaped",
	rBadEscape:        "json: invalid escape sequence kept as text",
	rPythonLiteral:    "json: Python literal True/False/None read as true/false/null",
	rNonFinite:        "json: NaN/Infinity/undefined read as null",
	rBareKey:          "json: unquoted object key quoted",
	rComment:          "json: comment removed",
	rTrailingComma:    "json: trailing comma removed",
	rMissingComma:     "json: missing comma inserted",
	rNumber:           "json: number rewritten in JSON form",
	rExtraClosers:     "json: extra closing brackets after the value removed",
	rLiteralBackslash: "json: backslashes in a string with invalid escapes read as written",
	rMissingClosers:   "json: missing closing brackets added before the closing tag",
}

type repairSet struct {
	seen  uint32
	order []repairKind
	n     int // every repair, counted, for clean tracking
}

func (r *repairSet) add(k repairKind) {
	r.n++
	if r.seen&(1<<k) == 0 {
		r.seen |= 1 << k
		r.order = append(r.order, k)
	}
}

func (r *repairSet) strings() []string {
	if len(r.order) == 0 {
		return nil
	}
	out := make([]string, len(r.order))
	for i, k := range r.order {
		out[i] = repairText[k]
	}
	return out
}

type jstatus uint8

const (
	jNeed jstatus = iota // more input is needed to decide
	jDone                // the value is complete
	jFail                // the input is not a value
)

type jstate uint8

const (
	jsValue        jstate = iota // a value
	jsValueOrClose               // after '[': a value or ']'
	jsArrayComma                 // after ',' in an array: a value or ']' (trailing comma)
	jsKeyOrClose                 // after '{': a key or '}'
	jsKey                        // after ',' in an object: a key or '}' (trailing comma)
	jsColon                      // after a key
	jsCommaOrClose               // after a value in a container
	jsDone
)

type jframe struct {
	node     *jnode
	bareKeys bool
	key      string
	nrep     int
}

// jparser reads one lenient JSON value incrementally. Positions are indices
// into the buffer passed to feed, which may grow between calls but never
// changes its existing bytes.
type jparser struct {
	// bare marks a value found in prose: anything doubtful rejects it at once,
	// so prose is released quickly and only call-like JSON is held back.
	bare bool

	pos   int
	state jstate
	stack []jframe
	root  *jnode
	end   int

	// string in progress
	inStr    bool
	quote    byte
	isKey    bool
	strStart int
	strRep   int
	sb       []byte
	literal  bool // the string has a backslash that escapes nothing

	// bare word (number, literal, unquoted key) in progress
	inWord    bool
	wordStart int

	// comment in progress: 1 line, 2 block
	comment int

	rep     repairSet
	failPos int
	failMsg string
	// truncated reports that the input ended inside the value.
	truncated bool

	// closed holds the outermost containers closed so far inside a value
	// that is still open: what is left to salvage when the value fails.
	closed []*jnode
	// trackClosed enables closed.
	trackClosed bool
	pool        *nodePool
	// closers end the value where it stands, with its containers closed,
	// when one of them appears between tokens: the closing tag of the call
	// proves the value ended, only a bracket is missing.
	closers []string
}

func newJParser(start int, bare bool) *jparser {
	return &jparser{pos: start, bare: bare, trackClosed: bare}
}

// reset makes p ready to read a new value at start, keeping its buffers.
func (p *jparser) reset(start int, bare bool, pool *nodePool) *jparser {
	*p = jparser{pos: start, bare: bare, trackClosed: bare, pool: pool,
		stack: p.stack[:0], sb: p.sb[:0], closed: p.closed[:0], rep: repairSet{order: p.rep.order[:0]}}
	return p
}

// nodePool hands out values in blocks, so reading JSON allocates rarely.
// nodePool hands out nodes from blocks that double from 8 to 128 nodes: a
// small call does not pay for a large block.
type nodePool struct {
	free  []jnode
	block int
}

func (p *nodePool) get() *jnode {
	if p == nil {
		return new(jnode)
	}
	if len(p.free) == 0 {
		p.block = min(max(2*p.block, 8), 128)
		p.free = make([]jnode, p.block)
	}
	n := &p.free[0]
	p.free = p.free[1:]
	return n
}

func (p *jparser) fail(pos int, msg string) jstatus {
	p.failPos = pos
	p.failMsg = msg
	return jFail
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '$' || c == '.' || c == '+' || c == '-'
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func (p *jparser) top() *jframe {
	if len(p.stack) == 0 {
		return nil
	}
	return &p.stack[len(p.stack)-1]
}

// feed advances over buf. eof reports that buf holds the whole input.
func (p *jparser) feed(buf []byte, eof bool) jstatus {
	for {
		switch {
		case p.state == jsDone:
			return jDone
		case p.inStr:
			if st, ok := p.scanString(buf, eof); !ok {
				return st
			}
			continue
		case p.inWord:
			if st, ok := p.scanWord(buf, eof); !ok {
				return st
			}
			continue
		case p.comment != 0:
			if st, ok := p.scanComment(buf, eof); !ok {
				return st
			}
			continue
		}
		i := p.pos
		for i < len(buf) && isWS(buf[i]) {
			i++
		}
		p.pos = i
		if i >= len(buf) {
			if eof {
				p.truncated = true
				return p.fail(i, "the JSON ends before it is complete")
			}
			return jNeed
		}
		c := buf[i]
		if c == '<' && len(p.closers) > 0 && len(p.stack) > 0 {
			for _, cl := range p.closers {
				match, need := hasPrefixFold(buf, i, cl, eof)
				if need {
					return jNeed
				}
				if match {
					return p.autoClose(i)
				}
			}
		}
		if c == '/' {
			if i+1 >= len(buf) {
				if eof {
					return p.fail(i, "unexpected '/'")
				}
				return jNeed
			}
			switch buf[i+1] {
			case '/':
				p.comment = 1
			case '*':
				p.comment = 2
			default:
				return p.fail(i, "unexpected '/'")
			}
			p.rep.add(rComment)
			p.pos = i + 2
			continue
		}
		if st, ok := p.token(buf, i, c); !ok {
			return st
		}
	}
}

// token handles the byte c at i between tokens.
func (p *jparser) token(buf []byte, i int, c byte) (jstatus, bool) {
	switch p.state {
	case jsValueOrClose:
		if c == ']' {
			return p.closeContainer(i, jArray)
		}
		return p.beginValue(buf, i, c)
	case jsArrayComma:
		if c == ']' {
			p.rep.add(rTrailingComma)
			return p.closeContainer(i, jArray)
		}
		return p.beginValue(buf, i, c)
	case jsValue:
		return p.beginValue(buf, i, c)
	case jsKeyOrClose, jsKey:
		switch {
		case c == '}':
			if p.state == jsKey {
				p.rep.add(rTrailingComma)
			}
			return p.closeContainer(i, jObject)
		case c == '"' || c == '\'':
			p.beginString(i, c, true)
			return 0, true
		case isIdentStart(c) || c >= '0' && c <= '9':
			p.inWord, p.wordStart, p.pos = true, i, i+1
			return 0, true
		}
		return p.fail(i, "expected an object key"), false
	case jsColon:
		if c == ':' {
			p.state = jsValue
			p.pos = i + 1
			return 0, true
		}
		return p.fail(i, "expected ':' after an object key"), false
	case jsCommaOrClose:
		f := p.top()
		switch c {
		case ',':
			if f.node.kind == jObject {
				p.state = jsKey
			} else {
				p.state = jsArrayComma
			}
			p.pos = i + 1
			return 0, true
		case '}':
			return p.closeContainer(i, jObject)
		case ']':
			return p.closeContainer(i, jArray)
		}
		if !p.bare && (c == '"' || c == '\'' || c == '{' || c == '[' || c >= '0' && c <= '9' || c == '-' || isIdentStart(c)) {
			// A missing comma between two values, a common slip.
			p.rep.add(rMissingComma)
			if f.node.kind == jObject {
				p.state = jsKey
			} else {
				p.state = jsArrayComma
			}
			return 0, true
		}
		return p.fail(i, "expected ',' or a closing bracket"), false
	}
	return p.fail(i, "unexpected input"), false
}

// autoClose closes every open container at i.
func (p *jparser) autoClose(i int) jstatus {
	if p.state == jsColon || p.state == jsValue {
		return p.fail(i, "an object key without its value")
	}
	p.rep.add(rMissingClosers)
	for len(p.stack) > 0 {
		f := p.top()
		n := f.node
		n.end = i
		n.clean = false
		p.stack = p.stack[:len(p.stack)-1]
		if len(p.stack) == 0 {
			p.root = n
			break
		}
		pf := p.top()
		if pf.node.kind == jObject {
			pf.node.keys = append(pf.node.keys, pf.key)
		}
		pf.node.kids = append(pf.node.kids, n)
	}
	p.end = i
	p.pos = i
	p.state = jsDone
	return jDone
}

func (p *jparser) beginValue(buf []byte, i int, c byte) (jstatus, bool) {
	switch {
	case c == '{' || c == '[':
		if len(p.stack) >= maxDepth {
			return p.fail(i, "JSON nested too deeply"), false
		}
		n := p.pool.get()
		n.kind, n.start = jObject, i
		p.state = jsKeyOrClose
		if c == '[' {
			n.kind = jArray
			p.state = jsValueOrClose
		}
		p.stack = append(p.stack, jframe{node: n, nrep: p.rep.n})
		p.pos = i + 1
		return 0, true
	case c == '"' || c == '\'':
		p.beginString(i, c, false)
		return 0, true
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' || isIdentStart(c):
		p.inWord, p.wordStart, p.pos = true, i, i+1
		return 0, true
	}
	return p.fail(i, "expected a JSON value"), false
}

func (p *jparser) beginString(i int, q byte, key bool) {
	p.inStr, p.quote, p.isKey, p.strStart, p.strRep = true, q, key, i, p.rep.n
	p.sb = p.sb[:0]
	if q == '\'' {
		p.rep.add(rSingleQuotes)
	}
	p.pos = i + 1
}

func (p *jparser) closeContainer(i int, k jkind) (jstatus, bool) {
	f := p.top()
	if f == nil || f.node.kind != k {
		return p.fail(i, "mismatched closing bracket"), false
	}
	n := f.node
	n.end = i + 1
	n.clean = p.rep.n == f.nrep
	p.stack = p.stack[:len(p.stack)-1]
	p.pos = i + 1
	if p.trackClosed && len(p.stack) > 0 {
		// Containers closed inside n are no longer outermost.
		j := len(p.closed)
		for j > 0 && p.closed[j-1].start > n.start {
			j--
		}
		p.closed = append(p.closed[:j], n)
	}
	return p.valueDone(n)
}

func (p *jparser) valueDone(n *jnode) (jstatus, bool) {
	f := p.top()
	if f == nil {
		p.root = n
		p.end = p.pos
		p.state = jsDone
		p.closed = nil
		return jDone, false
	}
	if f.node.kind == jObject {
		f.node.keys = append(f.node.keys, f.key)
	}
	f.node.kids = append(f.node.kids, n)
	p.state = jsCommaOrClose
	return 0, true
}

// scanString advances through a string; ok is false when feed must return st.
func (p *jparser) scanString(buf []byte, eof bool) (st jstatus, ok bool) {
	i := p.pos
	q := p.quote
	for {
		run := i
		for i < len(buf) {
			c := buf[i]
			if c == q || c == '\\' || c < 0x20 {
				break
			}
			i++
		}
		p.sb = append(p.sb, buf[run:i]...)
		if i >= len(buf) {
			p.pos = i
			if eof {
				p.truncated = true
				return p.fail(i, "the JSON ends inside a string"), false
			}
			return jNeed, false
		}
		c := buf[i]
		switch {
		case c == q:
			switch p.quoteEnds(buf, i, eof) {
			case -1:
				p.pos = i
				return jNeed, false
			case 0:
				p.rep.add(rUnescapedQuote)
				p.sb = append(p.sb, c)
				i++
				continue
			}
			p.inStr = false
			p.pos = i + 1
			if p.literal {
				// A backslash that escapes nothing (C:\Users) says the model
				// did not escape its backslashes: read them all as written.
				p.rep.add(rLiteralBackslash)
				p.sb = literalBackslashes(p.sb[:0], buf[p.strStart+1:i])
				p.literal = false
			}
			s := string(p.sb)
			if p.isKey {
				p.top().key = s
				p.state = jsColon
				return 0, true
			}
			n := p.pool.get()
			*n = jnode{kind: jString, s: s, start: p.strStart, end: i + 1, clean: p.rep.n == p.strRep}
			return p.valueDone(n)
		case c == '\\':
			if i+1 >= len(buf) {
				p.pos = i
				if eof {
					p.truncated = true
					return p.fail(i, "the JSON ends inside a string"), false
				}
				return jNeed, false
			}
			e := buf[i+1]
			switch e {
			case '"', '\\', '/':
				p.sb = append(p.sb, e)
				i += 2
			case 'b':
				p.sb = append(p.sb, '\b')
				i += 2
			case 'f':
				p.sb = append(p.sb, '\f')
				i += 2
			case 'n':
				p.sb = append(p.sb, '\n')
				i += 2
			case 'r':
				p.sb = append(p.sb, '\r')
				i += 2
			case 't':
				p.sb = append(p.sb, '\t')
				i += 2
			case '\'':
				p.rep.add(rBadEscape)
				p.sb = append(p.sb, '\'')
				i += 2
			case 'u':
				r, n, need := readUnicodeEscape(buf, i, eof)
				if need {
					p.pos = i
					return jNeed, false
				}
				if n == 0 {
					p.rep.add(rBadEscape)
					p.sb = append(p.sb, '\\', 'u')
					i += 2
					continue
				}
				p.sb = utf8.AppendRune(p.sb, r)
				i += n
			default:
				p.rep.add(rBadEscape)
				p.sb = append(p.sb, '\\')
				p.literal = true
				i++
			}
		default: // raw control character
			if p.bare && (c == '\n' || c == '\r') {
				return p.fail(i, "line break inside a string"), false
			}
			p.rep.add(rControlChar)
			p.sb = append(p.sb, c)
			i++
		}
	}
}

// literalBackslashes decodes raw string text in which backslashes are meant
// literally: only \\ and an escaped quote are escapes.
func literalBackslashes(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) {
			switch raw[i+1] {
			case '\\', '"', '\'':
				dst = append(dst, raw[i+1])
				i++
				continue
			}
		}
		dst = append(dst, c)
	}
	return dst
}

// readUnicodeEscape reads \uXXXX (and a following low surrogate) at buf[i].
// It returns the rune and the bytes used, n == 0 when the escape is invalid,
// or need when the input ends too early to tell.
func readUnicodeEscape(buf []byte, i int, eof bool) (r rune, n int, need bool) {
	hex4 := func(at int) (rune, int) { // -1 invalid, -2 need
		if at+4 > len(buf) {
			for k := at; k < len(buf); k++ {
				if unhex(buf[k]) < 0 {
					return -1, 0
				}
			}
			if eof {
				return -1, 0
			}
			return -2, 0
		}
		var v rune
		for k := at; k < at+4; k++ {
			h := unhex(buf[k])
			if h < 0 {
				return -1, 0
			}
			v = v<<4 | rune(h)
		}
		return v, 4
	}
	v, _ := hex4(i + 2)
	switch {
	case v == -2:
		return 0, 0, true
	case v < 0:
		return 0, 0, false
	}
	if v < 0xD800 || v > 0xDFFF {
		return v, 6, false
	}
	if v >= 0xDC00 {
		return utf8.RuneError, 6, false
	}
	// High surrogate: look for the low one.
	j := i + 6
	if j+2 > len(buf) {
		if !eof && (j == len(buf) || buf[j] == '\\') {
			return 0, 0, true
		}
		return utf8.RuneError, 6, false
	}
	if buf[j] != '\\' || buf[j+1] != 'u' {
		return utf8.RuneError, 6, false
	}
	lo, _ := hex4(j + 2)
	switch {
	case lo == -2:
		return 0, 0, true
	case lo < 0xDC00 || lo > 0xDFFF:
		return utf8.RuneError, 6, false
	}
	return 0x10000 + (v-0xD800)<<10 + (lo - 0xDC00), 12, false
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// quoteEnds decides whether the quote at buf[i] ends the string in progress:
// 1 yes, 0 no (it is part of the text), -1 more input is needed. A quote ends
// a string when what follows makes sense after a string; in valid JSON that is
// always so, and in a model's unescaped `"use "strict";"` it is not.
func (p *jparser) quoteEnds(buf []byte, i int, eof bool) int {
	j, ok := skipWSBounded(buf, i+1)
	if !ok {
		return 1
	}
	if j >= len(buf) {
		if eof {
			return 1
		}
		return -1
	}
	c := buf[j]
	if p.isKey {
		if c == ':' {
			return 1
		}
		return 0
	}
	depth := len(p.stack)
	if depth == 0 {
		return 1
	}
	switch c {
	case ',':
		k, ok := skipWSBounded(buf, j+1)
		if !ok {
			return 1
		}
		if k >= len(buf) {
			if eof {
				return 1
			}
			return -1
		}
		n := buf[k]
		f := p.top()
		if f.node.kind == jObject {
			if n == '"' || n == '\'' || n == '}' || f.bareKeys && isIdentStart(n) {
				return 1
			}
			if isIdentStart(n) {
				return bareKeyAhead(buf, k, eof)
			}
			return 0
		}
		if n == '"' || n == '\'' || n == '{' || n == '[' || n == ']' || n == '-' || n >= '0' && n <= '9' ||
			n == 't' || n == 'f' || n == 'n' || n == 'T' || n == 'F' || n == 'N' {
			return 1
		}
		return 0
	case '}', ']':
		d := depth
		for {
			want := jObject
			if c == ']' {
				want = jArray
			}
			if p.stack[d-1].node.kind != want {
				return 0
			}
			d--
			if d == 0 {
				return 1
			}
			var ok bool
			j, ok = skipWSBounded(buf, j+1)
			if !ok {
				return 1
			}
			if j >= len(buf) {
				if eof {
					return 1
				}
				return -1
			}
			c = buf[j]
			switch c {
			case '}', ']':
				continue
			case ',', '<':
				// a comma goes on; a tag is where the call ends, a closing
				// brace missing (see jparser.closers)
				return 1
			}
			return 0
		}
	}
	return 0
}

// bareKeyAhead says whether an unquoted key and its colon start at k: 1 yes,
// 0 no, -1 more input is needed.
func bareKeyAhead(buf []byte, k int, eof bool) int {
	j := k
	for j < len(buf) && j-k < 64 && (isIdentStart(buf[j]) || buf[j] >= '0' && buf[j] <= '9') {
		j++
	}
	for j < len(buf) && j-k < 64 && (buf[j] == ' ' || buf[j] == '\t') {
		j++
	}
	switch {
	case j < len(buf) && buf[j] == ':':
		return 1
	case j >= len(buf) && j-k < 64 && !eof:
		return -1
	}
	return 0
}

// skipWSBounded skips JSON whitespace from i; ok is false when there is more of
// it than the lookahead allows.
func skipWSBounded(buf []byte, i int) (int, bool) {
	limit := i + quoteLookahead
	for i < len(buf) && isWS(buf[i]) {
		i++
		if i > limit {
			return i, false
		}
	}
	return i, true
}

func (p *jparser) scanWord(buf []byte, eof bool) (jstatus, bool) {
	i := p.pos
	for i < len(buf) && isWordByte(buf[i]) {
		i++
	}
	p.pos = i
	if i >= len(buf) && !eof {
		return jNeed, false
	}
	p.inWord = false
	w := string(buf[p.wordStart:i])
	if p.state == jsKeyOrClose || p.state == jsKey {
		if !isIdentifier(w) {
			return p.fail(p.wordStart, "expected an object key"), false
		}
		f := p.top()
		f.key = w
		f.bareKeys = true
		p.rep.add(rBareKey)
		p.state = jsColon
		return 0, true
	}
	n := p.pool.get()
	*n = jnode{start: p.wordStart, end: i, clean: true}
	switch w {
	case "true", "false":
		n.kind, n.b = jBool, w == "true"
	case "null":
		n.kind = jNull
	case "True", "False":
		n.kind, n.b, n.clean = jBool, w == "True", false
		p.rep.add(rPythonLiteral)
	case "None":
		n.kind, n.clean = jNull, false
		p.rep.add(rPythonLiteral)
	case "NaN", "Infinity", "-Infinity", "+Infinity", "undefined":
		n.kind, n.clean = jNull, false
		p.rep.add(rNonFinite)
	default:
		num, ok, exact := parseNumberWord(w)
		if !ok {
			return p.fail(p.wordStart, "unexpected word "+strconv.Quote(clip(w, 20))), false
		}
		n.kind, n.s = jNumber, num
		if !exact {
			n.clean = false
			p.rep.add(rNumber)
		}
	}
	return p.valueDone(n)
}

func (p *jparser) scanComment(buf []byte, eof bool) (jstatus, bool) {
	i := p.pos
	if p.comment == 1 {
		for i < len(buf) && buf[i] != '\n' {
			i++
		}
		if i < len(buf) {
			p.comment = 0
			p.pos = i + 1
			return 0, true
		}
	} else {
		for i+1 < len(buf) && !(buf[i] == '*' && buf[i+1] == '/') {
			i++
		}
		if i+1 < len(buf) {
			p.comment = 0
			p.pos = i + 2
			return 0, true
		}
	}
	p.pos = i
	if eof {
		if p.comment == 1 {
			p.comment = 0
			p.pos = len(buf)
			return 0, true
		}
		p.truncated = true
		return p.fail(i, "the JSON ends inside a comment"), false
	}
	return jNeed, false
}

func isIdentifier(w string) bool {
	if w == "" || !isIdentStart(w[0]) {
		return false
	}
	for i := 1; i < len(w); i++ {
		c := w[i]
		if !isIdentStart(c) && !(c >= '0' && c <= '9') && c != '-' {
			return false
		}
	}
	return true
}

// parseNumberWord reads a number written by a model. exact reports that w is
// already a JSON number; otherwise num is its JSON form.
func parseNumberWord(w string) (num string, ok, exact bool) {
	if isJSONNumber(w) {
		return w, true, true
	}
	s := w
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		v, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return "", false, false
		}
		out := strconv.FormatUint(v, 10)
		if neg {
			out = "-" + out
		}
		return out, true, false
	}
	if s == "" || !(s[0] >= '0' && s[0] <= '9' || s[0] == '.') {
		return "", false, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", false, false
	}
	if neg {
		f = -f
	}
	out := strconv.FormatFloat(f, 'g', -1, 64)
	if !isJSONNumber(out) {
		return "", false, false
	}
	return out, true, false
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return false
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// parseLenient reads one whole lenient JSON value from s, allowing only
// whitespace (and stray closing brackets, a common slip) after it.
func parseLenient(s []byte) (*jnode, *repairSet, error) {
	i := 0
	for i < len(s) && isWS(s[i]) {
		i++
	}
	p := newJParser(i, false)
	p.trackClosed = false
	switch p.feed(s, true) {
	case jFail:
		return nil, nil, &SyntaxError{Offset: p.failPos, Msg: p.failMsg, Truncated: p.truncated}
	}
	j := p.end
	extra := false
	for j < len(s) {
		c := s[j]
		switch {
		case isWS(c):
		case c == '}' || c == ']':
			extra = true
		default:
			return nil, nil, &SyntaxError{Offset: j, Msg: "unexpected text after the JSON value"}
		}
		j++
	}
	if extra {
		p.rep.add(rExtraClosers)
		p.root.clean = false
	}
	return p.root, &p.rep, nil
}

// SyntaxError reports JSON that could not be read even leniently.
type SyntaxError struct {
	Offset int // byte offset of the problem
	Msg    string
	// Truncated reports that the text ends before the value is complete.
	Truncated bool
}

func (e *SyntaxError) Error() string {
	return "invalid JSON at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// ErrNotJSON is returned by [RepairJSON] for input with no JSON value.
var ErrNotJSON = errors.New("no JSON value")

// RepairJSON returns s as valid JSON, with the repairs it made. Valid JSON is
// returned unchanged, byte for byte. Otherwise s is read leniently (see the
// package documentation) and written back compactly. JSON cut off before its
// end is an error, never completed by guesswork.
func RepairJSON(s []byte) (out []byte, repairs []string, err error) {
	if json.Valid(s) {
		return s, nil, nil
	}
	trimmed := 0
	for trimmed < len(s) && isWS(s[trimmed]) {
		trimmed++
	}
	if trimmed == len(s) {
		return nil, nil, ErrNotJSON
	}
	n, rep, err := parseLenient(s)
	if err != nil {
		return nil, nil, err
	}
	return appendJSON(nil, n, s), rep.strings(), nil
}
