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
//
// Conversations are kept (Conversations) after every run, and /new,
// /clear, /conversations and /undo move between them; messages typed while
// the model works wait in a queue; @path mentions complete from the
// workspace and attach the files; a checkpoint (package checkpoint) before
// each turn that changes files lets /undo put them back.
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
	"github.com/ptkit/ptk/checkpoint"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/tool"
)

// Config is what a chat needs.
type Config struct {
	// Options configure every run: the model, the tools, the limits, the
	// approver (whose question should be Model.Ask). Instructions are the
	// system prompt's own part; the approval preset's are added to them.
	Options agent.Options
	// Conversation names the conversation; Conversations keeps it and the
	// workspace's others (nil: kept in memory for the session).
	Conversation  string
	Conversations Conversations
	// StoreName says where Conversations keeps them ("the trace store
	// ~/.local/share/ptk/traces.db"); "": in memory, for this session
	// only.
	StoreName string
	// History is the conversation so far, to continue: what Store holds
	// for Conversation (Store.Load).
	History []ptk.Message
	// NewName names a new conversation (/new); default chat-DATE-TIME.
	NewName func() string
	// Files are the workspace's files, for @path mentions; nil: none.
	Files Files
	// Checkpoints and Guard undo turns (/undo): Options.Tools are wrapped
	// by Guard (checkpoint.Guard.Wrap), which takes a checkpoint before a
	// turn's first change. nil: /undo only goes back in the conversation.
	Checkpoints *checkpoint.Store
	Guard       *checkpoint.Guard
	// Approval is the approval preset the chat starts in; SetApproval
	// changes the approver's (shift+tab, /approval). nil SetApproval: it
	// cannot be changed.
	Approval    tool.Preset
	SetApproval func(tool.Preset)
	// Editor is the command Ctrl+G edits the message with ($VISUAL or
	// $EDITOR, split on spaces); empty: Ctrl+G says how to set one.
	Editor []string
	// Resolve finds a model by name, for /model; nil: /model is not
	// available.
	Resolve func(name string) (llm.Model, error)
	// Hint turns a run's error into a one-line fix (no server at the base
	// URL, a wrong key), or "" when it has none.
	Hint func(error) string
	// Observe, when set, returns the observer of one run (the trace
	// store's recorder), told each event on the run's goroutine.
	Observe func(conversation, prompt string, opts agent.Options) func(agent.Event, error)
	// Run starts a run; default agent.Stream. Tests replace it.
	Run func(ctx context.Context, history []ptk.Message, opts agent.Options) iter.Seq2[agent.Event, error]
}

// Model is the chat's state: a tea.Model.
type Model struct {
	cfg    Config
	opts   agent.Options
	st     *styles
	events chan tea.Msg
	quit   chan struct{} // closed by exit: nothing waits for the screen
	gone   chan struct{} // closed by Close: nothing reads events

	width, height int
	blocks        []*block
	input         textarea.Model
	conv          string // the conversation's name
	history       []ptk.Message
	// saved is how many of history the store held after this chat's last
	// write (or load), and stored what it held then: the next write
	// appends the rest after it, keeping what other runs (another ptk run
	// --conversation) added meanwhile.
	saved  int
	stored []ptk.Message
	sent   []string
	histAt int
	preset tool.Preset

	// The current run.
	running   bool
	run       int        // counts runs; events of an older run are dropped
	runTools  []ptk.Tool // the run's tools, which Ask reads on its goroutine
	cancel    context.CancelFunc
	stopping  bool
	iteration int
	calls     map[int]*block // this iteration's calls by index
	open      *block         // the answer or reasoning being written
	asking    *approval
	frame     int
	ticking   bool
	queue     []string // messages sent while the model works

	// Totals of the session.
	usage        ptk.Usage
	cost         float64
	mode         string
	checkpointed bool // a turn took a checkpoint (said once)
	// fill is the context window's fill as the last run or compaction
	// left it (Window 0: not known); compacting marks a /compact going.
	fill       agent.Fill
	compacting bool

	top            *anchor // the conversation's top line when scrolled up; nil: the end
	below          bool    // output came below the view while scrolled up
	expand, reason bool
	quitArmed      bool
	flash          string

	confirm  *confirm
	picker   *picker
	complete *completion
	files    []string // the workspace's files, read at the first @ after a run
}

