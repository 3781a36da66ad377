// Package jsonclip reads JSON values of any size from a stream and gives
// each back compact and no larger than a budget, in memory that does not
// grow with the input: what a client needs to read messages from a server
// it does not trust (an MCP server that answers a call with 300 MiB).
//
// A value that fits is given back whole (compacted). One that does not is
// cut where the budget ends: a long string keeps its beginning (never half
// a character or half an escape), an array or object keeps its first
// elements or members, and every bracket is closed, so the result is
// always valid JSON when the input was. The members a caller names as
// essential (a JSON-RPC message's "jsonrpc", "id", "method", "result" and
// "error") are kept even past the budget, with their values cut to what is
// left.
package jsonclip

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting kept; deeper values are cut to null.
const MaxDepth = 256

// Info says what reading one value found.
type Info struct {
	// Read is how many bytes of input the value took.
	Read int64
	// Cut reports that the value was larger than the budget and was cut.
	Cut bool
	// Members are where the values of a top-level object's essential
	// members are in what Next returned: [start, end) offsets.
	Members map[string][2]int
}

// Reader reads JSON values from a stream, each cut to a budget.
type Reader struct {
	r    *bufio.Reader
	max  int
	keep map[string]bool

	out  bytes.Buffer
	info Info
	// floor, when past max, is the budget of an essential member's value.
	floor int
	// raw holds the first bytes of the value being read, for a caller
	// that passes on what is not JSON.
	raw []byte
}

// essentialRoom is the budget of an essential member's value past the
// budget of the whole.
const essentialRoom = 256

// rawKeep is how many bytes of each value Raw keeps.
const rawKeep = 4 << 10

// NewReader reads values from r, each cut to about max bytes (a cut value
// may pass max by its closing brackets). The top-level members named in
// essential are kept whatever their place.
func NewReader(r io.Reader, max int, essential ...string) *Reader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 16<<10 {
		br = bufio.NewReaderSize(r, 16<<10)
	}
	keep := make(map[string]bool, len(essential))
	for _, k := range essential {
		keep[k] = true
	}
	return &Reader{r: br, max: max, keep: keep}
}

// SyntaxError is input that is not JSON, at a byte offset of its value.
type SyntaxError struct {
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("not JSON at byte %d: %s", e.Offset, e.Msg) }

// Next reads the next value, after any whitespace. It returns io.EOF when
// the input ends before a value starts, a *SyntaxError for input that is
// not JSON, and io.ErrUnexpectedEOF for a value the input cuts short. The
// bytes returned are valid until the next call.
func (r *Reader) Next() ([]byte, Info, error) {
	r.out.Reset()
	r.info = Info{}
	r.raw = r.raw[:0]
	if err := r.skipSpace(); err != nil {
		return nil, r.info, err
	}
	r.info.Read = 0
	if err := r.value(0, true); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, r.info, err
	}
	return r.out.Bytes(), r.info, nil
}

// Raw returns the first bytes of input of the value Next last read (up to
// 4 KiB): what to pass on when it was not JSON.
func (r *Reader) Raw() []byte { return r.raw }

// Buffered is the input read from the stream and not yet used.
func (r *Reader) Buffered() *bufio.Reader { return r.r }

// room is what is left of the budget.
func (r *Reader) room() int { return max(r.max, r.floor) - r.out.Len() }

func (r *Reader) fail(msg string) error {
	return &SyntaxError{Offset: r.info.Read, Msg: msg}
}

