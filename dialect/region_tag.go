package dialect

// Calls between tags: <PTK_CALL>, <tool_call>, <function_call>,
// <|tool_call|> and the rest, with JSON, XML, pythonic or Gemma bodies.

import (
	"bytes"
	"github.com/ptkit/ptk/dialect/internal/markup"
	"github.com/ptkit/ptk/dialect/internal/shape"
	"github.com/ptkit/ptk/dialect/result"
	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
	"slices"
)

const (
	repairMissingCloser = "missing closing tag: the call ends where its JSON ends"
	repairExtraClosers  = "extra closing brackets after the call ignored"
	repairCutCloser     = "the closing tag is cut off at the end of the reply"
	repairCutBrace      = "the reply ends before the call's closing brace: the call ends where its arguments end"
)

// maxJunk bounds how far past a call's JSON its closing tag is looked for.
const maxJunk = 1024

// junkStops end the search for a closing tag after a call's JSON: a blank
// line, or what starts another call.
var junkStops = []string{"\n\n", "<ptk_call", "<tool_call", "<function", "<invoke", "<|tool_call", "[tool_calls]", "```"}

// tagCall is a call between tags: <PTK_CALL>, <tool_call>, <function_call>,
// <|tool_call|>, <json> and the like, with a JSON body (one or more values,
// possibly fenced) or a text body (XML parameters, GLM arguments, pythonic
// or Gemma calls).
type tagCall struct {
	start   int // the opener's '<'
	body    int // first byte after the opener
	jsonAt  int // bodyJSON: the first '{' or '['
	name    string
	json    bool
	closers []string
	weak    bool // <json>, <xml>: a call only as bare JSON would be
	gemma   bool
	// py: the body is pythonic: a [f(a=1)] list (pyBracket), or calls
	// f(a=1) one after another; pyOpen is the first '[' or '('.
	py        bool
	pyBracket bool
	pyOpen    int
	sc        *lenient.PyScan

	began   bool
	sent    int
	jp      *lenient.Reader
	vals    []*lenient.Node
	bad     []RawCall // values that broke, when the values after them were read
	repairs lenient.Repairs
	extra   []string
	phase   int
	after   int
	xs      markup.Scan
	cf      tag.Finder
	// junk is where text between the JSON and the closer starts;
	// textAfter is that text, kept after the call.
	junk      int
	textAfter [2]int
}

func (r *tagCall) advance(m *machine) bool {
	if !r.began {
		r.began = true
		r.sent = r.body
		if !r.weak {
			m.beginCall(r.name)
		}
		if r.json {
			r.jp = m.newJParser(r.jsonAt, false)
			r.jp.Closers = r.closers
		} else {
			r.xs = markup.Scan{At: r.body, Closers: r.closers, Gemma: r.gemma}
		}
	}
	switch {
	case r.json:
		return r.advanceJSON(m)
	case r.py:
		return r.advancePython(m)
	}
	return r.advanceText(m)
}

// advancePython reads a pythonic body by its brackets and strings, so a
// closing token inside a string argument is part of the string.
func (r *tagCall) advancePython(m *machine) bool {
	buf := m.buf
	for {
		if r.phase == 0 {
			if r.sc == nil {
				r.sc = lenient.NewPyScan(r.pyOpen)
			}
			st := r.sc.Feed(buf, m.eof)
			r.delta(m, r.sc.Pos)
			switch st {
			case lenient.Need:
				return false
			case lenient.Fail:
				// Unbalanced: fall back to finding the closer.
				r.py = false
				r.xs = markup.Scan{At: r.sc.FailPos, Closers: r.closers}
				return r.advanceText(m)
			}
			r.after, r.phase = r.sc.End, 1
		}
		i, need, _ := m.skipWS(r.after, maxLook)
		if need {
			return false
		}
		if i < len(buf) && buf[i] == '<' {
			for k, cl := range r.closers {
				match, need := lenient.HasPrefixFold(buf, i, cl, m.eof)
				if need {
					return false
				}
				if match {
					return r.finishPython(m, i+len(r.closers[k]), "")
				}
			}
		}
		if !r.pyBracket && i < len(buf) && lenient.IsIdentStart(buf[i]) {
			// another call: name(...)
			k := i
			for k < len(buf) && k-i < 2*maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.') {
				k++
			}
			if k >= len(buf) && !m.eof {
				return false
			}
			if k < len(buf) && buf[k] == '(' {
				r.sc, r.pyOpen, r.phase = nil, k, 0
				continue
			}
		}
		return r.finishPython(m, r.after, "missing closing tag: the call ends where its last call ends")
	}
}