// approval is a question from the run's approver, waiting for the user.
type approval struct {
	call  ptk.Call
	block *block
	reply chan string
}

// confirm is a yes-or-no question of the chat's own (/clear).
type confirm struct {
	block *block
	yes   func() tea.Cmd
}

// Messages that come from the run's goroutine.
type (
	eventMsg struct {
		run int
		e   agent.Event
		err error
		// preview is, for EventCallEnd, what the call would change,
		// worked out before it can run.
		preview string
	}
	askMsg struct {
		call    ptk.Call
		why     string // why the user is asked, or ""
		preview string
		reply   chan string
	}
	tickMsg   struct{}
	editedMsg struct {
		text string
		err  error
	}
)

var _ tea.Model = (*Model)(nil)

// New returns a chat over cfg, 80×24 until the terminal says its size.
func New(cfg Config) *Model {
	if cfg.Run == nil {
		cfg.Run = agent.Stream
	}
	if cfg.Conversations == nil {
		cfg.Conversations = &MemoryConversations{}
	}
	if cfg.NewName == nil {
		cfg.NewName = func() string { return "chat-" + time.Now().Format("2006-01-02-150405") }
	}
	if cfg.Conversation == "" {
		cfg.Conversation = cfg.NewName()
	}
	if cfg.Approval == "" {
		cfg.Approval = tool.PresetAsk
	}
	in := textarea.New()
	in.Placeholder = "Ask, or /help. Enter sends, alt+enter a new line, @ mentions a file."
	in.ShowLineNumbers = false
	in.Prompt = "┃ "
	in.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "shift+enter", "ctrl+j"))
	in.KeyMap.LinePrevious = key.NewBinding(key.WithKeys("up"))
	in.KeyMap.LineNext = key.NewBinding(key.WithKeys("down"))
	in.SetHeight(3)
	in.Focus()
	m := &Model{
		cfg:    cfg,
		opts:   cfg.Options,
		st:     newStyles(),
		events: make(chan tea.Msg, 64),
		quit:   make(chan struct{}),
		gone:   make(chan struct{}),
		input:  in,
		calls:  map[int]*block{},
		mode:   string(cfg.Options.Mode),
		preset: cfg.Approval,
	}
	if m.mode == "" {
		m.mode = string(agent.ModeAuto)
	}
	m.resize(80, 24)
	m.load(cfg.Conversation, cfg.History)
	if n := len(cfg.History); n > 0 {
		m.notice(fmt.Sprintf("continuing conversation %q (%d messages)", cfg.Conversation, n))
	}
	return m
}

// load makes conv, with its messages, the conversation on screen.
func (m *Model) load(conv string, history []ptk.Message) {
	m.conv, m.history, m.saved, m.stored = conv, slices.Clone(history), len(history), slices.Clone(history)
	m.blocks, m.top, m.below = nil, nil, false
	for _, msg := range m.history {
		m.showMessage(msg)
	}
	for _, b := range m.blocks {
		if b.kind == blockTool && b.state == toolWaiting {
			b.state = toolInterrupted
		}
	}
}

// Note shows a notice, before the chat starts.
func (m *Model) Note(s string) { m.notice(s) }

// Conversation is the name of the conversation on screen, and how many
// messages it has.
func (m *Model) Conversation() (string, int) { return m.conv, len(m.history) }

// Ask asks the user whether call may run, on the screen, saying why (when
// why is not ""): it is the approver's question (called on the run's
// goroutine), and returns "y", "n" or "a", or ctx's error when the run is
// canceled first.
func (m *Model) Ask(ctx context.Context, call ptk.Call, why string) (string, error) {
	reply := make(chan string, 1)
	msg := askMsg{call: call, why: why, reply: reply, preview: previewOf(ctx, m.runTools, call)}
	select {
	case m.events <- msg:
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
	case <-m.quit:
		return "n", nil
	}
}

