package llm

import (
	"unicode"
	"unicode/utf8"

	"github.com/ptkit/ptk"
)

// Token counts, estimated.
//
// ptk counts a request before it sends it, to know whether it fits the
// model's window, without the model's tokenizer: the estimate reads text the
// way byte-pair tokenizers cut it (a common word is one token, a long
// identifier a few, digits go by threes, punctuation by pairs, a CJK
// character is one) and comes within about 20% of cl100k and Llama 3's
// counts on prose, code and JSON. A caller that sees the provider's usage
// afterwards corrects it by the ratio (the agent does).

// Overheads of the chat format, in tokens: each message's role and
// separators, each tool definition's wrapping.
const (
	MessageOverhead = 4
	ToolOverhead    = 8
)

// EstimateTokens estimates the tokens of a text.
func EstimateTokens(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isLetter(c):
			j := i + 1
			for j < len(s) && (isLetter(s[j]) || s[j] >= utf8.RuneSelf && !isWide(s, j)) {
				j++
			}
			n += 1 + (j-i-1)/6
			i = j
		case '0' <= c && c <= '9':
			j := i + 1
			for j < len(s) && '0' <= s[j] && s[j] <= '9' {
				j++
			}
			n += (j - i + 2) / 3
			i = j
		case c == ' ':
			j := i + 1
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j-i > 1 { // a single space joins the next word
				n += 1 + (j-i)/8
			}
			i = j
		case c == '\n' || c == '\r' || c == '\t':
			j := i + 1
			for j < len(s) && (s[j] == '\n' || s[j] == '\r' || s[j] == '\t') {
				j++
			}
			n++
			i = j
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && isPunct(s[j]) {
				j++
			}
			n += (j - i + 1) / 2
			i = j
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case isWideRune(r):
				n++
			case unicode.IsLetter(r):
				// a word of another script, or one that starts with an
				// accented letter: read on as a word
				j := i + size
				for j < len(s) && (isLetter(s[j]) || s[j] >= utf8.RuneSelf && !isWide(s, j)) {
					j++
				}
				n += 1 + (j-i-1)/4
				size = j - i
			default: // symbols, emoji
				n += 1 + size/3
			}
			i += size
		}
	}
	return n
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }

func isPunct(c byte) bool { return c > ' ' && !isLetter(c) && (c < '0' || c > '9') }

// isWide reports whether the rune at s[i] is one a tokenizer counts alone.
func isWide(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isWideRune(r) || !unicode.IsLetter(r)
}

func isWideRune(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai)
}

// EstimateMessage estimates the tokens of one message as a chat API sends
// it: its text (Raw when the model wrote one), its calls' names and
// arguments, and the overhead.
func EstimateMessage(m ptk.Message) int {
	text := m.Content
	if m.Raw != "" {
		text = m.Raw
	}
	n := MessageOverhead + EstimateTokens(text)
	for _, c := range m.Calls {
		n += MessageOverhead + EstimateTokens(c.Tool) + EstimateTokens(string(c.Args))
	}
	return n
}

// EstimateTools estimates the tokens of tool definitions sent natively.
func EstimateTools(tools []ptk.ToolInfo) int {
	n := 0
	for _, t := range tools {
		n += ToolOverhead + EstimateTokens(t.Name) + EstimateTokens(t.Description) + EstimateTokens(string(t.Parameters))
	}
	return n
}

// EstimateRequest estimates the prompt tokens of a request: its messages
// and native tools, or its flattened Prompt for a text-only model.
func EstimateRequest(req Request) int {
	if req.Prompt != "" {
		return EstimateTokens(req.Prompt)
	}
	n := 3 // the cue for the answer
	for _, m := range req.Messages {
		n += EstimateMessage(m)
	}
	return n + EstimateTools(req.Tools)
}
