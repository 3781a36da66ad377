package dialect

import (
	"bytes"
	"github.com/ptkit/ptk/dialect/result"
	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/ptkit/ptk"
)

// The machine reads a reply left to right, once. Prose is scanned for the few
// bytes that can start a construct (a tag, a bracket, a brace, a backtick,
// '>>>', a '(' after a tool name); at such a byte a recognizer looks a bounded
// distance ahead and either lets the byte pass as text or starts a region
// (a call, a reasoning block, a code fence...) whose own scanner finds where
// it ends. Every decision depends only on the bytes seen, never on where a
// chunk ended: when a decision needs bytes that have not arrived, the machine
// stops and resumes there, so a streamed reply is read exactly as the whole.

// region is a construct being read.
type region interface {
	// advance reads on; it returns true when the region has ended, with
	// m.pos set to where prose resumes.
	advance(m *machine) bool
}

type machine struct {
	// state is all a machine knows of the reply it reads; init sets it new.
	state
	// One of each region, reused: only one region is read at a time. A
	// region's slot is written whole when it starts (regionOf), so a
	// machine handed to the next parse clears them only if it read any.
	regions regionSlots
	// The machine's scratch space, kept from one parse to the next.
	jp    lenient.Reader // reused by the regions that read JSON
	nodes lenient.Pool
	raws  []RawCall // scratch for the calls a region reads
}

// state is what a machine knows of the reply it reads.
type state struct {
	cfg *Config
	buf []byte
	eof bool
	// stream: buf is a Stream's own buffer, whose bytes never change once
	// written, so a call's arguments may be a slice of it (RawCall.Stable);
	// shared: one is, and buf is not handed to another stream.
	stream, shared bool

	started  bool
	pos      int // next byte of prose to scan
	textFrom int // start of prose not yet moved to text
	reg      region

	text      []byte
	reasoning []byte
	// callBuf holds the calls' texts as reported (callText).
	callBuf  []byte
	attempts []result.Attempt
	diags    []result.Diagnostic

	fence *fenceCtx
	// callEnd is where the last region that made a call ended, or -1.
	callEnd     int
	inRegion    bool // the region in m.reg has started
	regionCalls int  // the call index when it started
	regionStart int  // where it started
	// lineStart is where the line of m.pos starts.
	lineStart int
	// listed: a pythonic call list was read, so a later one may follow
	// prose on its line: "[f(a=1)] and [g(b=2)]".
	listed bool
	// bareRetry is where a bare JSON candidate broke; a candidate may start
	// there whatever precedes it.
	bareRetry int
	// spaceUpTo: text[:spaceUpTo] is white space (wroteSomething).
	spaceUpTo int

	emit func(result.Event)
	em   emitState

	// entered: a region's slot was written (the regions hold some of the
	// reply): by a recognizer, or at the start.
	entered    bool
	fenceStore fenceCtx
	open       int // index of the call whose CallStart is out, or -1

	made int // calls read so far
	// loop: what the reply's calls say about a repetition loop (loop.go).
	loop loopState
	// inert is set for a pass that finds where data must change (inert.go).
	inert *inertPass
}

// regionSlots holds one region of each type (see machine.regions).
type regionSlots struct {
	dropRegion   dropRegion
	thinkRegion  thinkRegion
	tagCall      tagCall
	bareJSON     bareJSON
	headerCall   headerCall
	pythonic     pythonic
	quotedCalls  quotedCalls
	namedCalls   namedCalls
	pastTurn     pastTurn
	xmlCall      xmlCall
	tokenCall    tokenCall
	glmInline    glmInline
	badCall      badCall
	fenceOpen    fenceOpen
	fenceClose   fenceClose
	inlineCode   inlineCode
	textFence    textFence
	fusedHarmony fusedHarmony
	rawCode      rawCode
}

