// Package jsonfast reads and writes the JSON of the wire types on the
// gateway's hot path (a client's request, an upstream's stream chunks, the
// events the gateway writes) in one pass, without reflection. encoding/json
// reads a value twice (once to check it, once to decode it, through
// reflection) and checks again whatever a MarshalJSON method writes: for a
// request through the gateway that was the largest part of its cost.
//
// It never disagrees with encoding/json. A Reader reports false for
// anything it does not read exactly as encoding/json would (a key in
// another case or given twice, an escape in a key, a number where a string
// goes, nesting past 1,000 levels): its caller then decodes the whole value
// with encoding/json, which gives its answer or its error. The writers
// write byte for byte what encoding/json writes. The wire packages' fuzz
// tests hold each decoder and writer built on them to encoding/json's
// result.
package jsonfast

import (
	"encoding/json"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Unmarshal reads data into v as json.Unmarshal(data, v) does: with fast,
// a one-pass decoder built on Reader, when it reads all of data, else with
// encoding/json, which gives its answer or its error. v is zeroed before
// each, so that nothing the fast decoder read is left when it gives up.
func Unmarshal[T any](data []byte, v *T, fast func([]byte, *T) bool) error {
	var zero T
	*v = zero
	if fast(data, v) {
		return nil
	}
	*v = zero
	return json.Unmarshal(data, v)
}

// Reader reads JSON text from a byte slice, one value after another, each
// checked as encoding/json checks it. Its methods report false, with the
// Reader in any state, at anything they do not read as encoding/json
// would; the caller then gives the text to encoding/json.
type Reader struct {
	b     []byte
	i     int
	depth int
	// spaced: space was skipped between tokens (AppendCompact copies a
	// value read without any as it is).
	spaced bool
}

// NewReader returns a Reader of b.
func NewReader(b []byte) Reader { return Reader{b: b} }

// maxDepth is the deepest nesting a Reader reads; deeper text is left to
// encoding/json (whose own limit is 10,000).
const maxDepth = 1000

func (r *Reader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
			r.spaced = true
		default:
			return
		}
	}
}

