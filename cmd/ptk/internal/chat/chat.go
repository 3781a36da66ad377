// Package chat is ptk chat's screen: a conversation with a coding assistant
// in the terminal, built with Bubble Tea on the events of agent.Stream.
//
// A Model shows the conversation as blocks (messages, answers streaming
// then rendered as Markdown, reasoning, one panel per tool call with its
// result or diff), a status line and an input box. Each message the user
// sends starts one agent run over the conversation so far; its events come
// back to the Model through a channel, one Bubble Tea message each. A call
// that needs approval is asked on the screen (Model.Ask is the approver's
// question), Esc cancels the run, Ctrl-C twice quits.
package chat

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/tool"
)

// Config is what a chat needs.
type Config struct {
	// Options configure every run: the model, the tools, the limits, the
	// approver (whose question should be Model.Ask).
	Options agent.Options
	// Conversation names the conversation; Store keeps it (nil: not kept).
	Conversation string
	Store        agent.Store
	// StoreName says where Store keeps it, for /conversations ("the trace
	// store ~/.local/share/ptk/traces.db"); "": in memory, for this
	// session only.
	StoreName string
	// History is the conversation so far, to continue: what Store holds
	// for Conversation (Store.Load).
	History []ptk.Message
	// Resolve finds a model by name, for /model; nil: /model is not
	// available.
	Resolve func(name string) (llm.Model, error)
	// Hint turns a run's error into a one-line fix (no server at the base
	// URL, a wrong key), or "" when it has none.
	Hint func(error) string
	// Run starts a run; default agent.Stream. Tests replace it.
	Run func(ctx context.Context, history []ptk.Message, opts agent.Options) iter.Seq2[agent.Event, error]
}

// Model is the chat's state: a tea.Model.
type Model struct {
	cfg    Config
	opts   agent.Options
	st     *styles
	events chan tea.Msg
	quit   chan struct{}

	width, height int
	blocks        []*block
	input         textarea.Model
	history       []ptk.Message
	// stored is the conversation as the Store held it after this chat's
	// last write, and kept how many of history it holds: the next write
	// appends the rest after it, keeping what other runs added meanwhile.
	stored []ptk.Message
	kept   int
	sent   []string // what the user sent, for ↑ and ↓
	histAt int

	// The current run.
	running   bool
	run       int // counts runs; events of an older run are dropped
	cancel    context.CancelFunc
	stopping  bool
	iteration int
	calls     map[int]*block // this iteration's calls by index
	open      *block         // the answer or reasoning being written
	asking    *approval
	frame     int
	ticking   bool

	// Totals of the session.
	usage ptk.Usage
	cost  float64
	mode  string

	scroll         int // lines scrolled up from the bottom
	expand, reason bool
	quitArmed      bool
	flash          string
}

// approval is a question from the run's approver, waiting for the user.
type approval struct {
	call  ptk.Call
	block *block
	reply chan string
}

// Messages that come from the run's goroutine.
type (
	eventMsg struct {
		run int
		e   agent.Event
		err error
	}
	askMsg struct {
		call  ptk.Call
		why   string // why the user is asked, or ""
		reply chan string
	}
	tickMsg struct{}
)

var _ tea.Model = (*Model)(nil)

// New returns a chat over cfg, 80×24 until the terminal says its size.
func New(cfg Config) *Model {
	if cfg.Run == nil {
		cfg.Run = agent.Stream
	}
	in := textarea.New()
	in.Placeholder = "Ask, or /help. Enter sends, alt+enter or ctrl+j starts a new line."
	in.ShowLineNumbers = false
	in.Prompt = "┃ "
	in.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "shift+enter", "ctrl+j"))
	in.KeyMap.LinePrevious = key.NewBinding(key.WithKeys("up"))
	in.KeyMap.LineNext = key.NewBinding(key.WithKeys("down"))
	in.SetHeight(3)
	in.Focus()
	m := &Model{
		cfg:     cfg,
		opts:    cfg.Options,
		st:      newStyles(),
		events:  make(chan tea.Msg, 64),
		quit:    make(chan struct{}),
		input:   in,
		history: slices.Clone(cfg.History),
		stored:  slices.Clone(cfg.History),
		kept:    len(cfg.History),
		calls:   map[int]*block{},
		mode:    string(cfg.Options.Mode),
	}
	if m.mode == "" {
		m.mode = string(agent.ModeAuto)
	}
	m.resize(80, 24)
	for _, msg := range cfg.History {
		m.showMessage(msg)
	}
	for _, b := range m.blocks {
		if b.kind == blockTool && b.state == toolWaiting {
			b.state = toolInterrupted
		}
	}
	if n := len(cfg.History); n > 0 {
		m.notice(fmt.Sprintf("continuing conversation %q (%d messages)", cfg.Conversation, n))
	}
	return m
}

