package dialect

import (
	"bytes"
	"github.com/ptkit/ptk/lenient"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Data made inert: the inverse of reading calls. Text that comes from
// outside the model (a file, a tool's or an MCP server's result, a web page)
// is shown to it, and a model often repeats what it was shown. If the
// repetition reads as a call, data has made a call nobody asked for. Before
// data reaches a model, Neutralize finds every place where the scanner could
// start a call in it and spells the byte that starts it differently.
//
// The scanner itself finds those places: a pass over the data (an inert
// pass) runs the same recognizers and regions as a parse, so every dialect
// the table lists, and every one added to it, is covered without a list of
// its own. What a pass does differently, because data may be embedded
// anywhere in a reply:
//
//   - every call region it starts, once read, is read again from the byte
//     after its trigger, as prose: the byte is spelled differently in the
//     output, so a call inside it (a JSON call inside a <tool_call>) would
//     be read in the output, and must be found too; the same holds for a
//     region that turned out not to be a call (JSON that was text);
//   - regions that hold no calls (reasoning, code fences and spans, dropped
//     tokens) are not entered: what an echo puts before the data could close
//     them or open them elsewhere, so their bytes are read as prose too;
//   - the data's first line is read as if it could follow anything: a call
//     there stands alone whatever came before (a sentence, a call of a run),
//     and is never in a block quote; a pythonic list may follow one read
//     before it; the reply does not start in reasoning.
//
// A trigger is spelled as an HTML character reference (&lt; &gt; &#91;
// &#123; &#40; &#96; &#126;), which names the character to a model and holds
// no byte that starts anything. A pass over the output checks that nothing is
// left (a call that only appears once another is spelled differently); data
// whose passes go on past a bound (calls nested in calls in calls) has every
// trigger byte spelled differently instead.

// inertPass is the state of an inert pass.
type inertPass struct {
	trigger int  // the byte that started the current call region
	line    int  // the start of its line
	made    int  // m.made when it started
	cut     bool // the region cannot end before the end of the data
	// probeBuf is the data and a line break, for probe.
	probeBuf []byte
	hazards  []int // the triggers that must be spelled differently
	work     int   // bytes read by regions, against budget
	budget   int
}

// maxInertRounds bounds the passes Neutralize makes before it spells every
// trigger byte differently.
const maxInertRounds = 4

// inertSpelling is how Neutralize writes a byte that would start a call.
var inertSpelling [256]string

func init() {
	for _, r := range recognizers {
		for _, c := range []byte(r.triggers) {
			inertSpelling[c] = "&#" + strconv.Itoa(int(c)) + ";"
		}
	}
	inertSpelling['<'], inertSpelling['>'] = "&lt;", "&gt;"
}

// Neutralize returns data changed just enough that no part of it, written
// anywhere in a reply, is read as a call by a parser with any of cfgs (a
// parser without tools and one with the tools of a run read different
// things: pass both). Only bytes that would start a call change, each to its
// HTML character reference; text without any is returned as it is. The one
// place an echo can still make a call is one the model writes itself: a
// tool's name just before the data's "(", a wrapper or a ```tool_code fence
// around it.
//
// It is idempotent and linear in the length of data (passes that would read
// more than a few times its length stop, and every trigger byte is spelled
// differently).
func Neutralize(data string, cfgs ...*Config) string {
	if !strings.ContainsFunc(data, func(r rune) bool { return r < utf8.RuneSelf && inertSpelling[r] != "" }) {
		return data // nothing can start a call
	}
	for range maxInertRounds {
		var hz []int
		for _, cfg := range cfgs {
			h, ok := hazards(cfg, data)
			if !ok {
				return spellAll(data)
			}
			hz = append(hz, h...)
		}
		if len(hz) == 0 {
			return data
		}
		slices.Sort(hz)
		data = spell(data, slices.Compact(hz))
	}
	return spellAll(data)
}

// hazards runs an inert pass over data: the sorted triggers of the calls it
// would read; ok is false when the pass went past its budget.
func hazards(cfg *Config, data string) (hz []int, ok bool) {
	c := *cfg
	c.InThink = false
	m := getMachine(&c, nil)
	defer putMachine(m) // which keeps nothing of data
	m.buf = unsafe.Slice(unsafe.StringData(data), len(data))
	m.eof = true
	m.listed = true // a list read before the data lets one follow on its line
	p := &inertPass{budget: 4*len(data) + 64<<10}
	m.inert = p
	m.run()
	if p.work > p.budget {
		return nil, false
	}
	slices.Sort(p.hazards)
	return slices.Compact(p.hazards), true
}

// enter decides whether an inert pass enters the region a recognizer started
// at buf[i]: only a call's. A ```tool_code fence, where any name(...) is a
// call, is itself a hazard.
func (p *inertPass) enter(m *machine, i int, a action) bool {
	switch r := a.reg.(type) {
	case *fenceOpen:
		if r.toolCode {
			p.hazards = append(p.hazards, i)
		}
		return false
	case *inlineCode:
		// "``tool_code" at the start of the data: a reply's "`" before it
		// makes the fence.
		info := bytes.TrimLeft(m.buf[i:min(len(m.buf), i+maxTicks+len("tool_code"))], "`")
		code, _ := lenient.HasPrefixFold(info, 0, "tool_code", true)
		call, _ := lenient.HasPrefixFold(info, 0, "tool_call", true)
		if i == 0 && (code || call) {
			p.hazards = append(p.hazards, i)
		}
		return false
	}
	if !a.call {
		return false
	}
	p.trigger, p.line, p.made, p.cut = i, m.lineStart, m.made, false
	return true
}

// inertTail is how near the end of the data a trigger's recognizer may
// look past it: more than any recognizer looks ahead.
const inertTail = 4 * maxLook

// probe makes a trigger near the end of the data a hazard when its
// recognizer cannot decide without what follows the data, even once a line
// ends there: a reply may write anything after it ("<function=x>" before a
// "<parameter...>" of its own). A marker the data leaves unfinished ("<PTK",
// ">") is not one: the reply would write the rest of it. Code fences are
// not (they hold calls, they are not calls).
func (p *inertPass) probe(m *machine, i int) {
	if len(m.buf)-i > inertTail || m.buf[i] == '`' || m.buf[i] == '~' {
		return
	}
	if p.probeBuf == nil {
		p.probeBuf = append(m.buf[:len(m.buf):len(m.buf)], '\n')
	}
	buf := m.buf
	m.buf, m.eof = p.probeBuf, false
	a := m.recognize(i)
	m.buf, m.eof = buf, true
	if a.need {
		p.hazards = append(p.hazards, i)
	}
}

// headerAt records, for a call the reply's start makes (see machine.start),
// that its JSON at buf[i] is its trigger. p may be nil (not an inert pass).
func (p *inertPass) headerAt(m *machine, i int) {
	if p != nil {
		p.trigger, p.made, p.cut = i, m.made, false
		p.line = bytes.LastIndexByte(m.buf[:i], '\n') + 1
	}
}

// advance reads on the region r an inert pass entered, as if more could
// follow the data: a region that cannot end without what follows (JSON
// whose string or brace is still open, a wrapper whose closer is missing)
// is one a reply may complete, so its trigger is a hazard. It returns false
// when the pass is over its budget.
func (p *inertPass) advance(m *machine, r region) bool {
	m.eof = false
	done := r.advance(m)
	m.eof = true
	if done && m.reg != r {
		return true // handed over to another region: read on
	}
	if !done {
		p.cut = true
	}
	return p.ended(m)
}

// ended handles the end of a call region: its trigger is a hazard when it
// made a call, and prose is read again from the byte after it. It returns
// false when the pass is over its budget.
func (p *inertPass) ended(m *machine) bool {
	if m.made > p.made || p.cut {
		p.hazards = append(p.hazards, p.trigger)
	}
	end := m.pos
	if p.cut {
		end = len(m.buf) // the region read all the data
	}
	if r, ok := m.reg.(interface{ reach() int }); ok {
		end = max(end, r.reach()) // it read further than where prose resumes
	}
	p.work += max(end-p.trigger, 1)
	if p.work > p.budget {
		return false
	}
	m.reg = nil
	m.pos = p.trigger + 1
	m.textFrom = m.pos
	m.lineStart = p.line
	// what the pass read is not kept
	m.text, m.reasoning, m.attempts, m.diags = m.text[:0], m.reasoning[:0], m.attempts[:0], m.diags[:0]
	m.loop = loopState{limit: m.loop.limit}
	return true
}

// reach is how far a pythonic region read: it may read far (to a bracket
// that does not match) and give all but its first byte back as prose.
func (r *pythonic) reach() int {
	if r.sc == nil {
		return 0
	}
	return max(r.sc.Pos, r.sc.FailPos, r.sc.End)
}

// firstLine reports, in an inert pass, that only white space and the
// separators of a run of calls (",", ";") come before buf[i] in the data:
// what came before the data decides whether a call may start there.
func (m *machine) firstLine(i int) bool {
	if m.inert == nil || i > maxLook {
		return false
	}
	for _, c := range m.buf[:i] {
		if c != ',' && c != ';' && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// spell writes the bytes of data at hz (sorted) as inertSpelling has them.
func spell(data string, hz []int) string {
	var b strings.Builder
	b.Grow(len(data) + 5*len(hz))
	last := 0
	for _, i := range hz {
		b.WriteString(data[last:i])
		if sp := inertSpelling[data[i]]; sp != "" {
			b.WriteString(sp)
			last = i + 1
		} else {
			last = i // no construct starts with it: kept (a later round decides)
		}
	}
	b.WriteString(data[last:])
	return b.String()
}

// spellAll writes every byte of data that may start a construct as
// inertSpelling has it.
func spellAll(data string) string {
	var hz []int
	for i := 0; i < len(data); i++ {
		if inertSpelling[data[i]] != "" {
			hz = append(hz, i)
		}
	}
	return spell(data, hz)
}
