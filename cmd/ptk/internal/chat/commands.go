package chat

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ptkit/ptk/agent"
)

const help = `commands:
  /model NAME          talk to another model (as --model)
  /mode ptk|native|auto  how the model calls tools
  /tools               the tools the model has
  /clear               start the conversation again
  /cost                tokens and cost so far
  /conversations       the conversation kept, and where
  /help                this
keys: enter sends · alt+enter or ctrl+j: new line · ↑ ↓ earlier messages ·
  esc interrupts the run · ctrl+c twice quits · pgup pgdn scroll ·
  ctrl+o shows whole tool results · ctrl+r shows reasoning ·
  y / n / a answers an approval (yes, no, always for that tool)`

// command runs a slash command.
func (m *Model) command(line string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/help":
		m.notice(help)
	case "/model":
		switch {
		case arg == "":
			m.notice("the model is " + m.opts.ModelName + "; /model NAME changes it")
		case m.cfg.Resolve == nil:
			m.errorBlock("/model is not available here")
		default:
			mod, err := m.cfg.Resolve(arg)
			if err != nil {
				m.errorBlock(err.Error())
				return nil
			}
			m.opts.Model, m.opts.ModelName = mod, arg
			m.notice("the model is now " + arg)
		}
	case "/mode":
		switch mode := agent.Mode(arg); mode {
		case agent.ModePTK, agent.ModeNative, agent.ModeAuto:
			m.opts.Mode, m.mode = mode, arg
			m.notice("mode " + arg)
		default:
			m.errorBlock("/mode takes ptk, native or auto")
		}
	case "/tools":
		var b strings.Builder
		b.WriteString("tools:")
		for _, t := range m.opts.Tools {
			info := t.Info()
			fmt.Fprintf(&b, "\n  %-11s", info.Name)
			if !info.ReadOnly {
				b.WriteString(" (asks first)")
			}
			desc, _, _ := strings.Cut(info.Description, ". ")
			b.WriteString(" " + desc)
		}
		m.notice(b.String())
	case "/clear":
		m.history, m.blocks = nil, nil
		m.stored, m.kept = nil, 0
		m.scroll = 0
		if m.cfg.Store != nil && m.cfg.Conversation != "" {
			if err := m.cfg.Store.Save(context.Background(), m.cfg.Conversation, nil); err != nil {
				m.errorBlock(err.Error())
			}
		}
		m.notice("a new conversation")
	case "/cost":
		m.notice(fmt.Sprintf("this session: %d prompt tokens, %d completion tokens, $%.4f",
			m.usage.PromptTokens, m.usage.CompletionTokens, m.cost))
	case "/conversations":
		where := "kept in memory for this session only"
		switch {
		case m.cfg.Store == nil || m.cfg.Conversation == "":
			where = "not kept"
		case m.cfg.StoreName != "":
			where = fmt.Sprintf("kept in %s: ptk chat --conversation %s resumes it", m.cfg.StoreName, m.cfg.Conversation)
		}
		m.notice(fmt.Sprintf("conversation %q: %d messages, %s", m.cfg.Conversation, len(m.history), where))
	default:
		m.errorBlock(fmt.Sprintf("no command %s; /help lists them", name))
	}
	return nil
}