// peek returns the next byte without reading it.
func (r *Reader) peek() (byte, error) {
	b, err := r.r.Peek(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// take reads n bytes that peek saw.
func (r *Reader) take(n int) {
	if len(r.raw) < rawKeep {
		b, _ := r.r.Peek(n)
		r.raw = append(r.raw, b[:min(len(b), rawKeep-len(r.raw))]...)
	}
	r.r.Discard(n)
	r.info.Read += int64(n)
}

func (r *Reader) skipSpace() error {
	for {
		b, err := r.peek()
		if err != nil {
			return err
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			r.take(1)
		default:
			return nil
		}
	}
}

// expect reads the byte c, after whitespace.
func (r *Reader) expect(c byte) error {
	if err := r.skipSpace(); err != nil {
		return err
	}
	b, err := r.peek()
	if err != nil {
		return err
	}
	if b != c {
		return r.fail(fmt.Sprintf("%q where %q belongs", b, c))
	}
	r.take(1)
	return nil
}

// value copies one value to out within the budget; top marks the
// top-level value, whose essential members are kept.
func (r *Reader) value(depth int, top bool) error {
	if err := r.skipSpace(); err != nil {
		return err
	}
	b, err := r.peek()
	if err != nil {
		return err
	}
	if depth >= MaxDepth && (b == '{' || b == '[') {
		r.info.Cut = true
		r.out.WriteString("null")
		return r.skip()
	}
	switch {
	case b == '{':
		return r.object(depth, top)
	case b == '[':
		return r.array(depth)
	case b == '"':
		return r.str(r.room())
	case b == '-' || '0' <= b && b <= '9' || b == 't' || b == 'f' || b == 'n':
		return r.literal()
	}
	return r.fail(fmt.Sprintf("invalid character %q looking for beginning of value", b))
}

func (r *Reader) object(depth int, top bool) error {
	r.take(1)
	r.out.WriteByte('{')
	first := true
	for {
		if err := r.skipSpace(); err != nil {
			return err
		}
		b, err := r.peek()
		if err != nil {
			return err
		}
		if b == '}' && first {
			r.take(1)
			r.out.WriteByte('}')
			return nil
		}
		if b != '"' {
			return r.fail(fmt.Sprintf("%q where a member's name belongs", b))
		}
		// The name decides whether the member is kept past the budget:
		// read it aside.
		mark := r.out.Len()
		if !first {
			r.out.WriteByte(',')
		}
		nameAt := r.out.Len()
		if err := r.str(max(r.room(), essentialRoom)); err != nil {
			return err
		}
		name := r.out.Bytes()[nameAt:]
		essential := top && r.keep[string(bytes.Trim(name, `"`))]
		keep := r.room() > 0 || essential
		if err := r.expect(':'); err != nil {
			return err
		}
		if keep {
			r.out.WriteByte(':')
			if essential && r.room() < essentialRoom {
				// Past the budget, an essential member's value gets a
				// little room of its own: an id, a version, a method.
				r.floor = r.out.Len() + essentialRoom
			}
			at := r.out.Len()
			err := r.value(depth+1, false)
			r.floor = 0
			if err != nil {
				return err
			}
			if essential {
				if r.info.Members == nil {
					r.info.Members = map[string][2]int{}
				}
				r.info.Members[string(bytes.Trim(name, `"`))] = [2]int{at, r.out.Len()}
			}
			first = false
		} else {
			r.info.Cut = true
			r.out.Truncate(mark)
			if err := r.skipSpace(); err != nil {
				return err
			}
			if err := r.skip(); err != nil {
				return err
			}
		}
		if err := r.skipSpace(); err != nil {
			return err
		}
		b, err = r.peek()
		if err != nil {
			return err
		}
		r.take(1)
		switch b {
		case ',':
		case '}':
			r.out.WriteByte('}')
			return nil
		default:
			return r.fail(fmt.Sprintf("%q after an object's member", b))
		}
	}
}

func (r *Reader) array(depth int) error {
	r.take(1)
	r.out.WriteByte('[')
	if err := r.skipSpace(); err != nil {
		return err
	}
	if b, err := r.peek(); err != nil {
		return err
	} else if b == ']' {
		r.take(1)
		r.out.WriteByte(']')
		return nil
	}
	kept := 0
	for {
		if r.room() > 0 {
			if kept > 0 {
				r.out.WriteByte(',')
			}
			if err := r.value(depth+1, false); err != nil {
				return err
			}
			kept++
		} else {
			r.info.Cut = true
			if err := r.skipSpace(); err != nil {
				return err
			}
			if err := r.skip(); err != nil {
				return err
			}
		}
		if err := r.skipSpace(); err != nil {
			return err
		}
		b, err := r.peek()
		if err != nil {
			return err
		}
		r.take(1)
		switch b {
		case ',':
		case ']':
			r.out.WriteByte(']')
			return nil
		default:
			return r.fail(fmt.Sprintf("%q after an array's element", b))
		}
	}
}

// literal copies a number, true, false or null.
func (r *Reader) literal() error {
	start := r.out.Len()
	for {
		b, err := r.peek()
		if err == io.EOF && r.out.Len() > start {
			break
		}
		if err != nil {
			return err
		}
		if !(b == '-' || b == '+' || b == '.' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z') {
			break
		}
		if r.out.Len()-start >= 64 {
			return r.fail("a number or literal longer than 64 bytes")
		}
		r.take(1)
		r.out.WriteByte(b)
	}
	lit := r.out.Bytes()[start:]
	switch string(lit) {
	case "true", "false", "null":
		return nil
	}
	if !validNumber(lit) {
		return r.fail(fmt.Sprintf("invalid literal %q", lit))
	}
	return nil
}

// str copies a string, cut to about room bytes (never less than its
// quotes).
func (r *Reader) str(room int) error {
	r.take(1)
	r.out.WriteByte('"')
	limit := r.out.Len() + max(room-2, 0)
	cut := false
	for {
		buf, err := r.r.Peek(max(r.r.Buffered(), 1))
		if len(buf) == 0 {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		i := quoteOrEscape(buf)
		plain := buf
		if i >= 0 {
			plain = buf[:i]
		}
		n := min(len(plain), max(limit-r.out.Len(), 0))
		if cut {
			n = 0
		}
		if hasControl(plain[:n]) {
			// JSON strings hold no raw control characters; past the cut
			// they are dropped unseen, like the rest.
			return r.fail("a control character in a string")
		}
		r.out.Write(plain[:n])
		if n < len(plain) {
			cut = true
		}
		r.take(len(plain))
		if i < 0 {
			continue
		}
		if buf[i] == '"' {
			r.take(1)
			if cut {
				r.info.Cut = true
				r.trimRune()
			}
			r.out.WriteByte('"')
			return nil
		}
		// An escape: \x or \uXXXX, copied whole or not at all.
		esc, err := r.r.Peek(2)
		if err != nil {
			return err
		}
		en := 2
		switch esc[1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			en = 6
			u, err := r.r.Peek(6)
			if err != nil {
				return err
			}
			for _, h := range u[2:] {
				if !isHex(h) {
					return r.fail("a bad \\u escape")
				}
			}
		default:
			return r.fail(fmt.Sprintf("the escape \\%c", esc[1]))
		}
		if !cut && r.out.Len()+en <= limit {
			e, _ := r.r.Peek(en)
			r.out.Write(e)
		} else {
			cut = true
		}
		r.take(en)
	}
}

// trimRune drops a UTF-8 sequence that a cut left unfinished at the end
// of out.
func (r *Reader) trimRune() {
	b := r.out.Bytes()
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				r.out.Truncate(i)
			}
			return
		}
	}
}