// Peek returns the first byte of the next value, after space; 0 at the end.
func (r *Reader) Peek() byte {
	r.space()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// End reports whether only space is left.
func (r *Reader) End() bool {
	r.space()
	return r.i == len(r.b)
}

// byte reads the byte c, after space.
func (r *Reader) byte(c byte) bool {
	r.space()
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// literal reads the literal s (true, false or null), which must not run on
// into other letters: the byte after it is read by whatever comes next,
// which refuses a letter.
func (r *Reader) literal(s string) bool {
	r.space()
	if len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	return false
}

// Null reads null if it is next, and reports whether it was.
func (r *Reader) Null() bool { return r.literal("null") }

// Object reads an object, giving each key (without its quotes; a key with
// an escape is refused) to member, which must read the member's value.
// Keys are not checked for duplicates: Struct does that.
func (r *Reader) Object(member func(key []byte) bool) bool {
	if !r.byte('{') {
		return false
	}
	if r.depth++; r.depth > maxDepth {
		return false
	}
	if r.byte('}') {
		r.depth--
		return true
	}
	for {
		r.space()
		key, ok := r.key()
		if !ok || !r.byte(':') || !member(key) {
			return false
		}
		if r.byte('}') {
			r.depth--
			return true
		}
		if !r.byte(',') {
			return false
		}
	}
}

// key reads a key without escapes and returns its text.
func (r *Reader) key() ([]byte, bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false
	}
	for j := r.i + 1; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			k := r.b[r.i+1 : j]
			r.i = j + 1
			return k, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// skipObject reads an object, checking it, any key allowed.
func (r *Reader) skipObject() bool {
	r.i++ // '{'
	if r.depth++; r.depth > maxDepth {
		return false
	}
	if r.byte('}') {
		r.depth--
		return true
	}
	for {
		if _, _, ok := r.str(); !ok || !r.byte(':') || !r.Skip() {
			return false
		}
		if r.byte('}') {
			r.depth--
			return true
		}
		if !r.byte(',') {
			return false
		}
	}
}

// Array reads an array, calling elem to read each element.
func (r *Reader) Array(elem func() bool) bool {
	if !r.byte('[') {
		return false
	}
	if r.depth++; r.depth > maxDepth {
		return false
	}
	if r.byte(']') {
		r.depth--
		return true
	}
	for {
		if !elem() {
			return false
		}
		if r.byte(']') {
			r.depth--
			return true
		}
		if !r.byte(',') {
			return false
		}
	}
}

// Fields are the JSON names of a struct's fields (at most 64), in the
// order a decoder numbers them.
type Fields struct {
	names  []string
	folded []string
}

// NewFields returns the fields named names.
func NewFields(names ...string) *Fields {
	if len(names) > 64 {
		panic("jsonfast: more than 64 fields")
	}
	f := &Fields{names: names}
	for _, n := range names {
		f.folded = append(f.folded, string(fold(nil, []byte(n))))
	}
	return f
}

// lookup returns the number of the field key names exactly, or -1 when it
// names none; ok is false when encoding/json would match it to a field
// regardless of case, which this package leaves to encoding/json.
func (f *Fields) lookup(key []byte) (int, bool) {
	for i, n := range f.names {
		if string(key) == n {
			return i, true
		}
	}
	var buf [64]byte
	k := fold(buf[:0], key)
	for _, n := range f.folded {
		if string(k) == n {
			return -1, false
		}
	}
	return -1, true
}

// fold appends key folded as encoding/json folds the keys it matches to
// field names regardless of case.
func fold(out, key []byte) []byte {
	for i := 0; i < len(key); {
		if c := key[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		c, n := utf8.DecodeRune(key[i:])
		out = utf8.AppendRune(out, unicode.ToUpper(unicode.ToLower(c)))
		i += n
	}
	return out
}

// Struct reads an object into a struct whose fields are f: member reads
// the value of the field numbered i. A member that names no field is
// skipped, as encoding/json skips it; a field given twice, or a key that
// names one in another case, is refused.
func (r *Reader) Struct(f *Fields, member func(i int) bool) bool {
	return r.StructOther(f, member, nil)
}

// StructOther reads an object as Struct does, and gives other (nil: none)
// the key and the value's text (slices of the Reader's bytes) of each
// member that names no field, in order, which Struct skips.
func (r *Reader) StructOther(f *Fields, member func(i int) bool, other func(key, value []byte)) bool {
	var seen uint64
	return r.Object(func(key []byte) bool {
		i, ok := f.lookup(key)
		switch {
		case !ok:
			return false
		case i < 0:
			if other != nil {
				v, ok := r.Raw()
				if ok {
					other(key, v)
				}
				return ok
			}
			return r.Skip()
		case seen&(1<<i) != 0:
			return false
		}
		seen |= 1 << i
		return member(i)
	})
}

// Skip reads a value, checking it, and drops it.
func (r *Reader) Skip() bool {
	_, ok := r.Raw()
	return ok
}

// Raw reads a value, checking it, and returns its text: a slice of the
// Reader's bytes.
func (r *Reader) Raw() ([]byte, bool) {
	r.space()
	start := r.i
	if r.i >= len(r.b) {
		return nil, false
	}
	var ok bool
	switch c := r.b[r.i]; {
	case c == '{':
		ok = r.skipObject()
	case c == '[':
		ok = r.Array(r.Skip)
	case c == '"':
		_, _, ok = r.str()
	case c == 't':
		ok = r.literal("true")
	case c == 'f':
		ok = r.literal("false")
	case c == 'n':
		ok = r.literal("null")
	default:
		_, ok = r.number()
	}
	if !ok {
		return nil, false
	}
	return r.b[start:r.i], true
}

// number reads a number as JSON writes one and returns its text.
func (r *Reader) number() ([]byte, bool) {
	r.space()
	b, i := r.b, r.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	r.i = i
	return b[start:i], true
}

// Int reads a number into an int, as encoding/json does: one with a
// fraction or an exponent, or past an int's range, is refused.
func (r *Reader) Int(v *int) bool {
	var n int64
	if !r.Int64(&n) {
		return false
	}
	*v = int(n)
	return int64(*v) == n
}

// Int64 reads a number into an int64, as encoding/json does.
func (r *Reader) Int64(v *int64) bool {
	num, ok := r.number()
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		return false
	}
	*v = n
	return true
}

// Float reads a number into a float64, as encoding/json does: one past a
// float64's range is refused.
func (r *Reader) Float(v *float64) bool {
	num, ok := r.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return false
	}
	*v = f
	return true
}

// Bool reads true or false.
func (r *Reader) Bool(v *bool) bool {
	switch {
	case r.literal("true"):
		*v = true
	case r.literal("false"):
		*v = false
	default:
		return false
	}
	return true
}

// String reads a string into s, its escapes decoded and invalid UTF-8
// replaced as encoding/json does.
func (r *Reader) String(s *string) bool {
	text, raw, ok := r.str()
	if !ok {
		return false
	}
	if raw {
		*s = string(text)
	} else {
		*s = string(unquote(text))
	}
	return true
}

// StringLike reads a string into s as String does, and when it is like,
// sets s to like without a copy: for the strings a stream repeats.
func (r *Reader) StringLike(s *string, like string) bool {
	text, raw, ok := r.str()
	switch {
	case !ok:
		return false
	case !raw:
		text = unquote(text)
	}
	if string(text) == like {
		*s = like
	} else {
		*s = string(text)
	}
	return true
}

// str reads a string, checking it as encoding/json does (no control
// characters, valid escapes). It returns the text between the quotes, and
// raw true when that text is the string itself: no escapes, valid UTF-8.
func (r *Reader) str() (text []byte, raw bool, ok bool) {
	r.space()
	b := r.b
	if r.i >= len(b) || b[r.i] != '"' {
		return nil, false, false
	}
	start := r.i + 1
	i := start
	ascii := true
	for {
		// Eight bytes at a time while none of them stops a run of plain
		// text: a quote, a backslash, a control character.
		for i+8 <= len(b) {
			x := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
				uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
			if stops(x) {
				break
			}
			if x&swarHigh != 0 {
				ascii = false
			}
			i += 8
		}
		if i >= len(b) {
			return nil, false, false
		}
		switch c := b[i]; {
		case c == '"':
			r.i = i + 1
			text = b[start:i]
			return text, ascii || utf8.Valid(text), true
		case c == '\\':
			// Escapes: checked here, decoded by unquote.
			i++
			for {
				if i >= len(b) {
					return nil, false, false
				}
				switch b[i] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i++
				case 'u':
					if _, ok := hex4(b, i+1); !ok {
						return nil, false, false
					}
					i += 5
				default:
					return nil, false, false
				}
				// The rest of the string: plain bytes and more escapes.
				for i < len(b) && b[i] != '"' && b[i] != '\\' {
					if b[i] < 0x20 {
						return nil, false, false
					}
					i++
				}
				if i >= len(b) {
					return nil, false, false
				}
				if b[i] == '"' {
					r.i = i + 1
					return b[start:i], false, true
				}
				i++
			}
		case c < 0x20:
			return nil, false, false
		case c >= utf8.RuneSelf:
			ascii = false
			i++
		default:
			i++
		}
	}
}

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// stops reports whether any of the eight bytes in x is a quote, a
// backslash or a control character.
func stops(x uint64) bool {
	q := x ^ (swarOnes * '"')
	s := x ^ (swarOnes * '\\')
	return ((q-swarOnes)&^q|(s-swarOnes)&^s|(x-swarOnes*0x20)&^x)&swarHigh != 0
}

