package chat

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/tool"
)

const help = `commands:
  /new                 a new conversation (this one is kept)
  /conversations       this workspace's conversations: pick one to go back to
  /clear               delete this conversation (asks first) and start a new one
  /undo                undo the last turn: its files as they were, the conversation before it
  /compact             replace the earlier conversation by the model's notes of it (frees the context window)
  /approval [MODE]     what runs without asking: plan, ask, auto-edit or yolo
  /model NAME          talk to another model (as --model)
  /mode ptk|native|auto  how the model calls tools
  /tools               the tools the model has
  /copy                copy the last answer to the clipboard
  /cost                tokens and cost so far
  /exit                quit (as ctrl+d on an empty line)
  /help                this
keys: enter sends (while the model works, the message waits in a queue) ·
  alt+enter or ctrl+j: new line · @ mentions a file, tab completes it ·
  ctrl+g edits the message in $EDITOR · ↑ ↓ earlier messages ·
  esc interrupts the run · ctrl+c twice quits · pgup pgdn or the wheel scroll ·
  shift+tab changes the approval mode · ctrl+y copies the last answer ·
  ctrl+o shows whole tool results · ctrl+r shows reasoning ·
  y / n / a answers an approval (yes, no, always for that tool)`

// command runs a slash command.
func (m *Model) command(line string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/help":
		m.notice(help)
	case "/exit", "/quit":
		return m.exit()
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
	case "/approval":
		if arg == "" {
			m.notice(fmt.Sprintf("approval mode %s: %s (shift+tab or /approval plan|ask|auto-edit|yolo changes it; a policy file decides first)", m.preset, m.preset.Description()))
			return nil
		}
		p, err := tool.ParsePreset(arg)
		if err != nil {
			m.errorBlock(err.Error())
			return nil
		}
		m.setPreset(p)
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
	case "/new":
		m.newConversation("")
	case "/clear":
		if len(m.history) == 0 {
			m.newConversation("")
			return nil
		}
		id := m.conv
		b := m.notice(fmt.Sprintf("delete conversation %s (%d messages) for good, and start a new one? y/n", id, len(m.history)))
		m.confirm = &confirm{block: b, yes: func() tea.Cmd {
			err := m.cfg.Conversations.Delete(context.Background(), id)
			said := fmt.Sprintf("conversation %s deleted; a new conversation", id)
			if err != nil && m.saved > 0 {
				said = fmt.Sprintf("conversation %s was not deleted (%v); a new conversation", id, err)
			}
			m.saved = 0
			m.newConversation(said)
			return nil
		}}
		m.top, m.below = nil, false
	case "/cost":
		m.notice(fmt.Sprintf("this session: %d prompt tokens, %d completion tokens, $%.4f",
			m.usage.PromptTokens, m.usage.CompletionTokens, m.cost))
	case "/conversations":
		m.openPicker()
	case "/undo":
		m.undo()
	case "/compact":
		return m.compact()
	case "/copy":
		return m.copyAnswer()
	default:
		m.errorBlock(fmt.Sprintf("no command %s; /help lists them (start a message with // to send one that begins with /)", name))
	}
	return nil
}

// presetCycle is the order shift+tab goes through; yolo is only ever set
// by name.
var presetCycle = []tool.Preset{tool.PresetAsk, tool.PresetAutoEdit, tool.PresetPlan}

// cyclePreset moves to the next approval mode (shift+tab).
func (m *Model) cyclePreset() {
	next := presetCycle[0]
	for i, p := range presetCycle {
		if p == m.preset {
			next = presetCycle[(i+1)%len(presetCycle)]
		}
	}
	m.setPreset(next)
}

// setPreset changes the approval mode: the approver's at once, the
// model's instructions from the next run.
func (m *Model) setPreset(p tool.Preset) {
	if m.cfg.SetApproval == nil {
		m.errorBlock("the approval mode cannot be changed here")
		return
	}
	m.cfg.SetApproval(p)
	m.preset = p
	m.flash = fmt.Sprintf("approval mode %s: %s", p, p.Description())
}
