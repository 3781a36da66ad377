package completion

import (
	"encoding/json"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/transcript"
)

// flatten flattens msgs into one prompt: each message a turn under its
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
func flatten(msgs []ptk.Message) string {
	var b strings.Builder
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		header, text := transcript.User, transcript.Trim(m.Content)
		switch m.Role {
		case ptk.RoleSystem:
			header = transcript.System
		case ptk.RoleAssistant:
			header = transcript.Assistant
			if calls := callLines(m.Calls); calls != "" {
				text = strings.TrimSpace(text + "\n" + calls)
			}
		case ptk.RoleTool:
			header = transcript.Tool
			text, i = toolTurn(msgs, i)
		}
		transcript.WriteTurn(&b, header, transcript.EscapeHeaders(text))
	}
	b.WriteString(transcript.Assistant)
	b.WriteByte('\n')
	return b.String()
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
		b.WriteString(transcript.Trim(t.Content))
	}
	return b.String(), i - 1
}