func (r *tagCall) finishPython(m *machine, end int, repair string) bool {
	r.delta(m, r.after)
	start := r.body
	pp := &lenient.Python{Src: m.buf, Pos: start, End: r.after}
	calls := pp.CallList(r.pyBracket)
	raws := pyRaws(calls, m.buf, 0)
	for i := range raws {
		raws[i].Offset = r.start
		if repair != "" {
			raws[i].Repairs = append(raws[i].Repairs, repair)
		}
	}
	if pp.Err != "" {
		raws = append(raws, RawCall{Offset: r.start, Err: result.DiagMalformed, ErrMsg: "the call cannot be read: " + pp.Err})
	}
	m.addCalls(raws)
	m.pos = end
	return true
}

func (r *tagCall) delta(m *machine, upto int) {
	if !r.weak && upto > r.sent {
		m.callDelta(m.buf[r.sent:upto])
		r.sent = upto
	}
}

func (r *tagCall) advanceJSON(m *machine) bool {
	buf := m.buf
	for {
		switch r.phase {
		case 0: // reading a JSON value
			st := r.jp.Feed(buf, m.eof)
			r.delta(m, r.jp.Pos)
			switch st {
			case lenient.Need:
				return false
			case lenient.Fail:
				r.mergeRepairs()
				if !r.weak && r.name == "" && r.jp.CloseAtEnd(len(buf), completeEnvelope) {
					// {"name": "f", "arguments": {...}  and the reply ends:
					// the arguments are complete, only the brace is missing.
					r.extra = append(r.extra, repairCutBrace)
					r.vals = append(r.vals, r.jp.Root)
					r.after = len(buf)
					r.phase = 1
					continue
				}
				if r.jp.Truncated {
					return r.finishBad(m, len(buf), result.DiagTruncated, "the call is cut off before its JSON ends: "+r.jp.FailMsg)
				}
				r.phase = 4
				continue
			}
			r.vals = append(r.vals, r.jp.Root)
			r.mergeRepairs()
			r.after = r.jp.End
			r.phase = 1
		case 1: // after a value: more values, a closing fence, the closer
			i, need, _ := m.skipWS(r.after, len(buf))
			if need {
				return false
			}
			if i >= len(buf) {
				if !m.eof {
					return false
				}
				r.extra = append(r.extra, repairMissingCloser)
				return r.finish(m, r.jp.End, r.jp.End)
			}
			c := buf[i]
			if c == '<' && m.eof && lenient.CutOff(buf, i, r.closers) {
				r.extra = append(r.extra, repairCutCloser)
				return r.finish(m, r.jp.End, len(buf))
			}
			if c == '<' {
				for _, cl := range r.closers {
					match, need := lenient.HasPrefixFold(buf, i, cl, m.eof)
					if need {
						return false
					}
					if match {
						return r.finish(m, r.jp.End, i+len(cl))
					}
				}
			}
			switch c {
			case '`', '~':
				j := i
				for j < len(buf) && buf[j] == c {
					j++
				}
				if j >= len(buf) && !m.eof {
					return false
				}
				if j-i >= 3 {
					r.after = j
					continue
				}
			case ',', ';':
				j := i + 1
				for j < len(buf) && lenient.IsWS(buf[j]) {
					j++
				}
				if j >= len(buf) && !m.eof {
					return false
				}
				if j < len(buf) && (buf[j] == '{' || buf[j] == '[') {
					r.jp = m.newJParser(j, false)
					r.jp.Closers = r.closers
					r.phase = 0
					continue
				}
			case '{', '[':
				r.jp = m.newJParser(i, false)
				r.jp.Closers = r.closers
				r.phase = 0
				continue
			case '}', ']':
				r.extra = appendOnce(r.extra, repairExtraClosers)
				r.after = i + 1
				continue
			}
			// Something else before the closer: a comment, a line of prose.
			// Look for the closer nearby, before a blank line or another call.
			r.cf = tag.Finder{Pats: append(append([]string{}, r.closers...), junkStops...), At: i, Limit: i + maxJunk}
			r.junk = i
			r.phase = 3
		case 3:
			idx, k := r.cf.Find(buf, m.eof)
			if idx < 0 && !m.eof && r.cf.At < r.cf.Limit {
				return false
			}
			if idx >= 0 && k < len(r.closers) {
				// A comment is dropped; prose is kept as text after the call.
				junk := bytes.TrimSpace(buf[r.junk:idx])
				if bytes.HasPrefix(junk, []byte("//")) || bytes.HasPrefix(junk, []byte("/*")) || bytes.HasPrefix(junk, []byte("#")) {
					r.extra = append(r.extra, "comment between the call and its closing tag ignored")
				} else {
					r.textAfter = [2]int{r.junk, idx}
				}
				return r.finish(m, r.jp.End, idx+len(r.closers[k]))
			}
			r.extra = append(r.extra, repairMissingCloser)
			return r.finish(m, r.jp.End, r.jp.End)
		case 4: // malformed JSON: another call on the next line, or find the closer
			next, wait := r.nextLine(m)
			if wait {
				return false
			}
			if next >= 0 {
				// one call per line, one of them broken: the others are read
				r.bad = append(r.bad, RawCall{Offset: r.start, Err: result.DiagMalformed, ErrMsg: "the call's JSON cannot be read: " + r.jp.FailMsg})
				r.jp = m.newJParser(next, false)
				r.jp.Closers = r.closers
				r.phase = 0
				continue
			}
			r.cf = tag.Finder{Pats: r.closers, At: r.jp.FailPos}
			r.phase = 2
		case 2: // malformed JSON: find the closer
			idx, k := r.cf.Find(buf, m.eof)
			if idx < 0 {
				r.delta(m, r.cf.At)
				if !m.eof {
					return false
				}
				return r.finishBad(m, len(buf), result.DiagMalformed, "the call's JSON cannot be read: "+r.jp.FailMsg)
			}
			r.delta(m, idx)
			return r.finishBad(m, idx+len(r.closers[k]), result.DiagMalformed, "the call's JSON cannot be read: "+r.jp.FailMsg)
		}
	}
}

