package turn

import (
	"slices"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
)

// Mode says how a model is asked to call tools.
type Mode string

// The modes a turn is made in.
const (
	// PTK teaches the model the text protocol in the system prompt and reads
	// its calls from the text it writes.
	PTK Mode = "ptk"
	// Native sends the tools as the provider's function definitions and
	// reads its native calls (and calls it writes as text, when it has none).
	Native Mode = "native"
)

// History is a conversation rendered for a model, kept as it grows: each
// message is rendered once, when it is appended, so a model call costs the
// new turn, not the whole history.
//
// In PTK mode the system prompt teaches the protocol and lists the tools; an
// assistant turn is replayed as the model wrote it (Message.Raw), or as its
// prose followed by its calls in the protocol's form; the results of a
// turn's calls (a run of tool messages) become one user message of results.
// In Native mode messages are kept as they are, but for calls the provider
// would reject (no tool name), which are left out with their results, and
// error results, which say they are one.
//
// A conversation that was compacted (a message whose Compacted is set:
// package agent writes one) is rendered from its latest compaction on: the
// system prompt, the compaction's summary as a user message, then the
// messages after the ones the summary stands for. Messages still returns
// every message.
//
// In both modes the text of user and tool messages is data: it is rendered
// through the tools' parser's Neutralize (protocol.Parser.Neutralize), so
// that nothing a file, a tool, an MCP server or a pasted text holds reads as
// a call when the model repeats it, in any dialect the parser reads.
// Messages() keeps them as they were.
//
// A History is not safe for concurrent use.
type History struct {
	mode         Mode
	f            protocol.Formatter
	instructions string
	tools        []ptk.ToolInfo

	// inert makes data inert for the tools' parser.
	inert func(string) string

	// msgs is the conversation as appended, without a system prompt.
	msgs []ptk.Message
	// data is, for each of msgs, its content as the model reads it: made
	// inert for a user or tool message, as it is for an assistant's.
	data []string
	// out is msgs rendered for the model, the system prompt first when
	// there is one.
	out []ptk.Message
	// toolRun is where the run of tool messages that ends msgs starts in
	// msgs (-1 when msgs does not end with one): its rendering, in PTK mode
	// one message, is redone when another tool message joins it.
	toolRun int
	// dropped are the ids of native calls left out of the rendering.
	dropped map[string]bool
	// shown is where the messages the model is sent begin in msgs: after
	// the ones the latest compaction's summary stands for.
	shown int

	// tokens holds the estimated tokens of each of out's first counted
	// messages, and total their sum (see Tokens).
	tokens  []int
	counted int
	total   int
}

// NewHistory returns an empty history for mode: instructions are the
// system prompt's own text (in PTK mode the protocol and the tool
// definitions follow them, written by f; nil f is protocol.PTK).
func NewHistory(mode Mode, f protocol.Formatter, instructions string, tools []ptk.ToolInfo) *History {
	p, _ := protocol.NewParser(tools)
	return NewHistoryParser(mode, f, p, instructions, tools)
}

// NewHistoryParser is NewHistory for a caller that has the parser of tools
// already (the gateway keeps its parsers in a protocol.ParserCache): p
// makes data inert as the model's replies will be read. Nil p makes it
// inert by the rules that hold whatever the tools (protocol.Neutralize).
func NewHistoryParser(mode Mode, f protocol.Formatter, p *protocol.Parser, instructions string, tools []ptk.ToolInfo) *History {
	if f == nil {
		f = protocol.PTK{}
	}
	h := &History{mode: mode, f: f, instructions: instructions, tools: tools, toolRun: -1, inert: protocol.Neutralize}
	if p != nil {
		h.inert = p.Neutralize
	}
	h.render()
	return h
}

// Mode returns the mode the history is rendered for.
func (h *History) Mode() Mode { return h.mode }

// SetMode renders the whole history again for mode, once.
func (h *History) SetMode(mode Mode) {
	if mode == h.mode {
		return
	}
	h.mode = mode
	h.render()
}

// ptk reports whether messages are rendered for the text protocol.
func (h *History) ptk() bool { return h.mode == PTK }

// render renders the history from scratch: from its latest compaction on,
// when it has one.
func (h *History) render() {
	// A new array: a rendering handed out earlier must not change under
	// its holder.
	h.out = h.out[:0:0]
	h.dropped = nil
	h.toolRun = -1
	h.uncount(0)
	switch {
	case h.ptk():
		h.out = append(h.out, ptk.Message{Role: ptk.RoleSystem, Content: h.f.SystemPrompt(h.instructions, h.tools)})
	case strings.TrimSpace(h.instructions) != "":
		h.out = append(h.out, ptk.Message{Role: ptk.RoleSystem, Content: h.instructions})
	}
	msgs := h.msgs
	last, from := Compaction(msgs)
	h.shown = from
	if last >= 0 {
		// The summary, then the messages after the ones it stands for.
		h.out = append(h.out, ptk.Message{Role: ptk.RoleUser, Content: msgs[last].Content})
	}
	// The messages are added again in place: each is written over itself,
	// and the ones before the view are not copied, so a compaction costs
	// what the model is shown, not the whole conversation.
	h.msgs, h.data = msgs[:from], h.data[:from]
	h.add(msgs[from:], false)
}