// unquote decodes the text of a string that str checked: escapes, and
// invalid UTF-8 replaced by U+FFFD, as encoding/json decodes them.
func unquote(s []byte) []byte {
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			i++
			switch s[i] {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				c, _ := hex4(s, i+1)
				i += 4
				if utf16.IsSurrogate(c) {
					c2, ok := rune(-1), false
					if i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
						c2, ok = hex4(s, i+3)
					}
					if dec := utf16.DecodeRune(c, c2); ok && dec != utf8.RuneError {
						c = dec
						i += 6
					} else {
						c = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, c)
			default: // '"', '\\', '/'
				out = append(out, s[i])
			}
			i++
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && s[j] != '\\' {
				j++
			}
			out = append(out, s[i:j]...)
			i = j
		default:
			c, n := utf8.DecodeRune(s[i:])
			if c == utf8.RuneError && n == 1 {
				out = append(out, "\uFFFD"...)
			} else {
				out = append(out, s[i:i+n]...)
			}
			i += n
		}
	}
	return out
}

// hex4 reads the four hex digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// The readers of a struct's fields, as encoding/json reads a value into a
// field: null leaves a string, a number or a bool as it was, and makes a
// pointer or a slice nil.

// StringField reads a string, or null, into a string field.
func (r *Reader) StringField(s *string) bool { return r.Null() || r.String(s) }

