package protocol

// Regions that hold no calls: dropped tokens, reasoning, code that is text.

// dropRegion skips protocol tokens that are not text (a stray </tool_call>,
// <|eot_id|>, a Harmony header).
type dropRegion struct{ end int }

func (r *dropRegion) advance(m *machine) bool {
	m.pos = r.end
	return true
}

var thinkClosers = []string{"</think>", "</thinking>"}

// thinkRegion is reasoning: <think>...</think>, a Harmony analysis message.
type thinkRegion struct {
	contentFrom int
	closers     []string
	keep        []bool // closers that belong to what follows and stay in the input
	f           finder
	init        bool
}

func (r *thinkRegion) advance(m *machine) bool {
	if !r.init {
		r.init = true
		r.f = finder{pats: r.closers, at: r.contentFrom}
	}
	idx, k := r.f.find(m.buf, m.eof)
	if idx < 0 {
		upto := r.f.at
		if m.eof {
			upto = len(m.buf)
		}
		if upto > r.contentFrom {
			m.appendReasoning(m.buf[r.contentFrom:upto])
			r.contentFrom = upto
		}
		if m.eof {
			m.diag(Diagnostic{Kind: DiagUnclosedThink, Message: "a reasoning block is not closed; its text is reasoning, and no call in it is run", Offset: r.contentFrom})
			m.pos = len(m.buf)
			return true
		}
		return false
	}
	m.appendReasoning(m.buf[r.contentFrom:idx])
	m.pos = idx + len(r.closers[k])
	if k < len(r.keep) && r.keep[k] {
		m.pos = idx
	}
	return true
}

// fusedHarmony is a Harmony reply whose special tokens were stripped:
// "analysis...assistantfinal<answer>". Without "assistantfinal" it is text.
type fusedHarmony struct{ f finder }

func (r *fusedHarmony) advance(m *machine) bool {
	idx, _ := r.f.find(m.buf, m.eof)
	if idx < 0 {
		if !m.eof {
			return false
		}
		m.pos = 0
		return true
	}
	m.appendReasoning(m.buf[len("analysis"):idx])
	m.pos = idx + len("assistantfinal")
	return true
}

// inlineCode is a `code span`: text, never a call. A backtick with no partner
// on its line is plain text.
type inlineCode struct {
	start, ticks, at int
	run              int // start of the run of backticks being counted, or 0
}

func (r *inlineCode) advance(m *machine) bool {
	buf := m.buf
	i := max(r.at, r.start+r.ticks)
	run := r.run
	for i < len(buf) {
		if run == 0 {
			c := buf[i]
			if c == '\n' {
				break
			}
			if c != '`' {
				i++
				continue
			}
			run = i
		}
		for i < len(buf) && buf[i] == '`' {
			i++
		}
		if i >= len(buf) && !m.eof {
			break
		}
		if i-run == r.ticks {
			m.addText(buf[r.start:i])
			m.pos = i
			return true
		}
		run = 0
	}
	if i >= len(buf) && !m.eof {
		r.at, r.run = i, run
		return false
	}
	if run != 0 && i-run == r.ticks { // closing backticks at the very end
		m.addText(buf[r.start:i])
		m.pos = i
		return true
	}
	// No closing backticks on this line: they are text, and so is the rest.
	m.addText(buf[r.start : r.start+r.ticks])
	m.pos = r.start + r.ticks
	return true
}

// textFence is a code fence read as text up to its closing backticks.
type textFence struct {
	ticks  int
	atLine bool
	pos    int
	run    int // start of the run of backticks being counted, or 0
}

func (r *textFence) advance(m *machine) bool {
	buf := m.buf
	i := r.pos
	run := r.run
	for i < len(buf) {
		if run == 0 {
			if buf[i] != '`' {
				i++
				continue
			}
			run = i
		}
		for i < len(buf) && buf[i] == '`' {
			i++
		}
		if i >= len(buf) && !m.eof {
			break
		}
		if i-run >= r.ticks && (!r.atLine || atLineStart(buf, run, m.textFrom, m.lastTextByte())) {
			m.addText(buf[m.textFrom:i])
			m.pos = i
			return true
		}
		run = 0
	}
	if m.eof {
		m.addText(buf[m.textFrom:])
		m.pos = len(buf)
		return true
	}
	// Text before a possible closing fence is decided.
	upto := i
	if run != 0 {
		upto = run
	}
	if upto > m.textFrom {
		m.addText(buf[m.textFrom:upto])
		m.textFrom = upto
	}
	r.pos, r.run = i, run
	return false
}

// atLineStart reports whether buf[i] starts a line, after at most three spaces.
func atLineStart(buf []byte, i, from int, before int) bool {
	for k := 0; k < 4; k++ {
		var c int
		if i-1-k >= from {
			c = int(buf[i-1-k])
		} else if i-1-k == from-1 {
			c = before
		} else {
			return false
		}
		switch c {
		case '\n', -1:
			return true
		case ' ':
			continue
		}
		return false
	}
	return false
}

// fenceOpen starts a code fence whose content may be calls.
type fenceOpen struct {
	start, ticks, content int
	atLine, toolCode      bool
}

func (r *fenceOpen) advance(m *machine) bool {
	m.fence = &fenceCtx{start: r.start, ticks: r.ticks, atLine: r.atLine, toolCode: r.toolCode}
	m.pos = r.content
	return true
}

// fenceClose closes the open call fence.
type fenceClose struct{ end int }

func (r *fenceClose) advance(m *machine) bool {
	m.pos = r.end
	m.textFrom = r.end
	m.closeFence(r.end)
	return true
}

// addText adds text a region decided on, outside any open call fence.
func (m *machine) addText(b []byte) {
	if len(b) == 0 {
		return
	}
	if m.fence != nil {
		if isAllSpace(b) {
			m.fence.held = append(m.fence.held, b...)
			return
		}
		m.rejectFence()
	}
	m.appendText(b)
}

// regionText adds buf[from:to] as text for a region that turned out not to
// be a call. Inside an open call fence that makes the fence text: the fence
// is read as text from its start and the region must end (stop is true).
func (m *machine) regionText(from, to int) (stop bool) {
	if m.fence != nil && !m.fence.closed && !isAllSpace(m.buf[from:to]) {
		m.convertFence(from)
		return true
	}
	m.addText(m.buf[from:to])
	return false
}
