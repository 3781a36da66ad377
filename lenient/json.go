// Package lenient reads the JSON that language models write: valid JSON byte
// for byte, and the usual slips repaired and recorded (single quotes, Python
// literals, comments, trailing or missing commas, bare keys, raw newlines and
// stray quotes in strings, missing closing brackets). Its [Reader] is
// incremental, so a streamed reply is read once and decides exactly as the
// whole text would; [RepairJSON] is the one-call form. [Python] reads Python
// literals and pythonic call lists ([f(a=1)]) into the same [Node] tree, and
// [ParseLiteral] takes either.
//
// It imports only the standard library: the dialect and schema layers and
// the protocol package build on it.
package lenient

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
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

// MaxDepth bounds the nesting of containers; deeper input is rejected.
const MaxDepth = 128

// quoteLookahead bounds how far past a quote the reader looks to decide
// whether the quote ends its string.
const quoteLookahead = 256

type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	}
	return "object"
}

// Node is a JSON value with the byte span it came from. Objects keep their
// keys in order.
type Node struct {
	Kind       Kind
	Start, End int // span in the source; meaningful only when clean
	Str        string
	Bool       bool
	Keys       []string
	Kids       []*Node
	// Clean reports that source[start:end] is valid JSON for this value
	// exactly: no repair, coercion or edit touched it.
	Clean bool
	// lazy is a long string's text as written, escapes and all, when a
	// Reader with Lazy set left it to be decoded when read (see Text).
	lazy []byte
}

// Text returns a string value's text. A long string read lazily is decoded
// now, into a string of its own that the node does not keep: arguments are
// copied into a call as written, and most are never read as text.
func (n *Node) Text() string {
	if n.lazy != nil {
		return owned(decodeEscapes(make([]byte, 0, len(n.lazy)), n.lazy))
	}
	return n.Str
}

// lazyMin is the length from which a Reader with Lazy set leaves a clean
// string undecoded.
const lazyMin = 1024

func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i := len(n.Keys) - 1; i >= 0; i-- {
		if n.Keys[i] == key {
			return n.Kids[i]
		}
	}
	return nil
}

// FirstString returns the value of the first of keys that n holds as a
// string, or "".
func (n *Node) FirstString(keys ...string) string {
	for _, k := range keys {
		if v := n.Get(k); v != nil && v.Kind == String {
			return v.Text()
		}
	}
	return ""
}