type emitState struct {
	first   int // index in text of the first non-space byte, -1 until seen
	emitted int // text[:emitted] has been emitted
	checked int // text[:checked] has been classified
	spaceAt int // start of the trailing run of white space in text[:checked]
	rsent   int // reasoning[:rsent] has been emitted
}

// getMachine returns a machine in the state of a new one, from the pool of
// finished ones: a machine is large (its regions, its JSON reader and
// nodes), and a server reads a reply on every request.
func getMachine(cfg *Config, emit func(result.Event)) *machine {
	m := machines.Get().(*machine)
	m.cfg, m.emit = cfg, emit
	return m
}

// machines keeps finished machines (putMachine), each in the state of a new
// one, for the next parse.
var machines = sync.Pool{New: func() any {
	m := new(machine)
	m.init(nil, nil)
	return m
}}

// putMachine hands m to the next parse. What the parse returned (its text,
// reasoning, attempts, diagnostics, events) is no longer m's: m keeps only
// its scratch space (the JSON reader's stacks, the nodes, the calls' slice),
// and nothing of the reply it read.
func putMachine(m *machine) {
	m.init(nil, nil)
	machines.Put(m)
}

// init sets m to the state of a new machine, keeping its scratch space
// emptied.
func (m *machine) init(cfg *Config, emit func(result.Event)) {
	if m.entered {
		m.regions = regionSlots{}
	}
	m.state = state{cfg: cfg, emit: emit, open: -1, callEnd: -1, bareRetry: -1, em: emitState{first: -1, spaceAt: -1}}
	clear(m.raws[:cap(m.raws)])
	m.raws = m.raws[:0]
	m.nodes.Reuse()
	m.jp.Forget()
}

// newJParser returns the machine's JSON reader, ready at start.
func (m *machine) newJParser(start int, bare bool) *lenient.Reader {
	r := m.jp.Reset(start, bare, &m.nodes)
	r.Lazy = true // a file's content in an argument is copied, rarely read
	return r
}

// regionOf stores v in the machine's slot for its type and returns it.
func regionOf[T any](slot *T, v T) *T {
	*slot = v
	return slot
}

func (m *machine) run() {
	for {
		if r := m.reg; r != nil {
			if p := m.inert; p != nil {
				if !p.advance(m, r) {
					return
				}
				continue
			}
			if !m.inRegion {
				m.inRegion, m.regionCalls, m.regionStart = true, m.nextIndex(), min(m.textFrom, m.pos)
			}
			if !r.advance(m) {
				return
			}
			if m.nextIndex() > m.regionCalls {
				m.callEnd = m.pos
			}
			m.inRegion = false
			if k := bytes.LastIndexByte(m.buf[m.regionStart:max(m.pos, m.regionStart)], '\n'); k >= 0 {
				m.lineStart = m.regionStart + k + 1 // the region spanned lines
			}
			if m.reg == r { // a region may hand over to another
				m.reg = nil
				m.textFrom = m.pos
			}
			continue
		}
		if !m.started {
			ok := m.start()
			m.entered = m.entered || m.reg != nil
			if !ok {
				return
			}
			m.started = true
			continue
		}
		if !m.prose() {
			if m.eof {
				m.finishFence()
			}
			return
		}
	}
}

