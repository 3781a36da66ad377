package jsonfast

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as encoding/json writes a string: quoted, with
// \" \\ \b \f \n \r \t, other control characters as \u00XX, invalid UTF-8
// as \ufffd, U+2028 and U+2029 escaped, and, with escapeHTML, <, > and & as
// \u003c, \u003e and \u0026.
func AppendString[S ~string | ~[]byte](dst []byte, s S, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while all of them are written as they are.
		for i+8 <= len(s) {
			x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			if x&swarHigh != 0 || stops(x) || escapeHTML && htmlIn(x) {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		n := min(len(s)-i, utf8.UTFMax)
		r, size := utf8.DecodeRuneInString(string(s[i : i+n]))
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
		default:
			i += size
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// htmlIn reports whether any of the eight bytes in x is <, > or &.
func htmlIn(x uint64) bool {
	a := x ^ (swarOnes * '<')
	b := x ^ (swarOnes * '>')
	c := x ^ (swarOnes * '&')
	return ((a-swarOnes)&^a|(b-swarOnes)&^b|(c-swarOnes)&^c)&swarHigh != 0
}

// AppendCompact appends the JSON value raw as encoding/json writes a
// json.RawMessage: checked, without the space between its tokens, and, with
// escapeHTML, <, >, &, U+2028 and U+2029 in it escaped. It reports false,
// appending nothing, when raw is not one valid JSON value (encoding/json
// fails then).
func AppendCompact(dst, raw []byte, escapeHTML bool) ([]byte, bool) {
	r := NewReader(raw)
	if !r.Skip() || !r.End() {
		return dst, false
	}
	if !r.spaced && !escapeHTML {
		// Already compact, as clients send JSON and as the writers here
		// write it: nothing to take out.
		return append(dst, raw...), true
	}
	in, esc := false, false
	start := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if escapeHTML {
			if c == '<' || c == '>' || c == '&' {
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				start = i + 1
			} else if c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8 {
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
				start = i + 3
				i += 2
				continue
			}
		}
		switch {
		case in:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
		case c == '"':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...), true
}

// AppendFloat appends f as encoding/json writes a float64; it reports false
// for NaN and the infinities, which encoding/json refuses.
func AppendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 as e-9, as encoding/json writes it.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// Writer appends JSON to B as encoding/json writes it: json.Marshal with
// EscapeHTML, an Encoder with SetEscapeHTML(false) without it. A wire
// type's AppendJSON method writes its fields with it, in the order and
// with the omissions its struct tags say. Once a value encoding/json
// refuses is written, Done reports false.
type Writer struct {
	B          []byte
	EscapeHTML bool
	failed     bool
}

// NewWriter returns a Writer that appends to dst.
func NewWriter(dst []byte, escapeHTML bool) Writer { return Writer{B: dst, EscapeHTML: escapeHTML} }

// Done returns what was written, or dst and false when a value was one
// encoding/json refuses (or Fail was called).
func (w *Writer) Done(dst []byte) ([]byte, bool) {
	if w.failed {
		return dst, false
	}
	return w.B, true
}

// Fail makes Done report false: the value is left to encoding/json.
func (w *Writer) Fail() { w.failed = true }

// Raw appends JSON text as it is: keys, punctuation, constants.
func (w *Writer) Raw(s string) { w.B = append(w.B, s...) }

// String appends a string.
func (w *Writer) String(s string) { w.B = AppendString(w.B, s, w.EscapeHTML) }

// StringPtr appends a string, or null for nil.
func (w *Writer) StringPtr(s *string) {
	if s == nil {
		w.Raw("null")
		return
	}
	w.String(*s)
}

// Int appends an integer.
func (w *Writer) Int(n int64) { w.B = strconv.AppendInt(w.B, n, 10) }

// Bool appends true or false.
func (w *Writer) Bool(b bool) { w.B = strconv.AppendBool(w.B, b) }

// Float appends a float64; NaN and the infinities fail.
func (w *Writer) Float(f float64) {
	var ok bool
	if w.B, ok = AppendFloat(w.B, f); !ok {
		w.failed = true
	}
}

// FloatPtr appends a float64, or null for nil.
func (w *Writer) FloatPtr(f *float64) {
	if f == nil {
		w.Raw("null")
		return
	}
	w.Float(*f)
}

// RawMessage appends a json.RawMessage as encoding/json writes one: null
// for nil, its value compacted otherwise; one that is not valid JSON
// (empty included) fails.
func (w *Writer) RawMessage(m json.RawMessage) {
	if m == nil {
		w.Raw("null")
		return
	}
	var ok bool
	if w.B, ok = AppendCompact(w.B, m, w.EscapeHTML); !ok {
		w.failed = true
	}
}

// Array appends s as encoding/json writes a slice: null for nil, else its
// elements in brackets, each written by elem.
func Array[T any](w *Writer, s []T, elem func(*T)) {
	if s == nil {
		w.Raw("null")
		return
	}
	w.Raw("[")
	for i := range s {
		if i > 0 {
			w.Raw(",")
		}
		elem(&s[i])
	}
	w.Raw("]")
}

// Escaped runs f with HTML escaped: what a MarshalJSON method writes
// through json.Marshal is escaped whatever the encoder around it says.
func (w *Writer) Escaped(f func()) {
	html := w.EscapeHTML
	w.EscapeHTML = true
	f()
	w.EscapeHTML = html
}
