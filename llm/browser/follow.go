package browser

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// follower turns the successive texts of an answer, as the page shows it
// while it writes, into pieces of text to stream. A page may still change
// the line being written (a renderer turns "**bo" into "bo" in bold), so
// only whole lines that stood still between two readings are passed on;
// the rest comes at the end. Its zero value is ready to use.
type follower struct {
	sent     string // the text passed on so far
	prev     string // the previous reading
	diverged bool   // a reading no longer started with sent
}

// see takes the next reading and returns the text that can be passed on.
func (f *follower) see(s string) string {
	defer func() { f.prev = s }()
	if f.diverged || !strings.HasPrefix(s, f.sent) {
		f.diverged = true
		return ""
	}
	// prev starts with sent too (sent was cut from it), so only the rest
	// is compared.
	n := len(f.sent)
	stable := s[:n+commonPrefix(f.prev[min(n, len(f.prev)):], s[n:])]
	cut := strings.LastIndexByte(stable[n:], '\n') + 1 + n
	if cut <= n {
		return ""
	}
	d := s[len(f.sent):cut]
	f.sent = s[:cut]
	return d
}

// end takes the whole answer and returns the text not passed on yet, or
// false when the page changed text that had been passed on already.
func (f *follower) end(final string) (string, bool) {
	if !strings.HasPrefix(final, f.sent) {
		return "", false
	}
	d := final[len(f.sent):]
	f.sent = final
	return d, true
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// cueHeader is the header the transcript ends with, and the one a chat
// model may write at the start of its answer, mimicking the transcript.
const cueHeader = "ASSISTANT:"

// chatPrompt is the text to put in a chat page for a flattened prompt: the
// transcript without the cue "ASSISTANT:" at its end (the page frames the
// reply itself), valid UTF-8, and no NUL, which an input drops.
func chatPrompt(p string) string {
	p = strings.ToValidUTF8(p, "\uFFFD")
	p = strings.ReplaceAll(p, "\x00", "\uFFFD")
	p = strings.TrimRightFunc(p, unicode.IsSpace)
	if rest, ok := strings.CutSuffix(p, cueHeader); ok && (rest == "" || strings.HasSuffix(rest, "\n")) {
		p = strings.TrimRightFunc(rest, unicode.IsSpace)
	}
	return p
}

// clean is an answer's text without the white space before it and without
// an "ASSISTANT:" header at its start.
func clean(s string) string {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if len(s) >= len(cueHeader) && strings.EqualFold(s[:len(cueHeader)], cueHeader) {
		s = strings.TrimLeftFunc(s[len(cueHeader):], unicode.IsSpace)
	}
	return s
}

// squash is s without its white space: what an input must hold of a
// prompt, whichever way it breaks lines.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// runes is the length of s in characters.
func runes(s string) int { return utf8.RuneCountInString(s) }
