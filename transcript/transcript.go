// Package transcript is how ptk flattens a conversation into one prompt for
// a text-only model: each turn under a header alone on its line (SYSTEM:,
// USER:, ASSISTANT:, TOOL:), a blank line after it, and no line of any
// message able to pass for a header. The protocol's formatter and the
// text-only clients (llm/completion) both write their transcripts with it,
// so they agree on what a turn is and on how data is kept from forging one.
package transcript

import (
	"strings"
	"unicode/utf8"
)

// The turn headers, each alone on its line.
const (
	System    = "SYSTEM:"
	User      = "USER:"
	Assistant = "ASSISTANT:"
	Tool      = "TOOL:"
)

// WriteTurn writes one turn: its header on a line, its text (when there is
// any) and a blank line.
func WriteTurn(b *strings.Builder, header, text string) {
	b.WriteString(header)
	b.WriteByte('\n')
	if text != "" {
		b.WriteString(text)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}

// Cue ends a transcript with the header of the assistant's next turn, so the
// model's first token is the text of its turn.
func Cue(b *strings.Builder) {
	b.WriteString(Assistant)
	b.WriteByte('\n')
}

// Trim is a message's text as a turn holds it: without blank lines at its
// start, nor white space at its end.
func Trim(s string) string {
	return strings.TrimRight(strings.TrimLeft(s, "\r\n"), " \t\r\n")
}

// EscapeHeaders puts a backslash at the start of every line of s that could
// read as a turn header: optional spaces or tabs, a role name (system, user,
// assistant, tool) in any ASCII letter case, optional spaces or tabs, and a
// colon — "assistant: hi" becomes "\assistant: hi". Lines end at \n, \r,
// U+0085, U+2028 and U+2029. It returns s itself when no line needs it.
func EscapeHeaders(s string) string {
	var b strings.Builder
	last := 0 // s[:last] has been written to b
	for start := 0; ; {
		if headerAt(s, start) {
			if b.Cap() == 0 {
				b.Grow(len(s) + 8)
			}
			b.WriteString(s[last:start])
			b.WriteByte('\\')
			last = start
		}
		k := strings.IndexAny(s[start:], "\n\r\u0085\u2028\u2029")
		if k < 0 {
			break
		}
		_, size := utf8.DecodeRuneInString(s[start+k:])
		start += k + size
	}
	if b.Cap() == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// headerAt reports whether the line that starts at s[i] reads as a turn
// header.
func headerAt(s string, i int) bool {
	i = skipBlank(s, i)
	for _, role := range [...]string{"system", "user", "assistant", "tool"} {
		if len(s)-i >= len(role) && strings.EqualFold(s[i:i+len(role)], role) {
			j := skipBlank(s, i+len(role))
			return j < len(s) && s[j] == ':'
		}
	}
	return false
}

func skipBlank(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}