// nextLine finds, after the JSON that broke, the next line that starts a
// JSON object before the body's closer: where the next of calls written one
// per line starts, or -1. wait: more input is needed to say.
func (r *tagCall) nextLine(m *machine) (next int, wait bool) {
	buf := m.buf
	if r.weak || r.name != "" {
		return -1, false
	}
	i := r.jp.FailPos
	for i < len(buf) && buf[i] != '\n' && i-r.jp.FailPos < maxJunk {
		if buf[i] == '<' {
			if n, need := prefixAt(buf, i, r.closers, m.eof); need || n >= 0 {
				return -1, need // the body ends on this line
			}
		}
		i++
	}
	if i >= len(buf) {
		return -1, !m.eof && i-r.jp.FailPos < maxJunk
	}
	if buf[i] != '\n' {
		return -1, false
	}
	j, need, _ := m.skipWS(i, maxLook)
	if need {
		return -1, true
	}
	if j < len(buf) && buf[j] == '{' {
		return j, false
	}
	return -1, false
}

// completeEnvelope reports that v, the JSON of calls cut off before its
// last bracket, holds complete calls: a list of them, or an object with a
// name and arguments.
func completeEnvelope(v *lenient.Node) bool {
	if v != nil && v.Kind == lenient.Array {
		return true
	}
	return completeCall(v)
}

// completeCall reports that v, a call's JSON cut off before its closing
// brace, holds a name and complete arguments.
func completeCall(v *lenient.Node) bool {
	if v == nil || v.Kind != lenient.Object {
		return false
	}
	rc, kind, _ := callOf(v, nil)
	return kind == shape.NameArgs && rc.Args != nil && rc.Args.Kind == lenient.Object
}

func appendOnce(s []string, x string) []string {
	if slices.Contains(s, x) {
		return s
	}
	return append(s, x)
}

func (r *tagCall) mergeRepairs() {
	r.repairs.Merge(&r.jp.Rep)
}

func (r *tagCall) allRepairs() []string {
	return append(r.repairs.Strings(), r.extra...)
}

// finish ends the region at end, the calls read from the values.
func (r *tagCall) finish(m *machine, bodyEnd, end int) bool {
	r.delta(m, bodyEnd)
	raws := m.raws[:0]
	for i, v := range r.vals {
		switch {
		case r.weak:
			// <json>, <xml>: calls only by the rules for bare JSON
			calls := m.bareCalls(v, m.buf, r.start)
			if calls == nil {
				m.pos = end
				m.regionText(r.start, end)
				return true
			}
			raws = append(raws, calls...)
		case r.name != "" && i == 0:
			raws = append(raws, RawCall{Name: r.name, Args: v, Src: m.buf, Offset: r.start})
		default:
			raws = appendCallsFromJSON(raws, v, m.buf, r.start)
		}
	}
	rep := r.allRepairs()
	for i := range raws {
		raws[i].Repairs = append(raws[i].Repairs, rep...)
		if r.weak {
			raws[i].raw = m.buf[r.start:end]
		}
	}
	raws = append(raws, r.bad...)
	m.addCalls(raws)
	m.raws = raws[:0]
	m.pos = end
	if t := r.textAfter; t[1] > t[0] {
		m.regionText(t[0], t[1])
		m.pos = end
	}
	return true
}