// prose scans text from m.pos. It returns true when a region was started
// and false when it needs more input (or the input is done).
func (m *machine) prose() bool {
	buf := m.buf
	i := m.pos
	for {
		for i < len(buf) && !trigger[buf[i]] {
			i++
		}
		if i >= len(buf) {
			m.pos = i
			m.flushText(i, !m.eof)
			return m.reg != nil
		}
		switch c := buf[i]; {
		case c == '\n':
			m.lineStart = i + 1
			i++
			continue
		case c == '(' && (i <= m.textFrom || !isWordChar(buf[i-1])) && !m.lineStartAt(i),
			c == '>' && i+1 < len(buf) && buf[i+1] != '>',
			c == '<' && i+1 < len(buf) && (buf[i+1] == ' ' || buf[i+1] == '='):
			// cannot start a construct: "(see", "a > b", "a < b" (a '('
			// at the start of a line may open a tuple of calls)
			i++
			continue
		}
		if m.inert != nil {
			m.inert.probe(m, i)
		}
		a := m.recognize(i)
		if a.need {
			m.pos = i
			m.flushText(i, true)
			return m.reg != nil
		}
		if a.reg == nil || m.inert != nil && !m.inert.enter(m, i, a) {
			i++
			continue
		}
		from := i - a.steal
		if m.fence != nil && !a.call {
			// Only calls may share a code fence that is to count as a call.
			m.flushText(from, false)
			if m.reg != nil {
				return true
			}
			if m.fence != nil {
				if m.fence.closed {
					m.acceptFence()
				} else {
					m.convertFence(from)
					return true
				}
			}
		} else {
			m.flushText(from, false)
			if m.reg != nil {
				return true
			}
			if a.call && m.fence != nil && m.fence.closed {
				m.acceptFence()
			}
		}
		m.textFrom = from
		m.pos = i
		m.reg = a.reg
		return true
	}
}

// flushText moves prose buf[m.textFrom:to] to the text. With partial set
// (the scan stopped for want of input), a trailing word that a construct
// might yet claim (a tool name before '(' or '<arg_key>', a stray line before
// a leaked call) stays behind.
func (m *machine) flushText(to int, partial bool) {
	if partial {
		to = m.textFrom + stealableStart(m.buf[m.textFrom:to], m.lastTextByte())
	}
	if to <= m.textFrom {
		return
	}
	seg := m.buf[m.textFrom:to]
	m.textFrom = to
	if m.fence != nil {
		if !isAllSpace(seg) {
			if m.fence.closed {
				// Prose after a fence of calls: with tools declared, calls of
				// them are calls whatever surrounds the fence; without, the
				// fence is an example explained after it.
				if m.cfg.Declared && m.fence.listCalls == len(m.fence.attempts) {
					m.acceptFence()
				} else {
					m.rejectFence()
				}
				m.appendText(seg)
				return
			}
			m.convertFence(to - len(seg))
			return
		}
		m.fence.held = append(m.fence.held, seg...)
		return
	}
	m.appendText(seg)
}

func (m *machine) appendText(seg []byte) {
	if m.inert != nil {
		return // an inert pass keeps no text
	}
	m.growText(len(seg))
	m.text = append(m.text, seg...)
}

// lastTextByte is the byte before the prose not yet moved to text, as text.
func (m *machine) lastTextByte() int { return m.textByteBack(0) }

// textByteBack is the byte n places before the prose not yet moved to text,
// or -1 at the start of the text. The content of a code fence starts on a
// line of its own.
func (m *machine) textByteBack(n int) int {
	t := m.text
	if m.fence != nil {
		t = m.fence.held
		if n >= len(t) {
			return '\n'
		}
	}
	if n >= len(t) {
		return -1
	}
	return int(t[len(t)-1-n])
}

// lineStartAt reports whether only spaces and tabs lie between the start of
// a line and buf[k], in the text as a whole, however much of it was moved.
func (m *machine) lineStartAt(k int) bool {
	for n := 0; n < maxStealWord; n, k = n+1, k-1 {
		switch m.byteBefore(k) {
		case ' ', '\t':
			continue
		case '\n', -1:
			return true
		}
		return false
	}
	return false
}

// byteBefore is the byte before buf[k] in the text as a whole: from buf when
// it is prose not yet moved to text, else from the text already moved; -1 at
// the start of the text.
func (m *machine) byteBefore(k int) int {
	if k > m.textFrom || m.inert != nil && k > 0 { // an inert pass keeps no text
		return int(m.buf[k-1])
	}
	return m.textByteBack(m.textFrom - k)
}