// previewOf is what call would change, from its tool (tool.Previewer: the
// diff against the file as it is), else from its arguments; a call that
// would fail says why. It reads files: it runs on the run's goroutine.
func previewOf(ctx context.Context, tools []ptk.Tool, c ptk.Call) string {
	for _, t := range tools {
		if t.Info().Name != c.Tool {
			continue
		}
		if p, ok := tool.As[tool.Previewer](t); ok {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			d, err := p.Preview(ctx, c.Args)
			if err != nil {
				return "✗ this call will fail: " + err.Error()
			}
			return d
		}
	}
	return preview(c)
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
		cmd := m.event(msg)
		return m, tea.Batch(m.wait, m.tick(), cmd)
	case askMsg:
		m.ask(msg)
		return m, m.wait
	case compactedMsg:
		cmd := m.compacted(msg)
		return m, tea.Batch(m.wait, cmd)
	case tickMsg:
		m.ticking = false
		m.frame++
		return m, m.tick()
	case editedMsg:
		if msg.err != nil {
			m.errorBlock("the editor: " + msg.err.Error())
		} else {
			m.input.SetValue(strings.TrimRight(msg.text, "\n"))
		}
		return m, nil
	case tea.PasteMsg:
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		m.updateCompletion()
		return m, cmd
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scrollUp(3)
		case tea.MouseWheelDown:
			m.scrollDown(3)
		}
		return m, nil
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
	if m.confirm != nil {
		switch s {
		case "y", "n", "esc":
			c := m.confirm
			m.confirm = nil
			if s == "y" {
				c.block.text.WriteString(" yes")
				c.block.touch()
				return m, c.yes()
			}
			c.block.text.WriteString(" no: nothing was deleted")
			c.block.touch()
			return m, nil
		case "ctrl+c":
		default:
			m.flash = "y or n"
			return m, nil
		}
	}
	if m.picker != nil {
		return m, m.pickerKey(s)
	}
	if m.complete != nil && len(m.complete.items) > 0 {
		switch s {
		case "tab":
			m.acceptCompletion()
			return m, nil
		case "up", "ctrl+p":
			m.complete.sel = (m.complete.sel + len(m.complete.items) - 1) % len(m.complete.items)
			return m, nil
		case "down", "ctrl+n":
			m.complete.sel = (m.complete.sel + 1) % len(m.complete.items)
			return m, nil
		case "esc":
			m.complete.dismissed = true
			m.complete.items = nil
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
	case "ctrl+d":
		if m.input.Value() == "" {
			return m, m.exit()
		}
	case "esc":
		if m.running {
			m.interrupt()
		}
		return m, nil
	case "enter":
		return m, m.submit()
	case "shift+tab":
		m.cyclePreset()
		return m, nil
	case "ctrl+g":
		return m, m.edit()
	case "ctrl+y":
		return m, m.copyAnswer()
	case "pgup":
		m.scrollUp(max(m.convHeight()-2, 1))
		return m, nil
	case "pgdown":
		m.scrollDown(max(m.convHeight()-2, 1))
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
	m.updateCompletion()
	return m, cmd
}

// exit ends the chat, stopping the run; Close then waits for it.
func (m *Model) exit() tea.Cmd {
	if m.cancel != nil {
		m.cancel()
		m.stopping = true
	}
	select {
	case <-m.quit:
	default:
		close(m.quit)
	}
	return tea.Quit
}

// Close ends the chat after its screen is gone: a run that was going is
// waited for (it was canceled), at most a few seconds, so that what it did
// is kept in the conversation with the interruption marked.
func (m *Model) Close() {
	select {
	case <-m.quit:
	default:
		m.exit()
	}
	deadline := time.After(5 * time.Second)
	for m.running {
		select {
		case msg := <-m.events:
			switch msg := msg.(type) {
			case eventMsg:
				m.event(msg)
			case compactedMsg:
				m.compacted(msg)
			case askMsg:
				msg.reply <- "n"
			}
		case <-deadline:
			m.running = false
		}
	}
	select {
	case <-m.gone:
	default:
		close(m.gone)
	}
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

// submit sends the input: a slash command, or a message that starts a run
// (or waits in the queue while one goes).
func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.input.Value())
	if text == "" {
		return nil
	}
	if strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//") {
		if m.running && !runsWhileWorking(text) {
			m.flash = "the assistant is working: that command waits for the end of the run (esc interrupts)"
			return nil
		}
		m.input.Reset()
		m.remember(text)
		return m.command(text)
	}
	m.input.Reset()
	m.complete = nil
	m.remember(text)
	text = strings.TrimPrefix(text, "/") // "//x" sends "/x"
	if m.running {
		m.queue = append(m.queue, text)
		return nil
	}
	return m.start(text)
}

