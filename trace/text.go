package trace

import (
	"database/sql"
	"strings"
	"unicode/utf8"
)

// PostgreSQL's text holds neither NUL bytes nor invalid UTF-8, and a run
// may record both: a tool that read a binary file, a model that wrote a
// NUL, a prompt cut in the middle of a character. One such value used to
// fail the statement, and with it every run of the batch. On PostgreSQL
// the store therefore writes such text escaped, and reads it back as it
// was: textEsc (U+10FFFD, a private-use code point no text uses) followed
// by one letter:
//
//	textEsc '0'        a NUL byte
//	textEsc 'x' H H    the byte 0xHH, which was not valid UTF-8 where it stood
//	textEsc 'e'        textEsc itself
//
// Text without NUL bytes, invalid UTF-8 or textEsc, which is nearly all
// text, is written as it is. SQLite holds any bytes and needs none of this.
const textEsc = "\U0010FFFD"

const hexDigits = "0123456789abcdef"

// pgText is s as PostgreSQL can hold it.
func pgText(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) && !strings.Contains(s, textEsc) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(textEsc + "x")
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		case r == 0:
			b.WriteString(textEsc + "0")
		case s[i:i+size] == textEsc:
			b.WriteString(textEsc + "e")
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// pgUntext is the text pgText made from s. Text that holds textEsc but
// was not written by pgText (a store changed by hand) comes back as it is
// where it cannot be read as an escape.
func pgUntext(s string) string {
	if !strings.Contains(s, textEsc) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.Index(s, textEsc)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+len(textEsc):]
		switch {
		case strings.HasPrefix(rest, "0"):
			b.WriteByte(0)
			s = rest[1:]
		case strings.HasPrefix(rest, "e"):
			b.WriteString(textEsc)
			s = rest[1:]
		case len(rest) >= 3 && rest[0] == 'x' && isHex(rest[1]) && isHex(rest[2]):
			b.WriteByte(unhex(rest[1])<<4 | unhex(rest[2]))
			s = rest[3:]
		default:
			b.WriteString(textEsc)
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

// args returns a statement's arguments as the store's database holds
// them: on PostgreSQL, text escaped by pgText.
func (s *Store) args(args []any) []any {
	if !s.pg {
		return args
	}
	out := make([]any, len(args))
	for i, a := range args {
		if t, ok := a.(string); ok {
			a = pgText(t)
		}
		out[i] = a
	}
	return out
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scan scans a row into dest and, on PostgreSQL, reads back the text of
// the *string destinations that pgText escaped.
func (s *Store) scan(sc scanner, dest ...any) error {
	if err := sc.Scan(dest...); err != nil {
		return err
	}
	if s.pg {
		for _, d := range dest {
			if p, ok := d.(*string); ok {
				*p = pgUntext(*p)
			}
		}
	}
	return nil
}

var (
	_ scanner = (*sql.Row)(nil)
	_ scanner = (*sql.Rows)(nil)
)
