package chat

// The conversation's view follows its end until the user scrolls up (pgup,
// the mouse wheel); then it is anchored on the line at its top, so that
// an answer streaming below does not move what the user reads. Scrolling
// back down to the end follows the end again.

// anchor is the conversation's line at the top of the view: row line of
// block's rows (its lines, then the blank line after it).
type anchor struct {
	block, line int
}

// rows are a block's lines on screen and the blank line after it (none
// after the last block).
func (m *Model) rows(i int, k renderKey) int {
	n := len(m.blocks[i].render(k, m.st))
	if i < len(m.blocks)-1 {
		n++
	}
	return n
}

func (m *Model) renderKey() renderKey {
	return renderKey{width: m.width, expand: m.expand, reason: m.reason, frame: m.frame}
}

// conversation returns the convHeight lines on screen.
func (m *Model) conversation() []string {
	h := m.convHeight()
	if m.top != nil {
		if lines, ok := m.fromTop(h); ok {
			return lines
		}
		m.top, m.below = nil, false // the end is in view: follow it
	}
	return m.fromEnd(h)
}

// fromEnd returns the last h lines, padded at the top.
func (m *Model) fromEnd(h int) []string {
	k := m.renderKey()
	var rev [][]string // blocks' lines, from the last
	n := 0
	for i := len(m.blocks) - 1; i >= 0 && n < h; i-- {
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
	if len(lines) > h {
		lines = lines[len(lines)-h:]
	}
	for len(lines) < h {
		lines = append([]string{""}, lines...)
	}
	return lines
}

// fromTop returns h lines from the anchor down; false when fewer than h
// are left below it, and the end is then what to show.
func (m *Model) fromTop(h int) ([]string, bool) {
	k := m.renderKey()
	a := m.clamp(*m.top, k)
	m.top = &a
	lines := make([]string, 0, h)
	for i, off := a.block, a.line; i < len(m.blocks) && len(lines) < h; i, off = i+1, 0 {
		ls := m.blocks[i].render(k, m.st)
		if i < len(m.blocks)-1 {
			ls = append(ls[:len(ls):len(ls)], "")
		}
		lines = append(lines, ls[min(off, len(ls)):]...)
	}
	if len(lines) < h {
		return nil, false
	}
	return lines[:h], true
}

// clamp keeps an anchor on a row that exists (the blocks or the width
// changed).
func (m *Model) clamp(a anchor, k renderKey) anchor {
	if a.block >= len(m.blocks) {
		return anchor{block: max(len(m.blocks)-1, 0)}
	}
	if r := m.rows(a.block, k); a.line >= r {
		a.line = max(r-1, 0)
	}
	return a
}

// endTop is the anchor of the view that shows the end: the row h rows
// above the last.
func (m *Model) endTop(h int, k renderKey) anchor {
	for i := len(m.blocks) - 1; i >= 0; i-- {
		r := m.rows(i, k)
		if r >= h {
			return anchor{block: i, line: r - h}
		}
		h -= r
	}
	return anchor{}
}

// scrollUp moves the view n lines up, stopping at the top.
func (m *Model) scrollUp(n int) {
	if len(m.blocks) == 0 {
		return
	}
	k := m.renderKey()
	var a anchor
	if m.top != nil {
		a = m.clamp(*m.top, k)
	} else {
		a = m.endTop(m.convHeight(), k)
	}
	for n > 0 {
		if a.line >= n {
			a.line -= n
			break
		}
		n -= a.line
		if a.block == 0 {
			a.line = 0
			break
		}
		a.block--
		a.line = m.rows(a.block, k)
	}
	if m.top == nil && a == m.endTop(m.convHeight(), k) {
		return // everything fits: nothing to scroll
	}
	m.top = &a
}

// scrollDown moves the view n lines down; at the end it follows the end
// again.
func (m *Model) scrollDown(n int) {
	if m.top == nil {
		return
	}
	k := m.renderKey()
	a := m.clamp(*m.top, k)
	a.line += n
	for a.block < len(m.blocks)-1 {
		r := m.rows(a.block, k)
		if a.line < r {
			break
		}
		a.line -= r
		a.block++
	}
	m.top = &a
	if _, ok := m.fromTop(m.convHeight()); !ok {
		m.top, m.below = nil, false
	}
}