// AppendJSON writes n as compact JSON. A clean node is copied from src.
func AppendJSON(dst []byte, n *Node, src []byte) []byte {
	if n.Clean && src != nil && n.End <= len(src) {
		return append(dst, src[n.Start:n.End]...)
	}
	switch n.Kind {
	case Null:
		return append(dst, "null"...)
	case Bool:
		if n.Bool {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		return append(dst, n.Str...)
	case String:
		return AppendString(dst, n.Text())
	case Array:
		dst = append(dst, '[')
		for i, k := range n.Kids {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSON(dst, k, src)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	first := true
	for i, k := range n.Kids {
		if Shadowed(n.Keys, i) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = AppendString(dst, n.Keys[i])
		dst = append(dst, ':')
		dst = AppendJSON(dst, k, src)
	}
	return append(dst, '}')
}

// Shadowed reports whether keys[i] appears again later: the last value of a
// repeated key wins, as in encoding/json.
func Shadowed(keys []string, i int) bool {
	for j := i + 1; j < len(keys); j++ {
		if keys[j] == keys[i] {
			return true
		}
	}
	return false
}

const hexDigits = "0123456789abcdef"

// AppendString writes s as a JSON string, without HTML escaping, with
// invalid UTF-8 replaced by U+FFFD.
func AppendString(dst []byte, s string) []byte {
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
type RepairKind uint8

const (
	rSingleQuotes RepairKind = iota
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
	rTypographicQuotes
	rArtefact
	rUnquotedValue
	RepairCutBrace
	nRepairKinds
)

var repairText = [nRepairKinds]string{
	rSingleQuotes:      "json: single-quoted strings read as JSON strings",
	rUnescapedQuote:    "json: unescaped quote inside a string kept as text",
	rControlChar:       "json: raw control character inside a string escaped",
	rBadEscape:         "json: invalid escape sequence kept as text",
	rPythonLiteral:     "json: Python literal True/False/None read as true/false/null",
	rNonFinite:         "json: NaN/Infinity/undefined read as null",
	rBareKey:           "json: unquoted object key quoted",
	rComment:           "json: comment removed",
	rTrailingComma:     "json: trailing comma removed",
	rMissingComma:      "json: missing comma inserted",
	rNumber:            "json: number rewritten in JSON form",
	rExtraClosers:      "json: extra closing brackets after the value removed",
	rLiteralBackslash:  "json: backslashes in a string with invalid escapes read as written",
	rMissingClosers:    "json: missing closing brackets added before the closing tag",
	rTypographicQuotes: "json: typographic quotes read as JSON quotes",
	rArtefact:          "json: detokenizer artefacts (▁, Ġ, Ċ) between tokens read as white space",
	rUnquotedValue:     "json: unquoted text value read as a string",
	RepairCutBrace:     "json: the reply ends before the call's last closing bracket: the call ends where its arguments end",
}

type Repairs struct {
	seen  uint32
	order []RepairKind
	n     int // every repair, counted, for clean tracking
}

func (r *Repairs) Add(k RepairKind) {
	r.n++
	if r.seen&(1<<k) == 0 {
		r.seen |= 1 << k
		r.order = append(r.order, k)
	}
}

// Merge adds the kinds of repair o recorded that r has not, in o's order.
func (r *Repairs) Merge(o *Repairs) {
	for _, k := range o.order {
		if r.seen&(1<<k) == 0 {
			r.Add(k)
		}
	}
}

func (r *Repairs) Strings() []string {
	if len(r.order) == 0 {
		return nil
	}
	out := make([]string, len(r.order))
	for i, k := range r.order {
		out[i] = repairText[k]
	}
	return out
}

type Status uint8

const (
	Need Status = iota // more input is needed to decide
	Done               // the value is complete
	Fail               // the input is not a value
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
	node     *Node
	bareKeys bool
	key      string
	nrep     int
}

// Reader reads one lenient JSON value incrementally. Positions are indices
// into the buffer passed to feed, which may grow between calls but never
// changes its existing bytes.
type Reader struct {
	// bare marks a value found in prose: anything doubtful rejects it at once,
	// so prose is released quickly and only call-like JSON is held back.
	bare bool

	Pos   int
	state jstate
	stack []jframe
	Root  *Node
	End   int

	// string in progress
	inStr    bool
	quote    byte
	typo     byte  // the string opened with a typographic quote: '"' for “, '\'' for ‘
	qlen     uint8 // the opening quote's length in bytes
	isKey    bool
	strStart int
	strRep   int
	esc      bool // the string has escapes to decode
	literal  bool // the string has a backslash that escapes nothing

	// bare word (number, literal, unquoted key) in progress
	inWord    bool
	wordStart int

	// comment in progress: 1 line, 2 block
	comment int

	Rep     Repairs
	FailPos int
	FailMsg string
	// Truncated reports that the input ended inside the value.
	Truncated bool
	eof       bool // Feed's eof, for the steps that look ahead

	// Closed holds the outermost containers closed so far inside a value
	// that is still open: what is left to salvage when the value fails.
	Closed []*Node
	// trackClosed enables Closed (see KeepClosed).
	trackClosed bool
	pool        *Pool
	// Lazy leaves long clean strings undecoded until Node.Text reads them.
	Lazy bool
	// Closers end the value where it stands, with its containers closed,
	// when one of them appears between tokens or right after a string: the
	// closing tag (or fence, ```) of the call proves the value ended, only a
	// bracket is missing. Each starts with '<' or '`'.
	Closers []string
}

func NewReader(start int, bare bool) *Reader {
	return &Reader{Pos: start, bare: bare, trackClosed: bare}
}

// Reset makes p ready to read a new value at start, keeping its buffers.
func (p *Reader) Reset(start int, bare bool, pool *Pool) *Reader {
	*p = Reader{Pos: start, bare: bare, trackClosed: bare, pool: pool,
		stack: p.stack[:0], Closed: p.Closed[:0], Rep: Repairs{order: p.Rep.order[:0]}}
	return p
}

// Forget empties the reader, as Reset does, and drops what its spare
// capacity still points to: for a reader kept from one reply to the next,
// which must keep nothing of the last.
func (p *Reader) Forget() {
	clear(p.stack[:cap(p.stack)])
	clear(p.Closed[:cap(p.Closed)])
	p.Reset(0, false, nil)
}

// Pool hands out values in blocks, so reading JSON allocates rarely.
// Pool hands out nodes from blocks that double from 8 to 128 nodes: a
// small call does not pay for a large block.
type Pool struct {
	free  []Node
	block int
	// last is the last block made, whole, for Reuse.
	last []Node
}

// Reuse clears the nodes of the pool's last block and hands them out again:
// for a reader of one reply after another, once nothing points to a node
// read before, nor to a node's Keys or Kids. A pool that made one block (a
// reply with a call or two) then reads the next reply without allocating.
func (p *Pool) Reuse() {
	// The nodes handed out of the last block are those before free.
	for i := range p.last[:len(p.last)-len(p.free)] {
		// Each node keeps its own lists' room, emptied: reading the next
		// reply's objects then appends without allocating.
		n := &p.last[i]
		keys, kids := n.Keys, n.Kids
		clear(keys[:cap(keys)])
		clear(kids[:cap(kids)])
		*n = Node{Keys: keys[:0], Kids: kids[:0]}
	}
	p.free = p.last
}

func (p *Pool) get() *Node {
	if p == nil {
		return new(Node)
	}
	if len(p.free) == 0 {
		p.block = min(max(2*p.block, 8), 128)
		p.free = make([]Node, p.block)
		p.last = p.free
	}
	n := &p.free[0]
	p.free = p.free[1:]
	return n
}

// closerAt reports whether one of Closers starts at buf[i], and whether
// more input is needed to tell.
func (p *Reader) closerAt(buf []byte, i int, eof bool) (match, need bool) {
	for _, cl := range p.Closers {
		if match, need = HasPrefixFold(buf, i, cl, eof); match || need {
			return match, need
		}
	}
	return false, false
}

// KeepClosed makes a reader of JSON that is not bare keep Closed, as a bare
// one does.
func (p *Reader) KeepClosed() { p.trackClosed = true }

func (p *Reader) fail(pos int, msg string) Status {
	p.FailPos = pos
	p.FailMsg = msg
	return Fail
}

func IsWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func IsWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '$' || c == '.' || c == '+' || c == '-'
}

func IsIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func (p *Reader) top() *jframe {
	if len(p.stack) == 0 {
		return nil
	}
	return &p.stack[len(p.stack)-1]
}

// Feed advances over buf. eof reports that buf holds the whole input.
func (p *Reader) Feed(buf []byte, eof bool) Status {
	p.eof = eof
	for {
		switch {
		case p.state == jsDone:
			return Done
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
		i := p.Pos
		for i < len(buf) {
			c := buf[i]
			if IsWS(c) {
				i++
				continue
			}
			if c == 0xC4 || c == 0xE2 {
				n, need := Artefact(buf, i, eof)
				if need {
					p.Pos = i
					return Need
				}
				if n > 0 {
					p.Rep.Add(rArtefact)
					i += n
					continue
				}
			}
			break
		}
		p.Pos = i
		if i >= len(buf) {
			if eof {
				p.Truncated = true
				return p.fail(i, "the JSON ends before it is complete")
			}
			return Need
		}
		c := buf[i]
		if (c == '<' || c == '`') && len(p.Closers) > 0 && len(p.stack) > 0 {
			if eof && CutOff(buf, i, p.Closers) {
				return p.autoClose(i) // the closing tag itself is cut off
			}
			if match, need := p.closerAt(buf, i, eof); need {
				return Need
			} else if match {
				return p.autoClose(i)
			}
		}
		if c == '#' && !p.bare && len(p.stack) > 0 {
			// a Python or YAML comment, as models write in JSON
			p.comment = 1
			p.Rep.Add(rComment)
			p.Pos = i + 1
			continue
		}
		if c == '/' {
			if i+1 >= len(buf) {
				if eof {
					return p.fail(i, "unexpected '/'")
				}
				return Need
			}
			switch buf[i+1] {
			case '/':
				p.comment = 1
			case '*':
				p.comment = 2
			default:
				return p.fail(i, "unexpected '/'")
			}
			p.Rep.Add(rComment)
			p.Pos = i + 2
			continue
		}
		if st, ok := p.token(buf, i, c); !ok {
			return st
		}
	}
}

// token handles the byte c at i between tokens.
func (p *Reader) token(buf []byte, i int, c byte) (Status, bool) {
	switch p.state {
	case jsValueOrClose:
		if c == ']' {
			return p.closeContainer(i, Array)
		}
		return p.beginValue(buf, i, c)
	case jsArrayComma:
		if c == ']' {
			p.Rep.Add(rTrailingComma)
			return p.closeContainer(i, Array)
		}
		return p.beginValue(buf, i, c)
	case jsValue:
		return p.beginValue(buf, i, c)
	case jsKeyOrClose, jsKey:
		switch {
		case c == '}':
			if p.state == jsKey {
				p.Rep.Add(rTrailingComma)
			}
			return p.closeContainer(i, Object)
		case c == '"' || c == '\'':
			p.beginString(i, c, true)
			return 0, true
		case c == 0xE2:
			if st, ok := p.typoString(buf, i, true); !ok {
				return st, false
			}
			return 0, true
		case IsIdentStart(c) || c >= '0' && c <= '9':
			p.inWord, p.wordStart, p.Pos = true, i, i+1
			return 0, true
		}
		return p.fail(i, "expected an object key"), false
	case jsColon:
		if c == ':' {
			p.state = jsValue
			p.Pos = i + 1
			return 0, true
		}
		return p.fail(i, "expected ':' after an object key"), false
	case jsCommaOrClose:
		f := p.top()
		switch c {
		case ',':
			if f.node.Kind == Object {
				p.state = jsKey
			} else {
				p.state = jsArrayComma
			}
			p.Pos = i + 1
			return 0, true
		case '}':
			return p.closeContainer(i, Object)
		case ']':
			return p.closeContainer(i, Array)
		}
		if !p.bare && (c == '"' || c == '\'' || c == 0xE2 || c == '{' || c == '[' || c >= '0' && c <= '9' || c == '-' || IsIdentStart(c)) ||
			c == '{' && f.node.Kind == Array && len(f.node.Kids) > 0 && f.node.Kids[len(f.node.Kids)-1].Kind == Object {
			// A missing comma between two values, a common slip; in JSON
			// found in prose, only between objects in a list: [{...} {...}].
			p.Rep.Add(rMissingComma)
			if f.node.Kind == Object {
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

// CutOff reports that buf[i:] is the start of one of pats cut off by the
// end of the input: "</tool_" of "</tool_call>". Nothing may follow it, not
// even white space: a stream decides on "</tool_ " before the input ends.
func CutOff(buf []byte, i int, pats []string) bool {
	if i >= len(buf) {
		return false
	}
	for _, pat := range pats {
		if _, need := HasPrefixFold(buf, i, pat, false); need {
			return true
		}
	}
	return false
}

// CloseAtEnd ends a value that the input cut off just before its outermost
// closing bracket, after a complete member: {"name": "f", "arguments": {...}
// when accept takes the value so closed. It reports whether it did; Root is
// then the value, its bracket added. Otherwise p is as Feed left it.
func (p *Reader) CloseAtEnd(end int, accept func(*Node) bool) bool {
	if !p.Truncated || p.state != jsCommaOrClose || len(p.stack) != 1 || p.inStr || p.inWord || p.comment == 2 {
		return false
	}
	failPos, failMsg, root := p.FailPos, p.FailMsg, p.Root
	p.autoClose(end)
	if accept(p.Root) {
		p.FailPos, p.FailMsg, p.Truncated = 0, "", false
		return true
	}
	p.FailPos, p.FailMsg, p.Root, p.state = failPos, failMsg, root, jsDone
	return false
}

// autoClose closes every open container at i.
func (p *Reader) autoClose(i int) Status {
	if p.state == jsColon || p.state == jsValue {
		return p.fail(i, "an object key without its value")
	}
	p.Rep.Add(rMissingClosers)
	for len(p.stack) > 0 {
		f := p.top()
		n := f.node
		n.End = i
		n.Clean = false
		p.stack = p.stack[:len(p.stack)-1]
		if len(p.stack) == 0 {
			p.Root = n
			break
		}
		pf := p.top()
		if pf.node.Kind == Object {
			pf.node.Keys = append(pf.node.Keys, pf.key)
		}
		pf.node.Kids = append(pf.node.Kids, n)
	}
	p.End = i
	p.Pos = i
	p.state = jsDone
	return Done
}

func (p *Reader) beginValue(buf []byte, i int, c byte) (Status, bool) {
	switch {
	case c == '{' || c == '[':
		if len(p.stack) >= MaxDepth {
			return p.fail(i, "JSON nested too deeply"), false
		}
		n := p.pool.get()
		n.Kind, n.Start = Object, i
		p.state = jsKeyOrClose
		if c == '[' {
			n.Kind = Array
			p.state = jsValueOrClose
		}
		p.stack = append(p.stack, jframe{node: n, nrep: p.Rep.n})
		p.Pos = i + 1
		return 0, true
	case c == '"' || c == '\'':
		p.beginString(i, c, false)
		return 0, true
	case c == 0xE2:
		return p.typoString(buf, i, false)
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' || IsIdentStart(c):
		p.inWord, p.wordStart, p.Pos = true, i, i+1
		return 0, true
	}
	return p.fail(i, "expected a JSON value"), false
}

func (p *Reader) beginString(i int, q byte, key bool) {
	p.inStr, p.quote, p.isKey, p.strStart, p.strRep = true, q, key, i, p.Rep.n
	p.typo, p.qlen = 0, 1
	if q == '\'' {
		p.Rep.Add(rSingleQuotes)
	}
	p.Pos = i + 1
}

// typoString begins a string at a typographic quote (“ or ‘, or their
// closing forms, as a chat interface's smart quotes write them).
func (p *Reader) typoString(buf []byte, i int, key bool) (Status, bool) {
	k, need := TypoQuote(buf, i, p.eof)
	if need {
		p.Pos = i
		return Need, false
	}
	if k == 0 {
		if key {
			return p.fail(i, "expected an object key"), false
		}
		return p.fail(i, "expected a JSON value"), false
	}
	p.beginString(i, k, key)
	p.Rep.Add(rTypographicQuotes)
	p.typo, p.qlen, p.quote = k, 3, 0xE2
	p.Pos = i + 3
	return 0, true
}

// TypoQuote reports a typographic quote at buf[i]: '"' for “ and ”, '\”
// for ‘ and ’, 0 for none; need reports that buf ends inside one.
func TypoQuote(buf []byte, i int, eof bool) (q byte, need bool) {
	if buf[i] != 0xE2 {
		return 0, false
	}
	if i+2 >= len(buf) {
		if eof || i+1 < len(buf) && buf[i+1] != 0x80 {
			return 0, false
		}
		return 0, true
	}
	if buf[i+1] != 0x80 {
		return 0, false
	}
	switch buf[i+2] {
	case 0x9C, 0x9D:
		return '"', false
	case 0x98, 0x99:
		return '\'', false
	}
	return 0, false
}

// Artefact reports a detokenizer artefact that stands for white space at
// buf[i]: SentencePiece's ▁ (U+2581), byte-level BPE's Ġ (U+0120, a space),
// Ċ (U+010A, a line break) and ĉ (U+0109, a tab). n is its length in bytes,
// 0 for none; need reports that buf ends inside one.
func Artefact(buf []byte, i int, eof bool) (n int, need bool) {
	switch buf[i] {
	case 0xC4:
		if i+1 >= len(buf) {
			return 0, !eof
		}
		switch buf[i+1] {
		case 0xA0, 0x8A, 0x89:
			return 2, false
		}
	case 0xE2:
		if i+2 >= len(buf) {
			return 0, !eof && (i+1 >= len(buf) || buf[i+1] == 0x96)
		}
		if buf[i+1] == 0x96 && buf[i+2] == 0x81 {
			return 3, false
		}
	}
	return 0, false
}

func (p *Reader) closeContainer(i int, k Kind) (Status, bool) {
	f := p.top()
	if f == nil || f.node.Kind != k {
		return p.fail(i, "mismatched closing bracket"), false
	}
	n := f.node
	n.End = i + 1
	n.Clean = p.Rep.n == f.nrep
	p.stack = p.stack[:len(p.stack)-1]
	p.Pos = i + 1
	if p.trackClosed && len(p.stack) > 0 {
		// Containers closed inside n are no longer outermost.
		j := len(p.Closed)
		for j > 0 && p.Closed[j-1].Start > n.Start {
			j--
		}
		p.Closed = append(p.Closed[:j], n)
	}
	return p.valueDone(n)
}

func (p *Reader) valueDone(n *Node) (Status, bool) {
	f := p.top()
	if f == nil {
		p.Root = n
		p.End = p.Pos
		p.state = jsDone
		p.Closed = nil
		return Done, false
	}
	if f.node.Kind == Object {
		f.node.Keys = append(f.node.Keys, f.key)
	}
	f.node.Kids = append(f.node.Kids, n)
	p.state = jsCommaOrClose
	return 0, true
}

// scanString advances through a string; ok is false when feed must return st.
// It only finds where the string ends and what it needs repaired; the value
// is decoded once, at the end, into a buffer of its own size.
func (p *Reader) scanString(buf []byte, eof bool) (st Status, ok bool) {
	i := p.Pos
	q := p.quote
	qq := swarOnes * uint64(q)
	for {
		for i < len(buf) {
			if i+8 <= len(buf) && !swarStops(binary.LittleEndian.Uint64(buf[i:]), qq) {
				i += 8 // eight bytes of plain text at once
				continue
			}
			c := buf[i]
			if c == q || c == '\\' || c < 0x20 {
				break
			}
			i++
		}
		if i >= len(buf) {
			p.Pos = i
			if eof {
				p.Truncated = true
				return p.fail(i, "the JSON ends inside a string"), false
			}
			return Need, false
		}
		c := buf[i]
		switch {
		case c == q:
			after := i + 1
			if p.typo != 0 {
				k, need := TypoQuote(buf, i, eof)
				if need {
					p.Pos = i
					return Need, false
				}
				if k != p.typo {
					i++
					continue
				}
				after = i + 3
			}
			switch p.quoteEnds(buf, after, eof) {
			case -1:
				p.Pos = i
				return Need, false
			case 0:
				p.Rep.Add(rUnescapedQuote)
				i = after
				continue
			}
			p.inStr = false
			p.Pos = after
			raw := buf[p.strStart+int(p.qlen) : i]
			if p.Lazy && !p.isKey && !p.literal && len(raw) >= lazyMin && p.Rep.n == p.strRep {
				p.esc = false
				n := p.pool.get()
				*n = Node{Kind: String, Start: p.strStart, End: after, Clean: true, lazy: raw}
				return p.valueDone(n)
			}
			var s string
			switch {
			case p.literal:
				// A backslash that escapes nothing (C:\\Users) says the model
				// did not escape its backslashes: read them all as written.
				p.Rep.Add(rLiteralBackslash)
				s = owned(literalBackslashes(make([]byte, 0, len(raw)), raw))
			case p.esc:
				s = owned(decodeEscapes(make([]byte, 0, len(raw)), raw))
			default:
				s = string(raw)
			}
			p.literal, p.esc = false, false
			if p.isKey {
				p.top().key = s
				p.state = jsColon
				return 0, true
			}
			n := p.pool.get()
			*n = Node{Kind: String, Str: s, Start: p.strStart, End: after, Clean: p.Rep.n == p.strRep}
			return p.valueDone(n)
		case c == '\\':
			if i+1 >= len(buf) {
				p.Pos = i
				if eof {
					p.Truncated = true
					return p.fail(i, "the JSON ends inside a string"), false
				}
				return Need, false
			}
			p.esc = true
			switch buf[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case '\'':
				p.Rep.Add(rBadEscape)
				i += 2
			case 'u':
				_, n, need := readUnicodeEscape(buf, i, eof)
				if need {
					p.Pos = i
					return Need, false
				}
				if n == 0 {
					p.Rep.Add(rBadEscape)
					i += 2
					continue
				}
				i += n
			default:
				p.Rep.Add(rBadEscape)
				p.literal = true
				i++
			}
		default: // raw control character
			if p.bare && (c == '\n' || c == '\r') {
				return p.fail(i, "line break inside a string"), false
			}
			p.Rep.Add(rControlChar)
			i++
		}
	}
}

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// swarStops reports whether any of the eight bytes in x is the quote (qq
// holds it in every byte), a backslash or a control character: the bytes
// that stop a run of string text.
func swarStops(x, qq uint64) bool {
	a := x ^ qq
	b := x ^ (swarOnes * '\\')
	return ((a-swarOnes)&^a|(b-swarOnes)&^b|(x-swarOnes*0x20)&^x)&swarHigh != 0
}

// owned returns b as a string without copying it: b is a buffer made for
// this string and never written again.
func owned(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// decodeEscapes appends raw string text with its escapes decoded to dst, the
// way scanString read them: valid escapes decoded, \' read as ', an invalid
// \u kept as written, anything else kept as it is.
func decodeEscapes(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		k := bytes.IndexByte(raw[i:], '\\')
		if k < 0 {
			return append(dst, raw[i:]...)
		}
		dst = append(dst, raw[i:i+k]...)
		i += k
		if i+1 >= len(raw) {
			return append(dst, '\\')
		}
		switch e := raw[i+1]; {
		case simpleEscapes[e] != 0:
			dst = append(dst, simpleEscapes[e])
			i += 2
		case e == 'u':
			r, n, _ := readUnicodeEscape(raw, i, true)
			if n == 0 {
				dst = append(dst, '\\', 'u')
				i += 2
				continue
			}
			dst = utf8.AppendRune(dst, r)
			i += n
		default:
			dst = append(dst, '\\')
			i++
		}
	}
	return dst
}

// simpleEscapes maps the byte after a backslash to what the escape stands
// for, for the escapes of one byte (JSON's and \', read as ').
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', '\'': '\'', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

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
func (p *Reader) quoteEnds(buf []byte, after int, eof bool) int {
	j, ok := p.skipGap(buf, after)
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
	if c == '<' || c == '`' { // the call's closing tag or fence, its braces missing: {"a": "b"</tool_call>
		if match, need := p.closerAt(buf, j, eof); need {
			return -1
		} else if match {
			return 1
		}
	}
	switch c {
	case ',':
		k, ok := p.skipGap(buf, j+1)
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
		if f.node.Kind == Object {
			if n == '"' || n == '\'' || n == 0xE2 || n == '}' || f.bareKeys && IsIdentStart(n) {
				return 1
			}
			if IsIdentStart(n) {
				return bareKeyAhead(buf, k, eof)
			}
			return 0
		}
		if n == '"' || n == '\'' || n == 0xE2 || n == '{' || n == '[' || n == ']' || n == '-' || n >= '0' && n <= '9' ||
			n == 't' || n == 'f' || n == 'n' || n == 'T' || n == 'F' || n == 'N' {
			return 1
		}
		return 0
	case '}', ']':
		d := depth
		for {
			want := Object
			if c == ']' {
				want = Array
			}
			if p.stack[d-1].node.Kind != want {
				return 0
			}
			d--
			if d == 0 {
				return 1
			}
			var ok bool
			j, ok = p.skipGap(buf, j+1)
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
			case '{':
				if p.stack[d-1].node.Kind == Array {
					return 1 // the next object of a list, its comma missing
				}
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
	for j < len(buf) && j-k < 64 && (IsIdentStart(buf[j]) || buf[j] >= '0' && buf[j] <= '9') {
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

// skipGap skips what may stand between tokens from i: white space,
// comments, detokenizer artefacts. ok is false when there is more of it than
// the lookahead allows; j is len(buf) when buf ends inside it.
func (p *Reader) skipGap(buf []byte, i int) (j int, ok bool) {
	limit := i + quoteLookahead
	for i < len(buf) {
		if i > limit {
			return i, false
		}
		c := buf[i]
		switch {
		case IsWS(c):
			i++
		case c == '/' && i+1 >= len(buf):
			return len(buf), true
		case c == '/' && buf[i+1] == '/' || c == '#' && !p.bare:
			for i < len(buf) && buf[i] != '\n' && i <= limit {
				i++
			}
		case c == '/' && buf[i+1] == '*':
			i += 2
			for i+1 < len(buf) && !(buf[i] == '*' && buf[i+1] == '/') && i <= limit {
				i++
			}
			if i+1 >= len(buf) {
				return len(buf), true
			}
			if i <= limit {
				i += 2
			}
		case c == 0xC4 || c == 0xE2:
			n, need := Artefact(buf, i, false)
			if need {
				return len(buf), true
			}
			if n == 0 {
				return i, true
			}
			i += n
		default:
			return i, true
		}
	}
	return i, true
}

// unquotedValue reads an object's value written as text without quotes,
// from the word that starts it to the end of its line, the next ',', '}',
// ']' or '<' (a closing tag), as the string it means: {path: a//b}.
func (p *Reader) unquotedValue(buf []byte, n *Node, eof bool) (Status, bool) {
	limit := min(len(buf), p.wordStart+maxUnquoted)
	end := bytes.IndexAny(buf[p.wordStart:limit], ",}]<\n\r")
	switch {
	case end >= 0:
		end += p.wordStart
	case limit < len(buf) || limit-p.wordStart >= maxUnquoted:
		return p.fail(p.wordStart, "unexpected word "+strconv.Quote(Clip(string(buf[p.wordStart:limit]), 20))), false
	case !eof:
		p.Pos, p.inWord = p.wordStart, true // read the word again with more input
		return Need, false
	default:
		end = len(buf)
	}
	*n = Node{Kind: String, Str: string(bytes.TrimSpace(buf[p.wordStart:end])), Start: p.wordStart, End: end}
	p.Rep.Add(rUnquotedValue)
	p.Pos = end
	return p.valueDone(n)
}

// maxUnquoted bounds an unquoted value.
const maxUnquoted = 1024

func (p *Reader) scanWord(buf []byte, eof bool) (Status, bool) {
	i := p.Pos
	for i < len(buf) && IsWordByte(buf[i]) {
		i++
	}
	p.Pos = i
	if i >= len(buf) && !eof {
		return Need, false
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
		p.Rep.Add(rBareKey)
		p.state = jsColon
		return 0, true
	}
	n := p.pool.get()
	*n = Node{Start: p.wordStart, End: i, Clean: true}
	switch w {
	case "true", "false":
		n.Kind, n.Bool = Bool, w == "true"
	case "null":
		n.Kind = Null
	case "True", "False":
		n.Kind, n.Bool, n.Clean = Bool, w == "True", false
		p.Rep.Add(rPythonLiteral)
	case "None":
		n.Kind, n.Clean = Null, false
		p.Rep.Add(rPythonLiteral)
	case "NaN", "Infinity", "-Infinity", "+Infinity", "undefined":
		n.Kind, n.Clean = Null, false
		p.Rep.Add(rNonFinite)
	default:
		num, ok, exact := ParseNumberWord(w)
		if !ok {
			if f := p.top(); f != nil && f.node.Kind == Object && !p.bare {
				// {"path": src/main.go}: text up to the value's end
				return p.unquotedValue(buf, n, eof)
			}
			return p.fail(p.wordStart, "unexpected word "+strconv.Quote(Clip(w, 20))), false
		}
		n.Kind, n.Str = Number, num
		if !exact {
			n.Clean = false
			p.Rep.Add(rNumber)
		}
	}
	return p.valueDone(n)
}

func (p *Reader) scanComment(buf []byte, eof bool) (Status, bool) {
	i := p.Pos
	if p.comment == 1 {
		for i < len(buf) && buf[i] != '\n' {
			i++
		}
		if i < len(buf) {
			p.comment = 0
			p.Pos = i + 1
			return 0, true
		}
	} else {
		for i+1 < len(buf) && !(buf[i] == '*' && buf[i+1] == '/') {
			i++
		}
		if i+1 < len(buf) {
			p.comment = 0
			p.Pos = i + 2
			return 0, true
		}
	}
	p.Pos = i
	if eof {
		if p.comment == 1 {
			p.comment = 0
			p.Pos = len(buf)
			return 0, true
		}
		p.Truncated = true
		return p.fail(i, "the JSON ends inside a comment"), false
	}
	return Need, false
}

func isIdentifier(w string) bool {
	if w == "" || !IsIdentStart(w[0]) {
		return false
	}
	for i := 1; i < len(w); i++ {
		c := w[i]
		if !IsIdentStart(c) && !(c >= '0' && c <= '9') && c != '-' {
			return false
		}
	}
	return true
}

// ParseNumberWord reads a number written by a model. exact reports that w is
// already a JSON number; otherwise num is its JSON form.
func ParseNumberWord(w string) (num string, ok, exact bool) {
	if IsNumber(w) {
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
	if !IsNumber(out) {
		return "", false, false
	}
	return out, true, false
}

// IsNumber reports whether s is a number in JSON's grammar.
func IsNumber(s string) bool {
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

func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Parse reads one whole lenient JSON value from s, allowing only
// whitespace (and stray closing brackets, a common slip) after it.
func Parse(s []byte) (*Node, *Repairs, error) {
	i := 0
	for i < len(s) && IsWS(s[i]) {
		i++
	}
	p := NewReader(i, false)
	p.trackClosed = false
	switch p.Feed(s, true) {
	case Fail:
		return nil, nil, &SyntaxError{Offset: p.FailPos, Msg: p.FailMsg, Truncated: p.Truncated}
	}
	j := p.End
	extra := false
	for j < len(s) {
		c := s[j]
		switch {
		case IsWS(c):
		case c == '}' || c == ']':
			extra = true
		default:
			return nil, nil, &SyntaxError{Offset: j, Msg: "unexpected text after the JSON value"}
		}
		j++
	}
	if extra {
		p.Rep.Add(rExtraClosers)
		p.Root.Clean = false
	}
	return p.Root, &p.Rep, nil
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
	for trimmed < len(s) && IsWS(s[trimmed]) {
		trimmed++
	}
	if trimmed == len(s) {
		return nil, nil, ErrNotJSON
	}
	n, rep, err := Parse(s)
	if err != nil {
		return nil, nil, err
	}
	return AppendJSON(nil, n, s), rep.Strings(), nil
}

// lowerASCII maps each byte to its ASCII lower case.
var lowerASCII = func() (t [256]byte) {
	for i := range t {
		c := byte(i)
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		t[i] = c
	}
	return t
}()

// HasSuffixFold reports whether b ends with s (in lower case), in any
// letter case.
func HasSuffixFold(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	ok, _ := HasPrefixFold(b, len(b)-len(s), s, true)
	return ok
}

// HasPrefixFold reports whether buf[i:] starts with pat (pat in lower case),
// and whether more input is needed to tell.
func HasPrefixFold(buf []byte, i int, pat string, eof bool) (match, need bool) {
	n := len(pat)
	avail := len(buf) - i
	if avail < n {
		for k := 0; k < avail; k++ {
			if lowerASCII[buf[i+k]] != pat[k] {
				return false, false
			}
		}
		return false, !eof
	}
	for k := 0; k < n; k++ {
		if lowerASCII[buf[i+k]] != pat[k] {
			return false, false
		}
	}
	return true, false
}

// IsIntegral reports whether a JSON number is a whole number, without
// expanding it: "1e100000" is whole, and costs nothing to say so.
func IsIntegral(num string) bool {
	if !strings.ContainsAny(num, ".eE") {
		return true
	}
	mant, exp, _ := strings.Cut(strings.ToLower(num), "e")
	e := 0
	if exp != "" {
		v, err := strconv.Atoi(exp)
		if err != nil {
			if len(strings.TrimLeft(exp, "+-0")) > 18 {
				return !strings.HasPrefix(exp, "-") // too big to count: whole if positive
			}
			return false
		}
		e = v
	}
	ip, frac, _ := strings.Cut(mant, ".")
	frac = strings.TrimRight(frac, "0")
	if strings.Trim(ip, "+-0") == "" && frac == "" {
		return true // zero
	}
	return len(frac) <= e
}

// Unwrap reads a JSON object or array that a model wrote inside a string
// (arguments encoded as a JSON string). Only a string
// that is, whole, a JSON object (or array) is unwrapped: "{hello world}" and
// "{...} and more" stay strings.
func Unwrap(s string) (n *Node, src []byte, ok bool) {
	t := strings.TrimSpace(s)
	if t == "" || t[0] != '{' && t[0] != '[' {
		return nil, nil, false
	}
	src = []byte(s)
	n, _, err := Parse(src)
	if err != nil || n.Kind != Object && n.Kind != Array {
		return nil, nil, false
	}
	return n, src, true
}

// AppendQuoted appends s as a JSON string for a prompt. It leaves "<", ">" and "&" as they
// are and escapes the line separators U+2028 and U+2029; invalid UTF-8 becomes
// U+FFFD.
func AppendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, `\n`...)
			case c == '\r':
				dst = append(dst, `\r`...)
			case c == '\t':
				dst = append(dst, `\t`...)
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028':
			dst = append(dst, `\u2028`...)
		case r == '\u2029':
			dst = append(dst, `\u2029`...)
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
