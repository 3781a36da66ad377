// Package pgtext writes text that PostgreSQL's text type cannot hold (NUL
// bytes, invalid UTF-8) with a reversible escape, and reads it back: what
// ptk's trace store needs, since a run may record both.
package pgtext

import (
	"strings"
	"unicode/utf8"
)

// Esc (U+10FFFD, a private-use code point no text uses) starts an escape,
// followed by one letter:
//
//	Esc '0'        a NUL byte
//	Esc 'x' H H    the byte 0xHH, which was not valid UTF-8 where it stood
//	Esc 'e'        Esc itself
//
// Text without NUL bytes, invalid UTF-8 or Esc, which is nearly all
// text, is written as it is. SQLite holds any bytes and needs none of this.
const Esc = "\U0010FFFD"

const hexDigits = "0123456789abcdef"

// Escape is s as PostgreSQL can hold it.
func Escape(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) && !strings.Contains(s, Esc) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(Esc + "x")
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		case r == 0:
			b.WriteString(Esc + "0")
		case s[i:i+size] == Esc:
			b.WriteString(Esc + "e")
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Unescape is the text Escape made from s. Text that holds Esc but
// was not written by Escape (a store changed by hand) comes back as it is
// where it cannot be read as an escape.
func Unescape(s string) string {
	if !strings.Contains(s, Esc) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.Index(s, Esc)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+len(Esc):]
		switch {
		case strings.HasPrefix(rest, "0"):
			b.WriteByte(0)
			s = rest[1:]
		case strings.HasPrefix(rest, "e"):
			b.WriteString(Esc)
			s = rest[1:]
		case len(rest) >= 3 && rest[0] == 'x' && isHex(rest[1]) && isHex(rest[2]):
			b.WriteByte(unhex(rest[1])<<4 | unhex(rest[2]))
			s = rest[3:]
		default:
			b.WriteString(Esc)
			s = rest
		}
	}
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}