const maxStealWord = 64

// maxWalkBack is the furthest a construct looks back for the word it claims
// (a tool name before '(' may be up to 2*maxStealWord bytes).
const maxWalkBack = 2 * maxStealWord

// isWordChar covers every byte a construct may claim from the prose before
// it (see stealableStart).
func isWordChar(c byte) bool { return lenient.IsPyIdentByte(c) || c == '.' || c == '-' }

// stealableStart returns where the part of seg that a construct might still
// claim begins: a trailing word, or a trailing line made of one word.
//
// A trailing word too long to be claimed keeps its last maxWalkBack bytes
// back all the same: the constructs that look back for a word before them
// (name<arg_key>, name(...)) give up after that many bytes, and they must
// give up in a stream as they do in the whole text, not find a short word
// where the prose already moved to the text cut a long one.
func stealableStart(seg []byte, before int) int {
	n := len(seg)
	if n > 0 && seg[n-1] == ']' {
		return n - 1 // MiniMax-M3's marker, ]<]minimax[>[, may start here
	}
	if n > 0 && (seg[n-1] == '\'' || seg[n-1] == '"') {
		return n - 1 // a call written as a string may start here: 'f(a=1)'
	}
	w := n
	for w > 0 && n-w <= maxStealWord && lenient.IsWS(seg[w-1]) {
		w--
	}
	if n-w > maxStealWord {
		return n
	}
	k := w
	for k > 0 && w-k <= maxWalkBack && isWordChar(seg[k-1]) {
		k--
	}
	if k == w {
		return n
	}
	if k > 0 && (seg[k-1] == '\'' || seg[k-1] == '"') {
		k-- // the quote of a call written as a string: 'f(a=1)'
	}
	if w == n {
		return max(k, n-maxWalkBack)
	}
	if w-k > maxStealWord {
		return n
	}
	lineStart := k == 0 && (before == -1 || before == '\n') || k > 0 && seg[k-1] == '\n'
	for j := w; j < n && lineStart; j++ {
		if seg[j] == '\n' {
			return k
		}
	}
	return n
}

func isAllSpace(b []byte) bool {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if !unicode.IsSpace(r) {
			return false
		}
		b = b[size:]
	}
	return true
}

// action is what a recognizer decided about a trigger byte.
type action struct {
	need  bool
	reg   region
	steal int  // bytes before the trigger that belong to the construct
	call  bool // the region is a call (may sit inside a call fence)
}

// start handles what can only appear at the very start of a reply.
func (m *machine) start() bool {
	if m.cfg.InThink {
		m.reg = regionOf(&m.regions.thinkRegion, thinkRegion{contentFrom: 0, closers: thinkClosers})
		m.pos = 0
		return true
	}
	buf := m.buf
	// Harmony with its special tokens stripped: "analysisWe need...assistantfinalThe answer".
	const analysis = "analysis"
	if n := min(len(buf), len(analysis)+1); !m.eof && n < len(analysis)+1 && string(buf[:min(n, len(analysis))]) == analysis[:min(n, len(analysis))] {
		return false
	}
	if len(buf) > len(analysis) && string(buf[:len(analysis)]) == analysis && m.inert == nil {
		if c := buf[len(analysis)]; c >= 'A' && c <= 'Z' {
			m.reg = regionOf(&m.regions.fusedHarmony, fusedHarmony{f: tag.Finder{Pats: []string{"assistantfinal"}, At: len(analysis)}})
			return true
		}
	}
	// Harmony's commentary with its tokens stripped: "commentary
	// to=functions.get_weather json{...}" (Rapid-MLX #480).
	if match, need := lenient.HasPrefixFold(buf, 0, "commentary to=", m.eof); need {
		return false
	} else if match {
		if name, jsonAt, ok, need := m.recipient(len("commentary ")); need {
			return false
		} else if ok {
			m.reg = newHeaderCall(m, 0, jsonAt, name)
			m.inert.headerAt(m, jsonAt)
			return true
		}
	}
	// Functionary v3: the reply starts in the "all" channel, or with the
	// first call's name on a line of its own.
	if match, need := lenient.HasPrefixFold(buf, 0, "all\n", m.eof); need {
		return false
	} else if match && buf[0] == 'a' {
		m.pos, m.textFrom = 4, 4
		return true
	}
	if m.cfg.Declared {
		j := 0
		for j < len(buf) && j < maxStealWord && lenient.IsPyIdentByte(buf[j]) {
			j++
		}
		if j > 0 && j < maxStealWord {
			if j+1 >= len(buf) && !m.eof {
				return false
			}
			if j+1 < len(buf) && buf[j] == '\n' && m.cfg.known(string(buf[:j]), true) {
				k := j + 1
				for k < len(buf) && lenient.IsWS(buf[k]) {
					k++
				}
				if k >= len(buf) && !m.eof {
					return false
				}
				if k < len(buf) && buf[k] == '{' {
					m.reg = newHeaderCall(m, 0, k, string(buf[:j]))
					m.inert.headerAt(m, k)
					return true
				}
			}
		}
	}
	return true
}