// skip reads one value and writes nothing: strings are passed over with
// IndexAny, containers by counting brackets, so that skipping costs no
// memory and little time whatever the value's size or depth.
func (r *Reader) skip() error {
	b, err := r.peek()
	if err != nil {
		return err
	}
	switch {
	case b == '"':
		return r.skipString()
	case b != '{' && b != '[':
		mark := r.out.Len()
		err := r.literal()
		r.out.Truncate(mark)
		return err
	}
	depth := 0
	for {
		buf, err := r.r.Peek(max(r.r.Buffered(), 1))
		if len(buf) == 0 {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		i := bytes.IndexAny(buf, "\"{}[]")
		if i < 0 {
			r.take(len(buf))
			continue
		}
		r.take(i)
		switch buf[i] {
		case '"':
			if err := r.skipString(); err != nil {
				return err
			}
			continue
		case '{', '[':
			depth++
		default:
			depth--
		}
		r.take(1)
		if depth == 0 {
			return nil
		}
	}
}

// skipString reads a string and writes nothing.
func (r *Reader) skipString() error {
	r.take(1)
	for {
		buf, err := r.r.Peek(max(r.r.Buffered(), 1))
		if len(buf) == 0 {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		i := quoteOrEscape(buf)
		if i < 0 {
			r.take(len(buf))
			continue
		}
		r.take(i)
		if buf[i] == '"' {
			r.take(1)
			return nil
		}
		if _, err := r.r.Peek(2); err != nil {
			return err
		}
		r.take(2)
	}
}

// quoteOrEscape is the index of the first '"' or '\\' in b, or -1: two
// IndexByte calls, which run many bytes at a time, where IndexAny would
// look at each.
func quoteOrEscape(b []byte) int {
	q := bytes.IndexByte(b, '"')
	if q < 0 {
		q = len(b)
	}
	if e := bytes.IndexByte(b[:q], '\\'); e >= 0 {
		return e
	}
	if q == len(b) {
		return -1
	}
	return q
}

// hasControl reports whether b holds a control character (below 0x20).
func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validNumber reports whether b is a JSON number.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}