// BoolField reads a bool, or null, into a bool field.
func (r *Reader) BoolField(b *bool) bool { return r.Null() || r.Bool(b) }

// IntField reads a number, or null, into an int field.
func (r *Reader) IntField(n *int) bool { return r.Null() || r.Int(n) }

// Int64Field reads a number, or null, into an int64 field.
func (r *Reader) Int64Field(n *int64) bool { return r.Null() || r.Int64(n) }

// StringPtr reads a string, or null, into a *string field.
func (r *Reader) StringPtr(p **string) bool { return Ptr(r, p, (*Reader).String) }

// IntPtr reads a number, or null, into a *int field.
func (r *Reader) IntPtr(p **int) bool { return Ptr(r, p, (*Reader).Int) }

// FloatPtr reads a number, or null, into a *float64 field.
func (r *Reader) FloatPtr(p **float64) bool { return Ptr(r, p, (*Reader).Float) }

// BoolPtr reads a bool, or null, into a *bool field.
func (r *Reader) BoolPtr(p **bool) bool { return Ptr(r, p, (*Reader).Bool) }

// RawField reads any value as it is written into a json.RawMessage field
// (null as "null", as json.RawMessage keeps it): a slice of the Reader's
// bytes, not a copy.
func (r *Reader) RawField(m *json.RawMessage) bool {
	raw, ok := r.Raw()
	*m = raw
	return ok
}

// Ptr reads null as a nil pointer, and any other value into a new T with
// read.
func Ptr[T any](r *Reader, p **T, read func(*Reader, *T) bool) bool {
	if r.Null() {
		*p = nil
		return true
	}
	*p = new(T)
	return read(r, *p)
}

// Slice reads null as a nil slice, and an array into a slice (an empty one
// for []), each element with elem; a null element is left zero.
func Slice[T any](r *Reader, s *[]T, elem func(*Reader, *T) bool) bool {
	if r.Null() {
		*s = nil
		return true
	}
	*s = []T{}
	return r.Array(func() bool {
		*s = append(*s, *new(T))
		if r.Null() {
			return true
		}
		return elem(r, &(*s)[len(*s)-1])
	})
}

// StringOrSlice reads the union the APIs write content as: a string into
// s, or an array into xs (as Slice does). Any other value is false, left
// to encoding/json, whose error it is.
func StringOrSlice[T any](r *Reader, s *string, xs *[]T, elem func(*Reader, *T) bool) bool {
	switch r.Peek() {
	case '"':
		return r.String(s)
	case '[':
		return Slice(r, xs, elem)
	}
	return false
}
