package dialect

import (
	"github.com/ptkit/ptk/dialect/internal/markup"
	"github.com/ptkit/ptk/dialect/result"
	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
	"strconv"
)

// Regions that hold no calls: dropped tokens, reasoning, code that is text.

// dropRegion skips protocol tokens that are not text (a stray </tool_call>,
// <|eot_id|>, a Harmony header), or, with text set, keeps them as text;
// either way with a diagnostic, if it has one.
type dropRegion struct {
	start, end int
	text       bool
	diag       *result.Diagnostic
}

func (r *dropRegion) advance(m *machine) bool {
	if r.diag != nil {
		m.diag(*r.diag)
	}
	if r.text && m.regionText(r.start, r.end) {
		return true
	}
	m.pos = r.end
	return true
}

// thinkClosers end the reasoning a reply starts in (StartInThink): </think>,
// and the closers of templates that open theirs with other tokens (Command
// R7B, Gemma 4, Apertus, Kimi-K3).
var thinkClosers = []string{"</think>", "</thinking>", "<|end_thinking|>", "<channel|>", "<|inner_suffix|>", "<|close|>think<|sep|>"}

// thinkRegion is reasoning: <think>...</think>, a Harmony analysis message.
// A closer inside inline code (`</think>`) is part of the reasoning.
type thinkRegion struct {
	contentFrom int
	closers     []string
	keep        []bool // closers that belong to what follows and stay in the input
	init        bool
	at          int // next byte to look at
	tick        int // inside inline code opened by this many backticks
	codeAt      int // where that inline code's text starts
	noCode      int // inline code cannot open before this (a line with an unclosed one)
	callAt      int // 1 + where the first call opener in the block starts, or 0
}

// prefixAt returns which of pats (in lower case) buf[i:] starts with, in
// any letter case, or -1; need: more input is needed to tell.
func prefixAt(buf []byte, i int, pats []string, eof bool) (int, bool) {
	for n, p := range pats {
		// the first two bytes settle most: "<b>" in reasoning is no opener
		if tag.Lower[buf[i]] != p[0] || len(p) > 1 && i+1 < len(buf) && tag.Lower[buf[i+1]] != p[1] {
			continue
		}
		match, need := lenient.HasPrefixFold(buf, i, p, eof)
		if need {
			return -1, true
		}
		if match {
			return n, false
		}
	}
	return -1, false
}

func (r *thinkRegion) advance(m *machine) bool {
	buf := m.buf
	if !r.init {
		r.init = true
		r.at = r.contentFrom
	}
	i := r.at
	wait := false
	found, k := -1, 0
scan:
	for i < len(buf) {
		c := buf[i]
		if r.tick > 0 {
			switch c {
			case '\n': // the inline code does not close: read its text again
				r.tick, r.noCode, i = 0, i, r.codeAt
			case '`':
				j := i
				for j < len(buf) && buf[j] == '`' {
					j++
				}
				if j >= len(buf) && !m.eof {
					wait = true
					break scan
				}
				if j-i == r.tick {
					r.tick = 0
				}
				i = j
			default:
				i++
			}
			continue
		}
		if c == '`' && i >= r.noCode {
			j := i
			for j < len(buf) && buf[j] == '`' && j-i <= maxTicks {
				j++
			}
			if j >= len(buf) && !m.eof {
				wait = true
				break
			}
			if j-i < 3 {
				r.tick, r.codeAt = j-i, j
			}
			i = j
			continue
		}
		if c != '<' && c != '[' { // every closer and call opener starts so
			i++
			continue
		}
		if r.callAt == 0 {
			if n, need := prefixAt(buf, i, markup.ThinkCallOpeners, m.eof); need {
				wait = true
				break
			} else if n >= 0 {
				r.callAt = i + 1
			}
		}
		if n, need := prefixAt(buf, i, r.closers, m.eof); need {
			wait = true
			break
		} else if n >= 0 {
			found, k = i, n
			break
		}
		i++
	}
	if found < 0 {
		upto := i
		if r.tick > 0 {
			upto = min(upto, r.codeAt) // inline code may yet turn out not to be
		}
		if m.eof && !wait {
			upto = len(buf)
			if r.callAt > 0 && markup.EndsWithCalls(buf[r.callAt-1:]) {
				m.appendReasoning(buf[r.contentFrom : r.callAt-1])
				m.diag(result.Diagnostic{Kind: result.DiagUnclosedThink, Message: "a reasoning block is not closed: it ends where the calls after it start", Offset: r.callAt - 1})
				m.pos = r.callAt - 1
				return true
			}
		}
		if r.callAt > 0 {
			upto = min(upto, r.callAt-1) // held until the block closes or the reply ends
		}
		if upto > r.contentFrom {
			m.appendReasoning(buf[r.contentFrom:upto])
			r.contentFrom = upto
		}
		r.at = i
		if m.eof && !wait {
			m.diag(result.Diagnostic{Kind: result.DiagUnclosedThink, Message: "a reasoning block is not closed; its text is reasoning, and no call in it is run", Offset: r.contentFrom})
			m.pos = len(buf)
			return true
		}
		return false
	}
	m.appendReasoning(buf[r.contentFrom:found])
	m.pos = found + len(r.closers[k])
	if k < len(r.keep) && r.keep[k] {
		m.pos = found
	}
	return true
}

