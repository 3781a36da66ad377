package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/internal/term"
)

// Conversations keeps a workspace's conversations: the trace store in ptk
// chat (each saved with the workspace), MemoryConversations without one.
type Conversations interface {
	agent.Store
	// List returns the workspace's conversations, the last updated first.
	List(ctx context.Context) ([]Summary, error)
	// Delete deletes a conversation.
	Delete(ctx context.Context, id string) error
}

// Summary is a conversation as /conversations lists it.
type Summary struct {
	ID       string
	Updated  time.Time
	Messages int
	// Title is its first message, on one line.
	Title string
}

// Title is a conversation's title: its first message from the user, on
// one line, without the files it attached.
func Title(msgs []ptk.Message) string {
	for _, m := range msgs {
		if m.Role == ptk.RoleUser {
			text, _ := splitAttached(m.Content)
			return oneLine(text)
		}
	}
	return ""
}

// MemoryConversations keeps conversations in memory, for one session. Its
// zero value is ready to use.
type MemoryConversations struct {
	mu    sync.Mutex
	convs map[string]memoryConv
}

type memoryConv struct {
	msgs    []ptk.Message
	updated time.Time
}

var _ Conversations = (*MemoryConversations)(nil)

func (c *MemoryConversations) Load(_ context.Context, id string) ([]ptk.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.convs[id].msgs), nil
}

func (c *MemoryConversations) Save(_ context.Context, id string, msgs []ptk.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.convs == nil {
		c.convs = map[string]memoryConv{}
	}
	c.convs[id] = memoryConv{slices.Clone(msgs), time.Now()}
	return nil
}

func (c *MemoryConversations) Append(_ context.Context, id string, base, msgs []ptk.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	held := c.convs[id].msgs
	if !agent.HasPrefix(held, base) {
		return agent.ErrConversationChanged
	}
	if c.convs == nil {
		c.convs = map[string]memoryConv{}
	}
	c.convs[id] = memoryConv{append(slices.Clip(slices.Clone(held)), msgs...), time.Now()}
	return nil
}

func (c *MemoryConversations) List(context.Context) ([]Summary, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Summary
	for id, conv := range c.convs {
		out = append(out, Summary{ID: id, Updated: conv.updated, Messages: len(conv.msgs), Title: Title(conv.msgs)})
	}
	slices.SortFunc(out, func(a, b Summary) int { return b.Updated.Compare(a.Updated) })
	return out, nil
}

func (c *MemoryConversations) Delete(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.convs[id]; !ok {
		return errors.New("no conversation " + id)
	}
	delete(c.convs, id)
	return nil
}

// picker is the list /conversations opens.
type picker struct {
	items []Summary
	sel   int
}

// maxPicked is how many conversations the picker shows at once.
const maxPicked = 10

// openPicker lists the workspace's conversations to choose one.
func (m *Model) openPicker() {
	items, err := m.cfg.Conversations.List(context.Background())
	if err != nil {
		m.errorBlock("/conversations: " + err.Error())
		return
	}
	if !slices.ContainsFunc(items, func(s Summary) bool { return s.ID == m.conv }) {
		// this one, not saved yet
		items = append([]Summary{{ID: m.conv, Updated: time.Now(), Messages: len(m.history), Title: Title(m.history)}}, items...)
	}
	p := &picker{items: items}
	for i, s := range items {
		if s.ID == m.conv {
			p.sel = i
		}
	}
	m.picker = p
}

func (m *Model) pickerKey(s string) tea.Cmd {
	p := m.picker
	switch s {
	case "up", "ctrl+p", "k":
		p.sel = max(p.sel-1, 0)
	case "down", "ctrl+n", "j":
		p.sel = min(p.sel+1, len(p.items)-1)
	case "esc", "q":
		m.picker = nil
	case "enter":
		m.picker = nil
		m.switchTo(p.items[p.sel].ID)
	case "ctrl+c":
		m.picker = nil
		m.quitArmed = true
		m.flash = "ctrl+c again quits"
	}
	return nil
}

// switchTo makes the conversation id the one on screen.
func (m *Model) switchTo(id string) {
	if id == m.conv {
		return
	}
	msgs, err := m.cfg.Conversations.Load(context.Background(), id)
	if err != nil {
		m.errorBlock("conversation " + id + ": " + err.Error())
		return
	}
	prev := m.conv
	m.load(id, msgs)
	m.notice(fmt.Sprintf("conversation %q (%d messages); %q is kept", id, len(msgs), prev))
}

func (m *Model) pickerLines() []string {
	p := m.picker
	out := []string{m.st.heading.Render(fmt.Sprintf("Conversations in this workspace (%d), %s", len(p.items), m.whereKept()))}
	from := max(0, min(p.sel-maxPicked/2, len(p.items)-maxPicked))
	for i := from; i < len(p.items) && i < from+maxPicked; i++ {
		s := p.items[i]
		cur := " "
		if s.ID == m.conv {
			cur = "•"
		}
		line := fmt.Sprintf("%s %-26s %8s  %3d msgs  %s", cur, term.Text(s.ID), ago(s.Updated), s.Messages, term.Text(s.Title))
		if i == p.sel {
			line = m.st.key.Render("›" + line)
		} else {
			line = " " + line
		}
		out = append(out, truncate(line, m.width))
	}
	out = append(out, m.st.dim.Render("  ↑ ↓ choose · enter opens · esc closes"))
	return out
}

// whereKept says where conversations are kept.
func (m *Model) whereKept() string {
	if m.cfg.StoreName == "" {
		return "kept in memory for this session only"
	}
	return "kept in " + m.cfg.StoreName
}

// ago says how long ago t was, short.
func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Format("Jan 2")
}

// newConversation starts a new conversation; the one on screen is kept
// (it was saved after its last run).
func (m *Model) newConversation(said string) {
	prev, n := m.conv, len(m.history)
	id := m.cfg.NewName()
	for i := 2; id == prev; i++ {
		id = fmt.Sprintf("%s-%d", m.cfg.NewName(), i)
	}
	m.load(id, nil)
	m.queue = nil
	switch {
	case said != "":
		m.notice(said)
	case n > 0:
		m.notice(fmt.Sprintf("a new conversation, %s; the one before, %s (%d messages), is kept: /conversations lists them", id, prev, n))
	default:
		m.notice("a new conversation, " + id)
	}
}

func truncate(s string, w int) string { return ansi.Truncate(s, w, "…") }

// runsWhileWorking reports whether a slash command may run while the
// model works: those that only show something, copy, or quit.
func runsWhileWorking(line string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch name {
	case "/help", "/cost", "/tools", "/copy", "/exit", "/quit", "/approval":
		return true
	}
	return false
}
