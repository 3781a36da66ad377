package completion

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/ptkit/ptk"
)

// The turn headers of a transcript, each alone on its line.
const (
	headerSystem    = "SYSTEM:"
	headerUser      = "USER:"
	headerAssistant = "ASSISTANT:"
	headerTool      = "TOOL:"
)

// transcript flattens msgs into one prompt: each message a turn under its
// header (SYSTEM:, USER:, ASSISTANT:, TOOL:) alone on a line, a blank line
// after each turn, and the cue "ASSISTANT:\n" at the end. The text is the
// messages' own, trimmed, with every line that would read as a turn header
// escaped with a backslash, so no message can forge a turn. An assistant
// message's native calls follow its text, one JSON object per line
// ({"tool": …, "args": …}); a run of tool messages is one TOOL turn with
// each result under a line that names its tool and call.
//
// It adds nothing else: a caller that teaches a protocol (the agent's
// text-protocol mode) has its formatter flatten the conversation and sends
// it as llm.Request.Prompt.
func transcript(msgs []ptk.Message) string {
	var b strings.Builder
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		header, text := headerUser, trimTurn(m.Content)
		switch m.Role {
		case ptk.RoleSystem:
			header = headerSystem
		case ptk.RoleAssistant:
			header = headerAssistant
			if calls := callLines(m.Calls); calls != "" {
				text = strings.TrimSpace(text + "\n" + calls)
			}
		case ptk.RoleTool:
			header = headerTool
			text, i = toolTurn(msgs, i)
		}
		writeTurn(&b, header, escapeHeaders(text))
	}
	b.WriteString(headerAssistant)
	b.WriteByte('\n')
	return b.String()
}

func trimTurn(s string) string {
	return strings.TrimRight(strings.TrimLeft(s, "\r\n"), " \t\r\n")
}

// callLines writes each call as one line of JSON.
func callLines(calls []ptk.Call) string {
	var b strings.Builder
	for _, c := range calls {
		args := json.RawMessage(c.Args)
		if !json.Valid(args) {
			s, _ := json.Marshal(string(c.Args))
			args = s
		}
		line, err := json.Marshal(struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		}{c.Tool, args})
		if err != nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.Write(line)
	}
	return b.String()
}

// toolTurn writes the run of tool messages that starts at msgs[i], and
// returns the index of the last of them.
func toolTurn(msgs []ptk.Message, i int) (string, int) {
	var b strings.Builder
	for ; i < len(msgs) && msgs[i].Role == ptk.RoleTool; i++ {
		t := msgs[i]
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("Result of " + t.Tool)
		if t.CallID != "" {
			b.WriteString(" (" + t.CallID + ")")
		}
		if t.IsError {
			b.WriteString(", an error")
		}
		b.WriteString(":\n")
		b.WriteString(trimTurn(t.Content))
	}
	return b.String(), i - 1
}

func writeTurn(b *strings.Builder, header, text string) {
	b.WriteString(header)
	b.WriteByte('\n')
	if text != "" {
		b.WriteString(text)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}

// escapeHeaders puts a backslash at the start of every line of s that could
// read as a turn header: optional blanks, a role name in any ASCII letter
// case, optional blanks and a colon. Lines end at
// \n, \r, U+0085, U+2028 and U+2029. It returns s itself when no line needs
// it.
func escapeHeaders(s string) string {
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
		if n := foldPrefix(s[i:], role); n > 0 {
			j := skipBlank(s, i+n)
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

// foldPrefix returns len(lower) when s starts with lower (ASCII letters) in
// any case, 0 otherwise.
func foldPrefix(s, lower string) int {
	if len(s) >= len(lower) && strings.EqualFold(s[:len(lower)], lower) {
		return len(lower)
	}
	return 0
}