// appendReasoning adds reasoning text.
func (m *machine) appendReasoning(b []byte) {
	m.reasoning = append(m.reasoning, b...)
}

// ---- calls and events ----

// beginCall announces a call whose region has started. Every region that
// announces a call ends with at least one attempt.
func (m *machine) beginCall(tool string) {
	if m.emit == nil || m.open >= 0 {
		return
	}
	m.open = m.nextIndex()
	m.event(result.Event{Kind: result.EventCallStart, Index: m.open, Tool: tool})
}

// callDelta reports raw call text as the model writes it.
func (m *machine) callDelta(b []byte) {
	if m.emit == nil || m.open < 0 || len(b) == 0 {
		return
	}
	m.event(result.Event{Kind: result.EventCallDelta, Index: m.open, Text: m.callText(b)})
}

// callText returns a copy of b (a stream's input buffer is handed to the
// next stream) in callBuf: an append-only buffer, as text is, whose bytes
// are never written again once reported, so that a call streamed in many
// pieces does not make a string of each. A full buffer is left to the
// strings made in it, and a new one, twice its size, started.
func (m *machine) callText(b []byte) string {
	if len(m.callBuf)+len(b) > cap(m.callBuf) {
		m.callBuf = make([]byte, 0, max(2*cap(m.callBuf), len(b), minText))
	}
	n := len(m.callBuf)
	m.callBuf = append(m.callBuf, b...)
	return frozen(m.callBuf[n:])
}

func (m *machine) nextIndex() int {
	n := len(m.attempts)
	if m.fence != nil {
		n += len(m.fence.attempts)
	}
	return n
}

// addCalls validates raw calls and records them as attempts.
func (m *machine) addCalls(raws []RawCall) {
	m.made += len(raws)
	for _, rc := range raws {
		idx := m.nextIndex()
		rc.Stable = m.stream && len(rc.Src) > 0 && len(m.buf) > 0 && &rc.Src[0] == &m.buf[0]
		a, diags := m.cfg.Finish(rc, m.cfg.IDPrefix+strconv.Itoa(idx+1))
		if args := a.Call.Args; rc.Stable && len(args) > 0 && m.holds(args) {
			m.shared = true
		}
		if m.emit != nil {
			if m.open < 0 {
				m.event(result.Event{Kind: result.EventCallStart, Index: idx, Tool: a.Call.Tool})
				if len(rc.raw) > 0 {
					m.event(result.Event{Kind: result.EventCallDelta, Index: idx, Text: m.callText(rc.raw)})
				}
			}
			m.open = -1
			ac := a
			m.reportEnd(result.Event{Kind: result.EventCallEnd, Index: idx, Tool: a.Call.Tool, Attempt: &ac}, rc.Err == result.DiagTruncated)
		}
		if rc.Err == result.DiagTruncated {
			m.loop.cutID = a.Call.ID
		}
		if m.fence != nil {
			m.fence.attempts = append(m.fence.attempts, a)
			m.fence.diags = append(m.fence.diags, diags...)
			continue
		}
		m.attempts = append(m.attempts, a)
		m.noteAttempts(len(m.attempts) - 1)
		m.diags = append(m.diags, diags...)
	}
	m.open = -1
}

