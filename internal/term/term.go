// Package term makes text that comes from models, tools and files safe to
// show on a terminal: nothing in it is interpreted by the terminal, and
// nothing in it is hidden from the person reading it.
//
// A model or a tool can write bytes a terminal acts on: ESC starts a control
// sequence that moves the cursor, clears the screen, sets the window title or
// redraws a line, so an approval prompt for `touch SPOOFED` can be made to
// read `ls -la`; a carriage return overwrites the line it ends; Unicode
// bidirectional overrides reorder what is shown (the Trojan Source attack);
// zero-width and other invisible characters make two different commands look
// alike. [Text] shows every such character as a visible escape instead:
//
//	\x1b  \r  \x07   C0 controls (but tab and line feed), DEL, and bytes that are not UTF-8
//	\u009b           C1 controls (U+0080-U+009F), which some terminals read as ESC [
//	\u202e \u2066    bidirectional controls
//	\u200b \ufeff    invisible characters: zero-width, format characters,
//	                 variation selectors, tag characters, line and paragraph
//	                 separators, Hangul fillers, the braille blank
//
// A carriage return directly before a line feed is shown as it is (a file
// with CRLF line ends is not the attack), and so are the zero-width joiner
// and the two presentation selectors, which emoji are made of. [Command] is
// stricter, for a command a user approves: those are shown as escapes too,
// and so is every space that is not ASCII's.
//
// What it does not do: it does not make a text true. The person still reads
// what the model wrote; the guarantee is that what they read is what it is.
package term

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s with every character a terminal would act on, and every
// character that hides or reorders text, written as a visible escape
// (see the package doc). It returns s itself when there is nothing to change.
func Text(s string) string { return clean(s, false) }

// Command is Text, stricter for a command a user is asked to approve: every
// space other than ASCII's (no-break, thin, ideographic, ...) is written as
// an escape too, since "rm\u00a0-rf" is not "rm -rf".
func Command(s string) string { return clean(s, true) }

func clean(s string, strict bool) string {
	i := firstUnsafe(s, strict)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	appendClean(&b, s[i:], strict)
	return b.String()
}

// firstUnsafe returns the index of the first byte of s that clean changes,
// or -1.
func firstUnsafe(s string, strict bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeASCII(s, i) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || hidden(r, strict) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeASCII reports whether the ASCII byte s[i] is a control shown as an
// escape: every C0 control but tab and line feed, and DEL; a carriage return
// only when no line feed follows it.
func unsafeASCII(s string, i int) bool {
	switch c := s[i]; {
	case c == '\t' || c == '\n':
		return false
	case c == '\r':
		return i+1 >= len(s) || s[i+1] != '\n'
	default:
		return c < 0x20 || c == 0x7f
	}
}

func appendClean(b *strings.Builder, s string, strict bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeASCII(s, i) {
				writeByteEscape(b, c)
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeByteEscape(b, c)
		case hidden(r, strict):
			writeRuneEscape(b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
}

func writeByteEscape(b *strings.Builder, c byte) {
	if c == '\r' {
		b.WriteString(`\r`)
		return
	}
	const hex = "0123456789abcdef"
	b.WriteString(`\x`)
	b.WriteByte(hex[c>>4])
	b.WriteByte(hex[c&0xf])
}

func writeRuneEscape(b *strings.Builder, r rune) {
	q := strconv.FormatInt(int64(r), 16)
	if r > 0xffff {
		b.WriteString(`\U`)
		b.WriteString(strings.Repeat("0", 8-len(q)))
	} else {
		b.WriteString(`\u`)
		b.WriteString(strings.Repeat("0", 4-len(q)))
	}
	b.WriteString(q)
}

// hidden reports whether a non-ASCII rune acts on the terminal, reorders
// text or cannot be seen: C1 controls, format characters (bidirectional
// controls, zero-width characters, tag characters, the soft hyphen...),
// variation selectors, line and paragraph separators, and the blank
// characters that are letters (Hangul fillers, the braille blank). With
// strict, also every space but ASCII's.
func hidden(r rune, strict bool) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case !strict && (r == 0x200d || r == 0xfe0e || r == 0xfe0f):
		// the joiner and presentation selectors of emoji: 👨‍👩‍👧, ⚠️
		return false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return true
	case unicode.Is(unicode.Variation_Selector, r):
		return true
	case r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 || r == 0x2800 || r == 0x034f:
		// Hangul fillers, the braille blank, the combining grapheme joiner
		return true
	case r == utf8.RuneError:
		return false // U+FFFD as written is visible
	case strict && unicode.Is(unicode.Zs, r):
		return true
	}
	return false
}

// Stream is Text for text that arrives in pieces (a streamed answer): a
// character split between two pieces is judged whole, so a bidirectional
// override cut in two still shows as its escape. The zero value is ready.
// A Stream is for one sequence of pieces, on one goroutine.
type Stream struct {
	held []byte // an incomplete UTF-8 sequence, or a carriage return, at the end of the last piece
}

// Text returns the safe form of the next piece. What it holds back (at most
// the first three bytes of a character, or a final carriage return) comes at
// the start of the next piece's result, or from Flush.
func (st *Stream) Text(piece string) string {
	s := piece
	if len(st.held) > 0 {
		s = string(st.held) + piece
		st.held = st.held[:0]
	}
	keep := incompleteSuffix(s)
	if keep == 0 && strings.HasSuffix(s, "\r") {
		keep = 1 // a line feed may follow
	}
	st.held = append(st.held, s[len(s)-keep:]...)
	return Text(s[:len(s)-keep])
}

// Flush returns the safe form of what the Stream holds back, and forgets it.
func (st *Stream) Flush() string {
	s := Text(string(st.held))
	st.held = st.held[:0]
	return s
}

// incompleteSuffix returns the length of an incomplete UTF-8 sequence that
// ends s, or 0.
func incompleteSuffix(s string) int {
	for k := 1; k <= 3 && k <= len(s); k++ {
		c := s[len(s)-k]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRuneInString(s[len(s)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}

// Writer writes everything through Text: what a command prints to a
// terminal, from any source, is shown and never acted on. It is not for
// writers whose own output is control sequences (a screen, colours): those
// write to Unwrap(w) and pass what they show through Text themselves.
type Writer struct {
	w  io.Writer
	st Stream
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p, made safe. It reports len(p) written when all of it was
// (a character split between two writes is written with the second).
func (w *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, w.st.Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap returns the writer w writes to.
func (w *Writer) Unwrap() io.Writer { return w.w }

// Unwrap returns the writer under w when w is a Writer, else w.
func Unwrap(w io.Writer) io.Writer {
	if tw, ok := w.(*Writer); ok {
		return tw.w
	}
	return w
}