// remember keeps what was sent, for ↑ and ↓.
func (m *Model) remember(text string) {
	if len(m.sent) == 0 || m.sent[len(m.sent)-1] != text {
		m.sent = append(m.sent, text)
	}
	m.histAt = len(m.sent)
}

// start starts a run that answers text.
func (m *Model) start(text string) tea.Cmd {
	m.top, m.below = nil, false
	content, attached, problems := m.attach(text)
	b := m.add(&block{kind: blockUser})
	b.text.WriteString(text)
	b.attached = attached
	for _, p := range problems {
		m.errorBlock(p)
	}
	turnStart := len(m.history)
	history := append(slices.Clone(m.history), ptk.Message{Role: ptk.RoleUser, Content: content})
	ctx, cancel := context.WithCancel(context.Background())
	m.run++
	m.running, m.cancel, m.stopping = true, cancel, false
	m.iteration, m.open = 0, nil
	clear(m.calls)
	opts := m.opts
	opts.Instructions = joinText(opts.Instructions, m.preset.Instructions())
	m.runTools = opts.Tools
	if m.cfg.Guard != nil {
		m.cfg.Guard.Begin(checkpoint.Meta{Conversation: m.conv, Messages: turnStart, Prompt: text})
	}
	var observe func(agent.Event, error)
	if m.cfg.Observe != nil {
		observe = m.cfg.Observe(m.conv, content, opts)
	}
	run, events, gone := m.run, m.events, m.gone
	seq := m.cfg.Run(ctx, history, opts)
	go func() {
		defer cancel()
		for e, err := range seq {
			if observe != nil {
				observe(e, err)
			}
			msg := eventMsg{run: run, e: e, err: err}
			if e.Kind == agent.EventCallEnd && e.Call != nil && e.Err == nil {
				// The run waits here: the call has not run yet.
				msg.preview = previewOf(ctx, opts.Tools, *e.Call)
			}
			select {
			case events <- msg:
			case <-gone:
				return
			}
		}
	}()
	return m.tick()
}

// joinText joins the texts that are not blank, with a blank line.
func joinText(texts ...string) string {
	var out []string
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n\n")
}