// diag records a diagnostic that is not about a call.
func (m *machine) diag(d result.Diagnostic) {
	if m.fence != nil {
		m.fence.diags = append(m.fence.diags, d)
		return
	}
	m.diags = append(m.diags, d)
}

// event sends an event, after the text that comes before it.
func (m *machine) event(e result.Event) {
	if m.fence != nil {
		m.fence.events = append(m.fence.events, e)
		return
	}
	m.emitText(false)
	m.emit(e)
}

func (m *machine) flushEvents() {
	if m.emit == nil {
		return
	}
	m.emitText(m.eof && m.reg == nil)
}

// emitText sends the text decided so far, holding back trailing white space
// (the Parsed text is trimmed) and an incomplete UTF-8 sequence.
func (m *machine) emitText(final bool) {
	if !final && len(m.text) == m.em.checked && len(m.reasoning) == m.em.rsent {
		return
	}
	if len(m.reasoning) > m.em.rsent {
		n := m.em.rsent + validUTF8Prefix(m.reasoning[m.em.rsent:])
		if final {
			n = len(m.reasoning)
		}
		if n > m.em.rsent {
			m.emit(result.Event{Kind: result.EventReasoning, Text: frozen(m.reasoning[m.em.rsent:n])})
			m.em.rsent = n
		}
	}
	t := m.text
	e := &m.em
	if e.checked < len(t) {
		// Classify the new text: where its first non-space is, and where the
		// run of white space at its end starts. Only complete runes count.
		end := e.checked + validUTF8Prefix(t[e.checked:])
		if e.first < 0 {
			for i := e.checked; i < end; {
				r, size := utf8.DecodeRune(t[i:end])
				if !unicode.IsSpace(r) {
					e.first = i
					break
				}
				i += size
			}
		}
		j := end
		for j > e.checked {
			c := t[j-1]
			if c < utf8.RuneSelf {
				if c != ' ' && (c < '\t' || c > '\r') {
					break
				}
				j--
				continue
			}
			r, size := utf8.DecodeLastRune(t[e.checked:j])
			if !unicode.IsSpace(r) {
				break
			}
			j -= size
		}
		switch {
		case j == end: // ends with something else
			e.spaceAt = -1
		case j > e.checked || e.spaceAt < 0: // a new run of white space
			e.spaceAt = j
		}
		e.checked = end
	}
	if final && e.checked < len(t) {
		// an incomplete rune at the very end is text, as trimSpace sees it
		e.spaceAt = -1
		if e.first < 0 {
			e.first = e.checked
		}
		e.checked = len(t)
	}
	if e.first < 0 {
		return
	}
	if e.emitted < e.first {
		e.emitted = e.first
	}
	end := e.checked
	if e.spaceAt >= 0 {
		end = e.spaceAt
	}
	if end > e.emitted {
		m.emit(result.Event{Kind: result.EventText, Text: frozen(t[e.emitted:end])})
		e.emitted = end
	}
}

