package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/checkpoint"
)

// maxChangesShown is how many changed files /undo names.
const maxChangesShown = 8

// undo undoes the conversation's last turn: the files it changed go back
// to its checkpoint (a turn that changed none has none), the conversation
// to before its message, and the message back into the input. The files
// as they were before /undo are a checkpoint too, which 'ptk undo ID'
// restores.
func (m *Model) undo() {
	last := -1
	for i := len(m.history) - 1; i >= 0; i-- {
		if m.history[i].Role == ptk.RoleUser && m.history[i].Compacted == 0 {
			last = i
			break
		}
	}
	if last < 0 {
		m.notice("nothing to undo in this conversation")
		return
	}
	text, _ := splitAttached(m.history[last].Content)
	ctx := context.Background()
	var done string
	switch c, err := m.turnCheckpoint(ctx, last); {
	case err != nil:
		m.errorBlock("/undo: " + err.Error())
		return
	case m.cfg.Checkpoints == nil:
		done = "undone in the conversation only: checkpoints are off, so the files stay as they are"
	case c == nil:
		done = "undone: that turn changed no file"
	default:
		hist, _ := json.Marshal(m.history)
		r, err := m.cfg.Checkpoints.Restore(ctx, *c, checkpoint.Meta{Conversation: m.conv, Messages: len(m.history), Prompt: "/undo: " + text, History: hist})
		if err != nil {
			m.errorBlock("/undo: the files were not restored, and the conversation is as it was: " + err.Error())
			return
		}
		done = "undone: " + describeChanges(r.Changes) + fmt.Sprintf("; ptk undo %s puts them back as they were before /undo", r.Saved.Short())
	}
	cutErr := m.cutTurn(last)
	m.load(m.conv, m.history)
	if cutErr != nil {
		m.errorBlock("/undo: the stored conversation was not changed: " + cutErr.Error())
	}
	m.input.SetValue(text)
	m.input.CursorEnd()
	m.notice(done + ". The turn's message is back in the input.")
}

// turnCheckpoint is the checkpoint of the turn that starts at message i,
// when it took one and it is not undone yet.
func (m *Model) turnCheckpoint(ctx context.Context, i int) (*checkpoint.Checkpoint, error) {
	if m.cfg.Checkpoints == nil {
		return nil, nil
	}
	cps, err := m.cfg.Checkpoints.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range checkpoint.Undoable(cps) {
		if c.Conversation == m.conv && c.Messages == i {
			return &c, nil
		}
	}
	return nil, nil
}

// describeChanges says which files a restore changed.
func describeChanges(changes []checkpoint.Change) string {
	if len(changes) == 0 {
		return "the files were already as they were before that turn"
	}
	var parts []string
	for i, c := range changes {
		if i == maxChangesShown {
			parts = append(parts, fmt.Sprintf("and %d more", len(changes)-i))
			break
		}
		parts = append(parts, c.Action+" "+c.Path)
	}
	files := "files"
	if len(changes) == 1 {
		files = "file"
	}
	return fmt.Sprintf("%d %s put back as before that turn (%s)", len(changes), files, strings.Join(parts, ", "))
}
