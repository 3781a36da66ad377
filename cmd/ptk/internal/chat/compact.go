package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
)

// compactedMsg is the end of a /compact, from its goroutine.
type compactedMsg struct {
	run  int
	msgs []ptk.Message
	c    *agent.Compaction
	err  error
}

// compact starts a /compact: the model writes notes of the conversation's
// older messages, which the model is sent instead of them from then on
// (agent.Compact, as a run does by itself near the window's end). It runs
// as a run does: esc interrupts it, messages typed meanwhile wait in the
// queue.
func (m *Model) compact() tea.Cmd {
	if len(m.history) == 0 {
		m.notice("nothing to compact: the conversation is empty")
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.run++
	m.running, m.cancel, m.stopping, m.compacting = true, cancel, false, true
	m.iteration, m.open = 0, nil
	m.top, m.below = nil, false
	opts := m.opts
	opts.Instructions = joinText(opts.Instructions, m.preset.Instructions())
	run, events, gone, history := m.run, m.events, m.gone, slices.Clone(m.history)
	go func() {
		defer cancel()
		msgs, c, err := agent.Compact(ctx, history, opts)
		select {
		case events <- compactedMsg{run: run, msgs: msgs, c: c, err: err}:
		case <-gone:
		}
	}()
	m.dimNotice("compacting: the model writes its notes of the earlier conversation…")
	return m.tick()
}

// compacted ends a /compact: the notes join the conversation, which is
// saved; the queue's messages go next.
func (m *Model) compacted(msg compactedMsg) tea.Cmd {
	if msg.run != m.run {
		return nil
	}
	m.running, m.cancel, m.compacting = false, nil, false
	stopped := m.stopping
	m.stopping = false
	switch err := msg.err; {
	case errors.Is(err, agent.ErrNothingToCompact):
		m.notice("nothing to compact: the conversation is all its latest turn")
		return m.next(nil)
	case err != nil && (stopped || errors.Is(err, context.Canceled)):
		m.notice("compaction interrupted: the conversation is as it was")
		return m.next(err)
	case err != nil:
		text := ""
		if m.cfg.Hint != nil {
			text = m.cfg.Hint(err)
		}
		if text == "" {
			text = err.Error()
		}
		m.errorBlock("/compact: " + text)
		return m.next(err)
	}
	c := msg.c
	m.history = msg.msgs
	m.save()
	m.usage = m.usage.Add(c.Usage)
	m.cost += c.Cost
	if c.Window > 0 {
		m.fill = agent.Fill{Tokens: c.After, Window: c.Window}
	}
	m.dimNotice(describeCompaction(c))
	return m.next(nil)
}

// describeCompaction says what a compaction did.
func describeCompaction(c *agent.Compaction) string {
	s := fmt.Sprintf("compacted: the %d earlier messages are replaced, for the model, by its notes of them (%s → %s tokens", c.Replaced, count(c.Before), count(c.After))
	if c.Window > 0 {
		s += " of " + count(c.Window)
	}
	return s + "); they stay on the screen and in the conversation"
}