// Compaction finds the latest compaction in msgs: the index of its summary
// (-1 when there is none), and where the messages a model is sent after it
// begin, from, after the ones it stands for (0 when there is none). A
// count that does not fit is read as the most it can be, and from never
// falls on a tool result, whose call the summary stands for.
func Compaction(msgs []ptk.Message) (last, from int) {
	last = -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Compacted > 0 && msgs[i].Role == ptk.RoleUser {
			last = i
			break
		}
	}
	if last < 0 {
		return -1, 0
	}
	from = min(msgs[last].Compacted, last)
	for from < last && msgs[from].Role == ptk.RoleTool {
		from++
	}
	return last, from
}

// Append adds messages to the conversation and renders them. A system
// message is left out: the history's system prompt is its own. A
// compaction's summary (Compacted set) renders the history again from it.
func (h *History) Append(msgs ...ptk.Message) { h.add(msgs, true) }

// add appends and renders msgs; with restart, a compaction's summary
// renders the history again from it, without, it is only kept (render
// has shown it already).
func (h *History) add(msgs []ptk.Message, restart bool) {
	h.msgs = slices.Grow(h.msgs, len(msgs))
	h.data = slices.Grow(h.data, len(msgs))
	h.out = slices.Grow(h.out, len(msgs))
	for i, m := range msgs {
		if m.Role == ptk.RoleSystem {
			continue
		}
		h.msgs = append(h.msgs, m)
		if m.Compacted > 0 && m.Role == ptk.RoleUser {
			// The model's own notes, shown as it wrote them.
			h.data = append(h.data, m.Content)
			h.toolRun = -1
			if last, _ := Compaction(msgs[i+1:]); restart && last < 0 {
				h.render() // the latest compaction: the view begins again
			}
			continue // shown by render, or replaced by a later one in msgs
		}
		if m.Role != ptk.RoleAssistant {
			m.Content = h.inert(m.Content)
		}
		h.data = append(h.data, m.Content)
		if m.Role == ptk.RoleTool {
			h.appendResult(m)
			continue
		}
		h.toolRun = -1
		if h.ptk() {
			h.out = append(h.out, h.renderPTK(m))
		} else {
			h.out = append(h.out, h.renderNative(m))
		}
	}
}

// appendResult renders the tool message that ends msgs.
func (h *History) appendResult(m ptk.Message) {
	if !h.ptk() {
		if h.dropped[m.CallID] {
			return
		}
		if m.IsError && !strings.HasPrefix(strings.ToLower(m.Content), "error") {
			m.Content = "Error: " + m.Content
		}
		h.out = append(h.out, m)
		return
	}
	if h.toolRun >= 0 {
		// The run's message, redone with m, in a new array: a rendering
		// handed out earlier must not change under its holder.
		n := len(h.out) - 1
		h.out = append(h.out[:n:n], ptk.Message{})[:n]
		h.uncount(n)
	} else {
		h.toolRun = len(h.msgs) - 1
	}
	results, _ := protocol.ToolTurn(h.msgs, h.toolRun)
	for i := range results {
		results[i].Content = h.data[h.toolRun+i]
	}
	h.out = append(h.out, ptk.Message{Role: ptk.RoleUser, Content: h.f.Results(results)})
}

// renderPTK renders a message that is not a tool result for a chat model
// taught the protocol.
func (h *History) renderPTK(m ptk.Message) ptk.Message {
	if m.Role != ptk.RoleAssistant {
		return ptk.Message{Role: ptk.RoleUser, Content: m.Content}
	}
	content := m.Raw
	if content == "" {
		content = m.Content
		if len(m.Calls) > 0 {
			content = strings.TrimSpace(content + "\n\n" + h.f.Calls(m.Calls))
		}
	}
	return ptk.Message{Role: ptk.RoleAssistant, Content: content}
}

// renderNative renders a message that is not a tool result for a
// provider's native tool calling: calls without a tool name are left out
// (providers reject them), and so are their results later.
func (h *History) renderNative(m ptk.Message) ptk.Message {
	if m.Role != ptk.RoleAssistant {
		return m
	}
	calls := m.Calls[:0:0]
	for _, c := range m.Calls {
		if c.Tool == "" {
			if h.dropped == nil {
				h.dropped = map[string]bool{}
			}
			h.dropped[c.ID] = true
			continue
		}
		calls = append(calls, c)
	}
	m.Calls, m.Raw = calls, ""
	return m
}

// Messages returns the conversation as appended, without the system
// prompt. The caller must not change it.
func (h *History) Messages() []ptk.Message { return h.msgs[:len(h.msgs):len(h.msgs)] }

// Rendered returns the conversation rendered for the model, the system
// prompt first: the messages of a request. Appending to the returned slice
// never changes the history; the caller must not change its elements.
func (h *History) Rendered() []ptk.Message { return h.out[:len(h.out):len(h.out)] }

// Shown returns where the messages the model is sent begin in Messages():
// after the ones the latest compaction's summary stands for (0 when there
// is none).
func (h *History) Shown() int { return h.shown }

// Tokens estimates the tokens of the rendered conversation
// (llm.EstimateMessage for each message). It counts each rendered message
// once, the first time it is asked, so asking before every model call
// costs the new messages only.
func (h *History) Tokens() int {
	for ; h.counted < len(h.out); h.counted++ {
		n := llm.EstimateMessage(h.out[h.counted])
		h.tokens = append(h.tokens[:h.counted], n)
		h.total += n
	}
	return h.total
}

// uncount forgets the counts of out[i:], whose messages changed.
func (h *History) uncount(i int) {
	for ; h.counted > i; h.counted-- {
		h.total -= h.tokens[h.counted-1]
	}
}

// Transcript returns the rendered conversation flattened into one prompt
// for a text-only model, by the history's formatter.
func (h *History) Transcript() string { return h.f.Transcript(h.Rendered()) }
