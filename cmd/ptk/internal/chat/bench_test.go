package chat

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
)

// longChat is a Model showing a conversation of n messages: questions,
// Markdown answers, tool calls and their results, on a 120×40 terminal.
func longChat(b *testing.B, n int) *Model {
	var msgs []ptk.Message
	for i := 0; len(msgs) < n; i++ {
		c := ptk.Call{ID: fmt.Sprint("c", i), Tool: "read_file", Args: []byte(fmt.Sprintf(`{"path":"file%d.go"}`, i))}
		msgs = append(msgs,
			ptk.Message{Role: ptk.RoleUser, Content: fmt.Sprintf("Question %d: what does file%d.go do?", i, i)},
			ptk.Message{Role: ptk.RoleAssistant, Calls: []ptk.Call{c}},
			ptk.Message{Role: ptk.RoleTool, CallID: c.ID, Tool: "read_file", Content: "package main\n\nfunc main() {}\n"},
			ptk.Message{Role: ptk.RoleAssistant, Content: answer + "\n```go\nfunc main() {}\n```\n"})
	}
	m := New(Config{Options: agent.Options{ModelName: "bench", Mode: agent.ModeNative}, History: msgs[:n]})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.View()
	b.Cleanup(func() { m.exit() })
	return m
}

// BenchmarkKeystroke is what a key costs with a 1,000-message conversation
// on screen: the update and the whole frame.
func BenchmarkKeystroke(b *testing.B) {
	m := longChat(b, 1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%200 == 199 {
			m.input.Reset()
		}
		m.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
		m.View()
	}
}

// BenchmarkToken is what a streamed token costs with a 1,000-message
// conversation: the event's update and the whole frame. Answers are cut at
// 8 KB, as a long answer is.
func BenchmarkToken(b *testing.B) {
	m := longChat(b, 1000)
	m.running, m.run = true, 1
	b.ReportAllocs()
	for b.Loop() {
		if m.open != nil && m.open.text.Len() > 8<<10 {
			m.closeOpen()
		}
		m.Update(eventMsg{run: 1, e: agent.Event{Kind: agent.EventText, Text: "word "}})
		m.View()
	}
}

// BenchmarkResize redraws a 1,000-message conversation at a new width: no
// line of it is cached.
func BenchmarkResize(b *testing.B) {
	m := longChat(b, 1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Update(tea.WindowSizeMsg{Width: 100 + i%40, Height: 40})
		m.View()
	}
}

// BenchmarkTokenScrolledUp is a streamed token while the user reads higher
// up: the view stays anchored, drawn from its top line down.
func BenchmarkTokenScrolledUp(b *testing.B) {
	m := longChat(b, 1000)
	m.running, m.run = true, 1
	for range 10 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	}
	if m.top == nil {
		b.Fatal("not scrolled up")
	}
	b.ReportAllocs()
	for b.Loop() {
		if m.open != nil && m.open.text.Len() > 8<<10 {
			m.closeOpen()
		}
		m.Update(eventMsg{run: 1, e: agent.Event{Kind: agent.EventText, Text: "word "}})
		m.View()
	}
}