// Ask asks the user whether call may run, on the screen, saying why (when
// why is not ""): it is the approver's question (called on the run's
// goroutine), and returns "y", "n" or "a", or ctx's error when the run is
// canceled first.
func (m *Model) Ask(ctx context.Context, call ptk.Call, why string) (string, error) {
	reply := make(chan string, 1)
	select {
	case m.events <- askMsg{call: call, why: why, reply: reply}:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-m.quit:
		return "n", nil
	}
	select {
	case s := <-reply:
		return s, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Init waits for the first event.
func (m *Model) Init() tea.Cmd { return m.wait }

// wait returns the next message from a run.
func (m *Model) wait() tea.Msg {
	select {
	case msg := <-m.events:
		return msg
	case <-m.quit:
		return nil
	}
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case eventMsg:
		m.event(msg)
		return m, tea.Batch(m.wait, m.tick())
	case askMsg:
		m.ask(msg)
		return m, m.wait
	case tickMsg:
		m.ticking = false
		m.frame++
		return m, m.tick()
	case tea.PasteMsg:
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

// tick moves the spinner while something runs.
func (m *Model) tick() tea.Cmd {
	if m.ticking || !m.running {
		return nil
	}
	m.ticking = true
	return tea.Tick(120*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	s := k.String()
	if s != "ctrl+c" {
		m.quitArmed = false
	}
	m.flash = ""
	if m.asking != nil {
		switch s {
		case "y", "n", "a":
			m.answer(s)
			return m, nil
		}
	}
	switch s {
	case "ctrl+c":
		if m.quitArmed {
			return m, m.exit()
		}
		m.quitArmed = true
		m.interrupt()
		m.flash = "ctrl+c again quits"
		return m, nil
	case "esc":
		if m.running {
			m.interrupt()
		}
		return m, nil
	case "enter":
		return m, m.submit()
	case "pgup":
		m.scroll += max(m.convHeight()-2, 1)
		return m, nil
	case "pgdown":
		m.scroll = max(m.scroll-max(m.convHeight()-2, 1), 0)
		return m, nil
	case "ctrl+o":
		m.expand = !m.expand
		return m, nil
	case "ctrl+r":
		m.reason = !m.reason
		return m, nil
	case "up", "ctrl+p":
		if m.input.Line() == 0 && m.histAt > 0 {
			m.histAt--
			m.input.SetValue(m.sent[m.histAt])
			return m, nil
		}
	case "down", "ctrl+n":
		if m.input.Line() == m.input.LineCount()-1 && m.histAt < len(m.sent) {
			m.histAt++
			if m.histAt == len(m.sent) {
				m.input.Reset()
			} else {
				m.input.SetValue(m.sent[m.histAt])
			}
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return m, cmd
}

// exit ends the chat, stopping the run.
func (m *Model) exit() tea.Cmd {
	if m.cancel != nil {
		m.cancel()
	}
	select {
	case <-m.quit:
	default:
		close(m.quit)
	}
	return tea.Quit
}

// interrupt cancels the current run: the model call or the tool stops,
// the agent answers what was left, and EventDone ends it.
func (m *Model) interrupt() {
	if !m.running || m.cancel == nil {
		return
	}
	m.cancel()
	m.stopping = true
	if m.asking != nil {
		m.asking.block.state = toolDenied
		m.asking.block.note = "interrupted"
		m.asking.block.touch()
		m.asking = nil
	}
}

// submit sends the input: a slash command, or a message that starts a run.
func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.input.Value())
	if text == "" {
		return nil
	}
	if m.running {
		m.flash = "the assistant is working: wait, or esc to interrupt"
		return nil
	}
	m.input.Reset()
	if len(m.sent) == 0 || m.sent[len(m.sent)-1] != text {
		m.sent = append(m.sent, text)
	}
	m.histAt = len(m.sent)
	m.scroll = 0
	if strings.HasPrefix(text, "/") {
		return m.command(text)
	}
	m.add(&block{kind: blockUser}).text.WriteString(text)
	history := append(slices.Clone(m.history), ptk.Message{Role: ptk.RoleUser, Content: text})
	ctx, cancel := context.WithCancel(context.Background())
	m.run++
	m.running, m.cancel, m.stopping = true, cancel, false
	m.iteration, m.open = 0, nil
	clear(m.calls)
	run, opts, events, quit := m.run, m.opts, m.events, m.quit
	seq := m.cfg.Run(ctx, history, opts)
	go func() {
		defer cancel()
		for e, err := range seq {
			select {
			case events <- eventMsg{run: run, e: e, err: err}:
			case <-quit:
				return
			}
		}
	}()
	return m.tick()
}

// event shows one event of the run.
func (m *Model) event(msg eventMsg) {
	if msg.run != m.run {
		return
	}
	e := msg.e
	switch e.Kind {
	case agent.EventIteration:
		m.iteration = e.Iteration
		m.closeOpen()
		clear(m.calls)
	case agent.EventText, agent.EventReasoning:
		kind := blockText
		if e.Kind == agent.EventReasoning {
			kind = blockReasoning
		}
		if m.open == nil || m.open.kind != kind {
			m.closeOpen()
			m.open = m.add(&block{kind: kind})
		}
		m.open.text.WriteString(e.Text)
		m.open.touch()
	case agent.EventCallStart:
		m.closeOpen()
		b := m.callBlock(e)
		b.state = toolWriting
	case agent.EventCallDelta:
		b := m.callBlock(e)
		b.args += len(e.Text)
		b.touch()
	case agent.EventCallEnd:
		b := m.callBlock(e)
		b.state = toolWaiting
		if b.call.Tool == "write_file" {
			b.preview = preview(b.call)
		}
		if e.Err != nil {
			b.state, b.note = toolFailed, e.Err.Message
		}
	case agent.EventModelDone:
		m.usage = m.usage.Add(e.Usage)
		m.closeOpen()
	case agent.EventToolStart:
		b := m.callBlock(e)
		if m.asking != nil && m.asking.block == b {
			m.asking = nil
		}
		b.state = toolRunning
	case agent.EventToolResult:
		b := m.callBlock(e)
		b.state, b.duration = toolDone, e.Duration
		if r := e.ToolResult; r != nil {
			b.result = r.Content
			if r.IsError {
				b.state = toolFailed
			}
		}
	case agent.EventDuplicate:
		b := m.callBlock(e)
		b.state, b.note = toolDuplicate, e.Text
	case agent.EventDenied:
		b := m.callBlock(e)
		b.state, b.note = toolDenied, e.Text
		if m.asking != nil && m.asking.block == b {
			m.asking = nil
		}
	case agent.EventModeSwitch:
		m.mode = string(agent.ModePTK)
		m.notice("switched to the ptk text protocol: " + e.Text)
	case agent.EventFinal:
		if m.open != nil && m.open.kind == blockText {
			m.closeOpen()
		} else if last := m.lastText(); last == nil || last.text.String() != e.Text {
			b := m.add(&block{kind: blockText, done: true})
			b.text.WriteString(e.Text)
		}
	case agent.EventDone:
		m.done(e.Run, msg.err)
	}
}

// lastText is the last answer of this run, if it is the last block.
func (m *Model) lastText() *block {
	if n := len(m.blocks); n > 0 && m.blocks[n-1].kind == blockText {
		return m.blocks[n-1]
	}
	return nil
}

// done ends the run: its messages become the conversation.
func (m *Model) done(res *agent.Result, err error) {
	m.closeOpen()
	m.running, m.cancel = false, nil
	if m.asking != nil {
		m.asking = nil
	}
	for _, b := range m.calls {
		if b.state <= toolRunning {
			b.state = toolInterrupted
			b.touch()
		}
	}
	if res != nil {
		if len(res.Messages) > 0 {
			m.history = res.Messages
		}
		m.cost += res.Cost
		if res.Mode != "" && m.opts.Mode != agent.ModePTK && m.opts.Mode != agent.ModeNative {
			m.mode = "auto:" + string(res.Mode)
		}
	}
	m.keep()
	switch {
	case err == nil:
	case m.stopping || errors.Is(err, context.Canceled):
		m.notice("interrupted: the conversation keeps what was done; send a message to go on")
	default:
		msg := ""
		if m.cfg.Hint != nil {
			msg = m.cfg.Hint(err)
		}
		if msg == "" {
			msg = err.Error()
		}
		m.errorBlock(msg)
	}
	m.stopping = false
}

// ask shows an approval question on the call's panel.
func (m *Model) ask(msg askMsg) {
	if !m.running || m.stopping {
		msg.reply <- "n"
		return
	}
	var b *block
	for _, c := range m.calls {
		if c.call.ID == msg.call.ID && (b == nil || c.index < b.index) && c.state < toolDone {
			b = c
		}
	}
	if b == nil {
		b = m.add(&block{kind: blockTool, index: -1, call: msg.call})
		b.subject = m.subjectOf(msg.call)
	}
	b.state = toolAsking
	b.preview = preview(msg.call)
	b.why = msg.why
	b.touch()
	m.asking = &approval{call: msg.call, block: b, reply: msg.reply}
	m.scroll = 0
}

// answer answers the approval question: "y", "n" or "a".
func (m *Model) answer(s string) {
	a := m.asking
	m.asking = nil
	a.reply <- s
	if s == "n" {
		a.block.state = toolDenied
		a.block.note = "you said no"
	} else {
		a.block.state = toolWaiting
	}
	a.block.touch()
}

// callBlock is the panel of the event's call in this iteration, made when
// the call is new.
func (m *Model) callBlock(e agent.Event) *block {
	b := m.calls[e.Index]
	if b == nil {
		b = m.add(&block{kind: blockTool, index: e.Index})
		m.calls[e.Index] = b
	}
	if e.Call != nil && (e.Call.Tool != "" || len(e.Call.Args) > 0) {
		b.call = *e.Call
		b.subject = m.subjectOf(b.call)
	}
	b.touch()
	return b
}

func (m *Model) subjectOf(c ptk.Call) tool.Subject {
	for _, t := range m.opts.Tools {
		if t.Info().Name == c.Tool {
			return tool.SubjectOf(t, c.Args)
		}
	}
	return tool.Subject{}
}

// closeOpen marks the answer or reasoning being written complete.
func (m *Model) closeOpen() {
	if m.open != nil {
		m.open.done = true
		m.open.touch()
		m.open = nil
	}
}

func (m *Model) add(b *block) *block {
	b.dirty = true
	m.blocks = append(m.blocks, b)
	return b
}

func (m *Model) notice(s string) {
	m.add(&block{kind: blockNotice}).text.WriteString(s)
}

func (m *Model) errorBlock(s string) {
	m.add(&block{kind: blockError}).text.WriteString(s)
}

// showMessage shows a message of an earlier conversation; a tool
// message's result goes on its call's panel.
func (m *Model) showMessage(msg ptk.Message) {
	switch msg.Role {
	case ptk.RoleUser:
		m.add(&block{kind: blockUser}).text.WriteString(msg.Content)
	case ptk.RoleAssistant:
		if strings.TrimSpace(msg.Content) != "" {
			m.add(&block{kind: blockText, done: true}).text.WriteString(msg.Content)
		}
		for i, c := range msg.Calls {
			b := m.add(&block{kind: blockTool, index: i, call: c, state: toolWaiting})
			b.subject = m.subjectOf(c)
		}
	case ptk.RoleTool:
		for i := len(m.blocks) - 1; i >= 0; i-- {
			if b := m.blocks[i]; b.kind == blockTool && b.call.ID == msg.CallID && b.state == toolWaiting {
				b.result, b.state = msg.Content, toolDone
				if msg.IsError {
					b.state = toolFailed
				}
				break
			}
		}
	}
}

func (m *Model) resize(w, h int) {
	m.width, m.height = max(w, 20), max(h, 8)
	m.input.SetWidth(m.width)
}

// inputHeight is the input box's height, its rule included.
func (m *Model) inputHeight() int { return m.input.Height() + 1 }

// convHeight is the height of the conversation's part of the screen.
func (m *Model) convHeight() int { return max(m.height-m.inputHeight()-1, 1) }

// View draws the screen: the end of the conversation (scrolled), the
// input box and the status line. Only the blocks on screen are rendered,
// each from its cache unless it changed.
func (m *Model) View() tea.View {
	var b strings.Builder
	for _, l := range m.conversation() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(m.st.border.Render(strings.Repeat("─", m.width)))
	b.WriteByte('\n')
	b.WriteString(m.input.View())
	b.WriteByte('\n')
	b.WriteString(m.statusLine())
	v := tea.NewView(b.String())
	v.AltScreen = true
	v.WindowTitle = "ptk chat"
	return v
}

// conversation returns the convHeight lines on screen.
func (m *Model) conversation() []string {
	h := m.convHeight()
	k := renderKey{width: m.width, expand: m.expand, reason: m.reason, frame: m.frame}
	need := h + m.scroll
	var rev [][]string // blocks' lines, from the last
	n := 0
	for i := len(m.blocks) - 1; i >= 0 && n < need; i-- {
		ls := m.blocks[i].render(k, m.st)
		rev = append(rev, ls)
		n += len(ls) + 1 // a blank line between blocks
	}
	lines := make([]string, 0, n)
	for i := len(rev) - 1; i >= 0; i-- {
		lines = append(lines, rev[i]...)
		if i > 0 {
			lines = append(lines, "")
		}
	}
	if m.scroll > max(len(lines)-h, 0) {
		m.scroll = max(len(lines)-h, 0)
	}
	end := len(lines) - m.scroll
	start := max(end-h, 0)
	out := lines[start:end]
	for len(out) < h {
		out = append([]string{""}, out...)
	}
	return out
}

// statusLine says the model, the mode, the tokens, the cost, the
// iteration and what runs.
func (m *Model) statusLine() string {
	parts := []string{m.opts.ModelName, m.mode,
		count(m.usage.PromptTokens+m.usage.CompletionTokens) + " tok",
		fmt.Sprintf("$%.4f", m.cost)}
	if m.iteration > 0 {
		parts = append(parts, fmt.Sprintf("iter %d", m.iteration))
	}
	switch {
	case m.flash != "":
		parts = append(parts, m.flash)
	case m.asking != nil:
		parts = append(parts, "y/n/a answers, esc interrupts")
	case m.stopping:
		parts = append(parts, "interrupting…")
	case m.running:
		parts = append(parts, spinner[m.frame%len(spinner)]+" working · esc interrupts")
	case m.scroll > 0:
		parts = append(parts, fmt.Sprintf("scrolled up %d lines, pgdown", m.scroll))
	default:
		parts = append(parts, "/help")
	}
	s := " " + strings.Join(parts, " · ") + " "
	s = ansi.Truncate(s, m.width, "…")
	if pad := m.width - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return m.st.status.Render(s)
}

// count writes a number of tokens short: 950, 12.3k, 1.2M.
func count(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
}

// keep appends what the conversation gained since the last write to the
// Store, after what it held then (and what other runs added since).
func (m *Model) keep() {
	if m.cfg.Store == nil || m.cfg.Conversation == "" || m.kept > len(m.history) || m.kept == len(m.history) {
		return
	}
	ctx := context.Background()
	if err := m.cfg.Store.Append(ctx, m.cfg.Conversation, m.stored, m.history[m.kept:]); err != nil {
		m.errorBlock("the conversation was not saved: " + err.Error())
		return
	}
	m.kept = len(m.history)
	if stored, err := m.cfg.Store.Load(ctx, m.cfg.Conversation); err == nil {
		m.stored = stored
	}
}