// event shows one event of the run; the end of a run may start the next,
// from the queue.
func (m *Model) event(msg eventMsg) tea.Cmd {
	if msg.run != m.run {
		return nil
	}
	if m.top != nil {
		m.below = true
	}
	e := msg.e
	switch e.Kind {
	case agent.EventContext:
		if e.Fill != nil && e.Fill.Window > 0 {
			m.fill = *e.Fill
		}
	case agent.EventCompact:
		if c := e.Compaction; c != nil {
			m.closeOpen()
			m.dimNotice(describeCompaction(c))
			m.fill = agent.Fill{Tokens: c.After, Window: c.Window}
		}
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
		if msg.preview != "" {
			b.preview = msg.preview
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
		return m.done(e.Run, msg.err)
	}
	return nil
}

// lastText is the last answer of this run, if it is the last block.
func (m *Model) lastText() *block {
	if n := len(m.blocks); n > 0 && m.blocks[n-1].kind == blockText {
		return m.blocks[n-1]
	}
	return nil
}

// Interrupted marks, in the conversation, an answer the user interrupted:
// what was written of it is kept, followed by this line.
const Interrupted = "[interrupted by the user]"

// done ends the run: its messages become the conversation, which is
// saved; the queue's messages are sent next.
func (m *Model) done(res *agent.Result, err error) tea.Cmd {
	partial := ""
	if m.open != nil && m.open.kind == blockText {
		partial = m.open.text.String()
	}
	m.closeOpen()
	m.running, m.cancel = false, nil
	m.asking = nil
	for _, b := range m.calls {
		if b.state <= toolRunning {
			b.state = toolInterrupted
			b.touch()
		}
	}
	interrupted := err != nil && (m.stopping || errors.Is(err, context.Canceled))
	m.files = nil // the run may have made or removed files: @ lists them again
	if res != nil {
		if len(res.Messages) > 0 {
			m.history = res.Messages
		}
		m.cost += res.Cost
		if res.Mode != "" && m.opts.Mode != agent.ModePTK && m.opts.Mode != agent.ModeNative {
			m.mode = "auto:" + string(res.Mode)
		}
	}
	if interrupted {
		// What was written of the answer stays, marked, so that the
		// model knows it was stopped and the conversation reads right.
		text := Interrupted
		if n := len(m.history); strings.TrimSpace(partial) != "" && (n == 0 || m.history[n-1].Role != ptk.RoleAssistant || m.history[n-1].Content != partial) {
			text = strings.TrimRight(partial, "\n") + "\n\n" + Interrupted
		}
		m.history = append(m.history, ptk.Message{Role: ptk.RoleAssistant, Content: text})
		if t := m.lastText(); t != nil && partial != "" {
			t.interrupted = true
			t.touch()
		}
	}
	m.save()
	if m.cfg.Guard != nil {
		c, cerr := m.cfg.Guard.End()
		switch {
		case cerr != nil:
			m.errorBlock("no checkpoint of this turn, so /undo cannot put its files back: " + cerr.Error())
		case c != nil && !m.checkpointed:
			m.checkpointed = true
			m.dimNotice(fmt.Sprintf("checkpoint %s: the files as they were before this turn; /undo puts them back", c.Short()))
		}
	}
	switch {
	case err == nil:
	case interrupted:
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
	return m.next(err)
}

// next sends the queue's messages, as one, when the run or compaction
// that ended did not fail; else it puts them back in the input.
func (m *Model) next(err error) tea.Cmd {
	if len(m.queue) == 0 {
		return nil
	}
	queued := strings.Join(m.queue, "\n\n")
	m.queue = nil
	if err != nil {
		// Stopped or failed: the queue is the user's to send again.
		m.input.SetValue(joinText(queued, m.input.Value()))
		m.notice("the messages you queued are back in the input: enter sends them")
		return nil
	}
	return m.start(queued)
}

// save keeps what the conversation gained since the last write, appended
// after what the store held then (agent.Store.Append: what other runs
// added meanwhile stays); one that never had a message is not made.
func (m *Model) save() {
	if m.saved >= len(m.history) {
		return
	}
	ctx := context.Background()
	if err := m.cfg.Conversations.Append(ctx, m.conv, m.stored, m.history[m.saved:]); err != nil {
		m.errorBlock("the conversation was not saved: " + err.Error())
		return
	}
	m.saved = len(m.history)
	if stored, err := m.cfg.Conversations.Load(ctx, m.conv); err == nil {
		m.stored = stored
	}
}

// cutTurn takes the conversation back to before its message at last
// (/undo), on the screen and in the store. The store loses the turn's
// messages only: what other runs appended before them stays (and is
// shown); when others were appended after them, the store is left as it
// is, and the error says so.
func (m *Model) cutTurn(last int) error {
	ctx := context.Background()
	turn := m.history[last:]
	held, err := m.cfg.Conversations.Load(ctx, m.conv)
	if err != nil {
		m.history = m.history[:last]
		return err
	}
	if len(held) < len(turn) || !agent.HasPrefix(held[len(held)-len(turn):], turn) {
		m.history = m.history[:last]
		m.stored = held
		m.saved = len(m.history)
		return errors.New("other runs added to it after this turn, so it is left as it is in the store")
	}
	kept := slices.Clone(held[:len(held)-len(turn)])
	if err := m.cfg.Conversations.Save(ctx, m.conv, kept); err != nil {
		m.history = m.history[:last]
		return err
	}
	m.history, m.stored, m.saved = kept, slices.Clone(kept), len(kept)
	return nil
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
	if msg.preview != "" {
		b.preview = msg.preview
	}
	b.why = msg.why
	b.touch()
	m.asking = &approval{call: msg.call, block: b, reply: msg.reply}
	m.top, m.below = nil, false
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

func (m *Model) notice(s string) *block {
	b := m.add(&block{kind: blockNotice})
	b.text.WriteString(s)
	return b
}

func (m *Model) dimNotice(s string) {
	m.add(&block{kind: blockNotice, dim: true}).text.WriteString(s)
}

func (m *Model) errorBlock(s string) {
	m.add(&block{kind: blockError}).text.WriteString(s)
}

// showMessage shows a message of an earlier conversation; a tool
// message's result goes on its call's panel.
func (m *Model) showMessage(msg ptk.Message) {
	switch msg.Role {
	case ptk.RoleUser:
		if msg.Compacted > 0 {
			m.dimNotice(fmt.Sprintf("— the first %d messages of this conversation are compacted: the model is sent its notes of them instead —", msg.Compacted))
			return
		}
		text, attached := splitAttached(msg.Content)
		b := m.add(&block{kind: blockUser, attached: attached})
		b.text.WriteString(text)
	case ptk.RoleAssistant:
		content, interrupted := strings.CutSuffix(strings.TrimRight(msg.Content, "\n"), Interrupted)
		if strings.TrimSpace(content) != "" {
			b := m.add(&block{kind: blockText, done: true, interrupted: interrupted})
			b.text.WriteString(strings.TrimRight(content, "\n"))
		} else if interrupted {
			m.dimNotice("(interrupted before it answered)")
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
func (m *Model) convHeight() int {
	return max(m.height-m.inputHeight()-1-len(m.overlay()), 1)
}

// View draws the screen: the conversation (its end, or where it is
// scrolled to), what sits over the input (the queue, completions, the
// conversations picker), the input box and the status line. Only the
// blocks on screen are rendered, each from its cache unless it changed.
func (m *Model) View() tea.View {
	var b strings.Builder
	for _, l := range m.conversation() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for _, l := range m.overlay() {
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
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "ptk chat"
	return v
}

// overlay is what sits between the conversation and the input: the
// conversations picker, the completions of an @ mention, the queue.
func (m *Model) overlay() []string {
	var out []string
	if m.picker != nil {
		out = append(out, m.pickerLines()...)
	}
	if m.complete != nil && len(m.complete.items) > 0 {
		out = append(out, m.completionLines()...)
	}
	for i, q := range m.queue {
		if i == 3 {
			out = append(out, m.st.dim.Render(fmt.Sprintf("  … %d more queued", len(m.queue)-3)))
			break
		}
		line := "⧗ queued: " + oneLine(q)
		out = append(out, m.st.dim.Render(ansi.Truncate(line, m.width, "…")))
	}
	// never more than half the screen
	if limit := max(m.height/2, 1); len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}

// statusLine says the model, the mode, the approval preset, the tokens,
// the cost (when there is one), the iteration and what runs.
func (m *Model) statusLine() string {
	parts := []string{m.opts.ModelName, m.mode, string(m.preset),
		count(m.usage.PromptTokens+m.usage.CompletionTokens) + " tok"}
	if m.cost > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", m.cost))
	}
	if m.fill.Window > 0 {
		pct := fmt.Sprintf("%d%%", m.fill.Percent())
		if m.fill.Percent() == 0 && m.fill.Tokens > 0 {
			pct = "<1%"
		}
		parts = append(parts, "ctx "+pct+" of "+count(m.fill.Window))
	}
	if m.iteration > 0 {
		parts = append(parts, fmt.Sprintf("iter %d", m.iteration))
	}
	if n := len(m.queue); n > 0 {
		parts = append(parts, fmt.Sprintf("%d queued", n))
	}
	switch {
	case m.flash != "":
		parts = append(parts, m.flash)
	case m.asking != nil:
		parts = append(parts, "y/n/a answers, esc interrupts")
	case m.confirm != nil:
		parts = append(parts, "y or n")
	case m.picker != nil:
		parts = append(parts, "↑ ↓ enter opens, esc closes")
	case m.stopping:
		parts = append(parts, "interrupting…")
	case m.top != nil && m.below:
		parts = append(parts, "scrolled up, new output below: pgdown")
	case m.top != nil:
		parts = append(parts, "scrolled up: pgdown")
	case m.compacting:
		parts = append(parts, spinner[m.frame%len(spinner)]+" compacting · esc interrupts")
	case m.running:
		parts = append(parts, spinner[m.frame%len(spinner)]+" working · esc interrupts")
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
