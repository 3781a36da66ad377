package acp

import (
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk"
)

// commands are ptk's slash commands in an editor, as in ptk chat.
var commands = []struct{ name, description, hint string }{
	{"help", "List ptk's commands", ""},
	{"tools", "List the tools the model has", ""},
	{"mode", "Show or change when ptk asks before it changes something: ask, auto-edit or plan", "ask | auto-edit | plan"},
	{"model", "Show or change the model", "model name"},
	{"cost", "Tokens and cost of this session so far", ""},
	{"clear", "Start the conversation again", ""},
}

func commandsUpdate() sdk.SessionUpdate {
	var out []sdk.AvailableCommand
	for _, c := range commands {
		ac := sdk.AvailableCommand{Name: c.name, Description: c.description}
		if c.hint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.hint}}
		}
		out = append(out, ac)
	}
	return sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: out}}
}

// command runs a slash command and returns its answer; ok is false when
// line is not one of ptk's commands, and goes to the model as it is.
func (s *session) command(line string) (reply string, ok bool) {
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "help":
		var b strings.Builder
		b.WriteString("ptk's commands:\n")
		for _, c := range commands {
			fmt.Fprintf(&b, "- `/%s` %s\n", c.name, c.description)
		}
		return b.String(), true
	case "tools":
		var b strings.Builder
		b.WriteString("The model's tools:\n")
		for _, t := range s.tools {
			info := t.Info()
			desc, _, _ := strings.Cut(info.Description, ". ")
			ask := ""
			if !info.ReadOnly {
				ask = " (asks first)"
			}
			fmt.Fprintf(&b, "- `%s`%s: %s\n", info.Name, ask, oneLine(desc))
		}
		where := "on the disk"
		if s.editor {
			where = "through the editor's buffers"
		}
		fmt.Fprintf(&b, "\nFiles are read and written %s", where)
		if s.terminal {
			b.WriteString("; commands run in the editor's terminal")
		}
		b.WriteString(".")
		return b.String(), true
	case "mode":
		if arg == "" {
			p := s.mode()
			return fmt.Sprintf("The mode is %s: %s", p, p.Description()), true
		}
		if err := s.setMode(arg); err != nil {
			return "No mode " + arg + ": ptk's modes are ask, auto-edit and plan.", true
		}
		p := s.mode()
		s.a.notify(s.id, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(p)}})
		s.a.notify(s.id, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: s.configOptions()}})
		return fmt.Sprintf("The mode is now %s: %s", p, p.Description()), true
	case "model":
		if arg == "" {
			s.mu.Lock()
			name := s.modelName
			s.mu.Unlock()
			return "The model is " + name + ".", true
		}
		if err := s.setModel(arg); err != nil {
			return "Cannot use " + arg + ": " + errorText(err), true
		}
		s.a.notify(s.id, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: s.configOptions()}})
		return "The model is now " + arg + ".", true
	case "cost":
		s.mu.Lock()
		defer s.mu.Unlock()
		return fmt.Sprintf("This session: %d prompt tokens, %d completion tokens, $%.4f.", s.usage.PromptTokens, s.usage.CompletionTokens, s.cost), true
	case "clear":
		s.mu.Lock()
		s.history = nil
		s.always = map[string]bool{}
		s.mu.Unlock()
		return "A new conversation: the model no longer sees what was said before.", true
	}
	return "", false
}

// replay sends a stored conversation to the editor as the updates it made:
// the user's messages, the answers, and each tool call with its result.
func (s *session) replay(history []ptk.Message) {
	for i, m := range history {
		// The tool messages that follow an assistant turn answer its calls
		// (ids are unique in a turn, not across turns).
		results := map[string]ptk.Message{}
		for _, r := range history[i+1:] {
			if r.Role != ptk.RoleTool {
				break
			}
			results[r.CallID] = r
		}
		switch m.Role {
		case ptk.RoleUser:
			s.a.notify(s.id, sdk.UpdateUserMessageText(m.Content))
		case ptk.RoleAssistant:
			if strings.TrimSpace(m.Content) != "" {
				s.a.notify(s.id, sdk.UpdateAgentMessageText(m.Content))
			}
			for j, c := range m.Calls {
				id := sdk.ToolCallId(fmt.Sprintf("ptk-load-%d-%d", i, j+1))
				st := sdk.ToolCallStatusCompleted
				r, answered := results[c.ID]
				if !answered || r.IsError {
					st = sdk.ToolCallStatusFailed
				}
				tc := &sdk.SessionUpdateToolCall{ToolCallId: id, Title: titleOf(c), Kind: kindOf(c.Tool), Status: st,
					Locations: s.locations(c)}
				if len(c.Args) > 0 {
					tc.RawInput = c.Args
				}
				if answered {
					tc.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(fenced(r.Content)))}
				}
				s.a.notify(s.id, sdk.SessionUpdate{ToolCall: tc})
				if c.Tool == planToolName && answered && !r.IsError {
					if entries, ok := planEntries(c.Args); ok {
						s.a.notify(s.id, sdk.UpdatePlan(entries...))
					}
				}
			}
		}
	}
}