// frozen returns b as a string without copying. The machine only ever
// appends to its text and reasoning buffers and never rewrites a byte it has
// reported, so the bytes behind the string never change. Never use it on
// the input buffer: a stream hands that on to the next stream when it is
// finished.
func frozen(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// textResult returns the reply's text. It is copied unless it fills its
// buffer but for an eighth, or the buffer is small: a result keeps what it
// returns, not a buffer sized for the whole reply.
func (m *machine) textResult() string {
	t := bytes.TrimSpace(m.text)
	if cap(m.text) > max(len(t)+len(t)/8+64, minText) {
		return string(t)
	}
	return frozen(t)
}

func (m *machine) result() result.Parsed {
	r := result.Parsed{
		Text:        m.textResult(),
		Reasoning:   string(m.reasoning),
		Attempts:    m.attempts,
		Diagnostics: m.diags,
	}
	if len(m.attempts) > 0 {
		r.Calls = make([]ptk.Call, 0, len(m.attempts))
	}
	for _, a := range m.attempts {
		if a.Err == nil {
			r.Calls = append(r.Calls, a.Call)
		}
	}
	return r
}

// ---- code fences ----

// fenceCtx is a code fence whose content may be calls: ```json\n{...}\n```.
// Until it is decided, its calls, events and diagnostics are held here. It
// counts as calls when it holds only calls, they name declared tools (when
// tools are declared), and no prose follows it in the reply — only white
// space, more calls, or protocol tokens; otherwise it is an example, and
// text, byte for byte.
type fenceCtx struct {
	start    int // the opening backticks
	end      int // after the closing backticks, once closed
	char     byte
	ticks    int
	atLine   bool // opened at the start of a line
	toolCode bool // ```tool_code: bare name(...) calls count without declared tools
	closed   bool

	// listCalls counts the calls read from bracketed lists, [f(a=1)]
	listCalls int
	held      []byte // white space seen in the fence, or after it once closed
	attempts  []result.Attempt
	diags     []result.Diagnostic
	events    []result.Event
}

// closeFence is called at the closing backticks of an open call fence.
func (m *machine) closeFence(end int) {
	f := m.fence
	f.closed = true
	f.end = end
	f.held = f.held[:0] // white space inside the fence is part of it
	if len(f.attempts) == 0 {
		m.rejectFence()
		return
	}
	for _, a := range f.attempts {
		if a.Err != nil && a.Err.Code == ptk.ToolNotFound {
			m.rejectFence()
			return
		}
	}
	// Wait for what follows: prose after it makes the fence an example.
}

func (m *machine) acceptFence() {
	f := m.fence
	m.fence = nil
	m.attempts = append(m.attempts, f.attempts...)
	m.noteAttempts(len(m.attempts) - len(f.attempts))
	m.diags = append(m.diags, f.diags...)
	m.appendText(f.held)
	if m.emit != nil {
		for _, e := range f.events {
			m.event(e)
		}
	}
}

// rejectFence turns a closed fence back into text.
func (m *machine) rejectFence() {
	f := m.fence
	m.fence = nil
	m.appendText(m.buf[f.start:f.end])
	m.appendText(f.held) // white space after the fence
}

// convertFence turns an open fence into text from its start to at, and reads
// the rest of it as text.
func (m *machine) convertFence(at int) {
	f := m.fence
	m.fence = nil
	m.appendText(m.buf[f.start:at])
	m.textFrom = at
	m.pos = at
	m.reg = regionOf(&m.regions.textFence, textFence{char: f.char, ticks: f.ticks, atLine: f.atLine, pos: at})
}

// finishFence settles a fence still open or pending at the end of the reply.
func (m *machine) finishFence() {
	if m.fence == nil {
		return
	}
	if !m.fence.closed {
		m.closeFence(len(m.buf))
		if m.fence == nil {
			return
		}
	}
	m.acceptFence()
}

// validUTF8Prefix returns the length of b without a trailing incomplete rune.
func validUTF8Prefix(b []byte) int {
	n := len(b)
	for k := 1; k <= 3 && k <= n; k++ {
		c := b[n-k]
		if c < utf8.RuneSelf {
			return n
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[n-k:]) {
				return n - k
			}
			return n
		}
	}
	return n
}