func (r *tagCall) finishBad(m *machine, end int, k result.DiagKind, msg string) bool {
	if r.weak {
		m.pos = end
		m.regionText(r.start, end)
		return true
	}
	m.addCalls([]RawCall{{Name: r.name, Offset: r.start, Err: k, ErrMsg: msg, Repairs: r.allRepairs()}})
	m.pos = end
	return true
}

func (r *tagCall) advanceText(m *machine) bool {
	buf := m.buf
	idx, k := r.xs.Find(buf, m.eof)
	if idx < 0 {
		r.delta(m, r.xs.At)
		if !m.eof {
			return false
		}
		// No closer: the call ends with its last complete element, or is cut off.
		if isAllSpace(buf[r.body:]) {
			return r.finishBad(m, len(buf), result.DiagTruncated, "the call is cut off right after its opening tag")
		}
		end := len(buf)
		if r.xs.LastEnd > r.body {
			end = r.xs.LastEnd
		}
		raws, complete := m.parseTextBody(buf[r.body:end], r.start, r.gemma)
		if !complete {
			return r.finishBad(m, len(buf), result.DiagTruncated, "the call is cut off before it ends")
		}
		repair := "missing closing tag: the call ends where its last element ends"
		if k, _, _ := m.skipWS(end, len(buf)); lenient.CutOff(buf, k, r.closers) {
			repair, end = repairCutCloser, len(buf) // </function>\n</tool_
		}
		for i := range raws {
			raws[i].Repairs = append(raws[i].Repairs, repair)
		}
		m.addCalls(raws)
		m.pos = end
		return true
	}
	r.delta(m, idx)
	raws, _ := m.parseTextBody(buf[r.body:idx], r.start, r.gemma)
	m.addCalls(raws)
	m.pos = idx + len(r.closers[k])
	return true
}

// parseTextBody reads the calls in a non-JSON call body. complete reports
// that the body reads as whole calls.
func (m *machine) parseTextBody(b []byte, off int, gemma bool) ([]RawCall, bool) {
	t := bytes.TrimSpace(b)
	switch {
	case len(t) == 0:
		return []RawCall{{Offset: off, Err: result.DiagMalformed, ErrMsg: "the call is empty"}}, true
	case gemma || bytes.HasPrefix(t, []byte("call:")):
		return rawsOf(markup.Gemma(t, off))
	case t[0] == '<':
		return rawsOf(markup.XMLCalls(t, off))
	case bytes.HasPrefix(t, []byte("function=")):
		// Qwen3-Coder's opener written without its '<'
		calls, complete := rawsOf(markup.XMLCalls(append([]byte("<"), t...), off))
		for i := range calls {
			calls[i].Repairs = append(calls[i].Repairs, "the opening tag <function=...> was missing its '<'")
		}
		return calls, complete
	case t[0] == '[':
		pp := &lenient.Python{Src: t, End: len(t)}
		calls := pp.CallList(true)
		out := pyRaws(calls, t, off)
		if pp.Err != "" {
			out = append(out, RawCall{Offset: off, Err: result.DiagMalformed, ErrMsg: "the call cannot be read: " + pp.Err})
			return out, len(calls) > 0
		}
		return out, true
	}
	// name<arg_key>..., name(...), or a bare name
	k := 0
	for k < len(t) && (lenient.IsPyIdentByte(t[k]) || t[k] == '.' || t[k] == '-') {
		k++
	}
	rest := bytes.TrimSpace(t[k:])
	switch {
	case len(rest) > 0 && rest[0] == '(':
		pp := &lenient.Python{Src: t, End: len(t)}
		calls := pp.CallList(false)
		out := pyRaws(calls, t, off)
		if pp.Err != "" {
			out = append(out, RawCall{Offset: off, Err: result.DiagMalformed, ErrMsg: "the call cannot be read: " + pp.Err})
			return out, len(calls) > 0
		}
		return out, true
	default:
		return rawsOf(markup.GLM(t, off, m.toolPrefix))
	}
}

func pyRaws(calls []lenient.PyCall, src []byte, off int) []RawCall {
	out := make([]RawCall, 0, len(calls))
	for _, c := range calls {
		rc := RawCall{Name: c.Name, Args: c.Args, Positional: c.Positional, Nested: c.Nested, Offset: off + c.Start, raw: src[c.Start:c.End]}
		if c.Err != "" {
			rc.Err, rc.ErrMsg = result.DiagMalformed, "the call's arguments cannot be read: "+c.Err
		}
		if c.InExpr {
			rc.Repairs = append(rc.Repairs, "read out of an expression in the list of calls: its operators are not applied")
		}
		out = append(out, rc)
	}
	return out
}