// fusedHarmony is a Harmony reply whose special tokens were stripped:
// "analysis...assistantfinal<answer>". Without "assistantfinal" it is text.
type fusedHarmony struct{ f tag.Finder }

func (r *fusedHarmony) advance(m *machine) bool {
	idx, _ := r.f.Find(m.buf, m.eof)
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

// textFence is a code fence read as text up to its closing fence: a run of
// at least as many of the same character (` or ~). A fence that opened at
// the start of a line closes, as in CommonMark, on a line of its own: "```"
// and nothing after it ("```json" opens a fence, it does not close one).
type textFence struct {
	char   byte
	ticks  int
	atLine bool
	pos    int
	run    int // start of the run being counted, or 0
	// markdown: a ```markdown fence, in which models nest fences without
	// lengthening the outer one; nest counts the fences open inside it.
	markdown bool
	nest     int
}

func (r *textFence) advance(m *machine) bool {
	buf := m.buf
	i := r.pos
	run := r.run
	for i < len(buf) {
		if run == 0 {
			if buf[i] != r.char {
				i++
				continue
			}
			run = i
		}
		for i < len(buf) && buf[i] == r.char {
			i++
		}
		if i >= len(buf) && !m.eof {
			break
		}
		if i-run >= r.ticks {
			if !r.atLine {
				m.addText(buf[m.textFrom:i])
				m.pos = i
				return true
			}
			if m.atLineStart(run) {
				// the rest of the line must be blank
				k := i
				for k < len(buf) && (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\r') && k-i < maxLook {
					k++
				}
				if k >= len(buf) && !m.eof && k-i < maxLook {
					i = run // wait for the rest of the line
					break
				}
				switch {
				case (k >= len(buf) || buf[k] == '\n') && r.nest > 0:
					r.nest--
				case k >= len(buf) || buf[k] == '\n':
					m.addText(buf[m.textFrom:i])
					m.pos = i
					return true
				case r.markdown && k == i && lenient.IsIdentStart(buf[k]):
					r.nest++ // ```bash inside ```markdown
				}
			}
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

// atLineStart reports whether buf[i] starts a line, after at most three
// spaces, in the text as a whole, however much of it was already moved.
func (m *machine) atLineStart(i int) bool {
	for k, n := i, 0; n < 4; k, n = k-1, n+1 {
		switch m.byteBefore(k) {
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
	char                  byte
	atLine, toolCode      bool
}

func (r *fenceOpen) advance(m *machine) bool {
	f := &m.fenceStore // one fence is open at a time: reuse its buffers
	*f = fenceCtx{start: r.start, char: r.char, ticks: r.ticks, atLine: r.atLine, toolCode: r.toolCode,
		held: f.held[:0], attempts: f.attempts[:0], diags: f.diags[:0], events: f.events[:0]}
	m.fence = f
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

// pastTurn is what a reply writes after a new message's header: a turn the
// model made up (a user's next question, another answer), read as nothing.
type pastTurn struct {
	start  int
	header string
}

func (r *pastTurn) advance(m *machine) bool {
	m.pos = len(m.buf)
	if !m.eof {
		return false
	}
	m.diag(result.Diagnostic{Kind: result.DiagPastTurn, Offset: r.start,
		Message: "the reply goes on past the end of its turn: " + strconv.Quote(r.header) + " starts another message, and what follows it was not read"})
	return true
}
