package dialect

import (
	"bytes"
	"github.com/ptkit/ptk/dialect/result"
	"github.com/ptkit/ptk/lenient"
)

// Calls written in Python syntax outside any marker.

// pythonic is a call list in Python syntax: [f(a=1), g(b='x')], or one
// bare call on a line of its own (name(...)) where the name is declared.
type pythonic struct {
	start   int  // '[' or the first byte of the name
	paren   int  // for a bare call: its '('
	bracket bool // a [ ... ] list
	strong  bool // inside markers that say it is a call
	sc      *lenient.PyScan
	st      lenient.Status
	// last is where the last call scanned whole ends, 0 before the first:
	// bare calls may follow one another on their line, f(a=1); g(b=2).
	last int
	// chained: more than one call was scanned that way.
	chained bool
}

// notACall gives the text back: the opening byte (and a name taken from the
// prose) is text, and what follows is read again.
func (r *pythonic) notACall(m *machine) bool {
	if !r.bracket {
		to := r.paren + 1
		if r.chained {
			// f(a=1),\ng(b=2),\nh(c=3) and prose: every call of the chain
			// ends the same way, so none starts a line of calls; read as
			// text at once, not again from each line
			to = r.last
		}
		if m.regionText(r.start, to) {
			return true
		}
		m.pos = to
		return true
	}
	if m.regionText(r.start, r.start+1) {
		return true
	}
	m.pos = r.start + 1
	return true
}

func (r *pythonic) advance(m *machine) bool {
	buf := m.buf
	if r.sc == nil {
		open := r.start
		if !r.bracket {
			open = r.paren
		}
		r.sc = lenient.NewPyScan(open)
		if r.strong {
			m.beginCall("")
		}
	}
	for {
		if r.st == lenient.Need {
			st := r.sc.Feed(buf, m.eof)
			if st == lenient.Need {
				return false
			}
			r.st = st // the brackets are settled; only what follows may be awaited
			if st == lenient.Done {
				r.last = r.sc.End
			}
		}
		if r.st != lenient.Done || r.bracket || r.strong {
			break
		}
		paren, need := m.nextOnLine(r.last)
		if need {
			return false
		}
		if paren < 0 {
			break
		}
		r.sc, r.st, r.chained = lenient.NewPyScan(paren), lenient.Need, true
	}
	st := r.st
	end := r.sc.End
	if st == lenient.Fail {
		end = r.sc.FailPos
		if m.eof && r.sc.FailPos >= len(buf) {
			end = len(buf)
		} else if r.last > 0 {
			// a later call on the line is broken: the line ends the
			// calls there, and what follows decides whether it is prose
			end, st = r.last, lenient.Done
		}
	}
	lineEnd := end
	if !r.bracket && !r.strong && (st == lenient.Done || end < len(buf)) {
		// name(...) counts only on a line of its own: what follows on its
		// line ("is what you would write in Python") makes it prose.
		// Decided before the calls are read, which a long line of them
		// would make costly to read again for each byte awaited.
		j := end
		for j < len(buf) && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == ';') && j-end < maxLook {
			j++
		}
		if j >= len(buf) && !m.eof && j-end < maxLook {
			return false
		}
		if j < len(buf) && buf[j] != '\n' && buf[j] != '\r' {
			return r.notACall(m)
		}
		if bytes.IndexByte(buf[end:j], ';') >= 0 {
			lineEnd = j // the statement's ';' is part of the call
		}
	}
	pp := &lenient.Python{Src: buf, Pos: r.start, End: end}
	calls := pp.CallList(r.bracket)
	accept := len(calls) > 0
	if r.bracket && buf[r.start] == '(' && (pp.Err != "" || st != lenient.Done) {
		accept = false // (f(a=1) is what to call): prose in parentheses
	}
	if accept && !r.strong {
		if m.cfg.Declared {
			accept = m.cfg.known(calls[0].Name, false)
		} else {
			for _, c := range calls {
				if len(c.Positional) > 0 {
					accept = false
				}
			}
			accept = accept && r.bracket
		}
	}
	if !accept && r.strong {
		msg := "the call cannot be read"
		if pp.Err != "" {
			msg += ": " + pp.Err
		}
		m.addCalls([]RawCall{{Offset: r.start, Err: result.DiagMalformed, ErrMsg: msg}})
		m.pos = max(end, r.start+1)
		return true
	}
	if !accept {
		return r.notACall(m)
	}
	end = lineEnd
	raws := pyRaws(calls, buf, 0)
	if pp.Err != "" {
		raws = append(raws, RawCall{Offset: pp.ErrAt, Err: result.DiagMalformed, ErrMsg: "a call in the list cannot be read: " + pp.Err})
	}
	if st == lenient.Fail && pp.Err == "" {
		end = pp.Pos
	}
	if m.fence != nil && r.bracket {
		m.fence.listCalls += len(raws)
	}
	m.addCalls(raws)
	m.listed = m.listed || r.bracket && len(calls) > 0
	m.pos = end
	return true
}

// nextOnLine returns the '(' of another call on the line after a bare call
// that ends at from — f(a=1); g(b=2) or f(a=1), g(b=2), as models without a
// list write several, or on the next line after a comma — or -1. need reports that the input ends before it
// can tell.
func (m *machine) nextOnLine(from int) (paren int, need bool) {
	buf := m.buf
	j := from
	for j < len(buf) && (buf[j] == ' ' || buf[j] == '\t') && j-from < maxLook {
		j++
	}
	if j >= len(buf) {
		return -1, !m.eof && j-from < maxLook
	}
	if buf[j] != ';' && buf[j] != ',' {
		return -1, false
	}
	k := j + 1
	for k < len(buf) && (buf[k] == ' ' || buf[k] == '\t' || buf[j] == ',' && (buf[k] == '\n' || buf[k] == '\r')) && k-j < maxLook {
		k++ // f(a=1),\ng(b=2): a list of calls over lines
	}
	n := k
	for n < len(buf) && n-k < 2*maxStealWord && (lenient.IsPyIdentByte(buf[n]) || buf[n] == '.') {
		n++
	}
	if n >= len(buf) {
		return -1, !m.eof && n-k < 2*maxStealWord && k-j < maxLook
	}
	if n == k || buf[n] != '(' || !lenient.IsIdentStart(buf[k]) {
		return -1, false
	}
	return n, false
}

// quotedCalls is calls written as quoted strings, as models shown calls as
// strings write them: a list ['f(a=1)', "g(b=2)"], a string holding several
// ('f(a=1), g(b=2)'), or one 'f(a=1)' alone on its line. Each call is read
// from the text between the quotes as it is written, so a string argument
// in the same quote ('f(a='x')'), a closing quote left out, or a quote
// escaped inside ("f(a='[\"x\"]')") read as the model meant them. The first
// call must name a declared tool; a list that turns out to hold anything
// else is text.
type quotedCalls struct {
	start   int  // the '[', or the opening quote of a call alone
	bracket bool // a [ ... ] list
	at      int  // phase 0: the opening quote of the next element
	phase   int
	sc      *lenient.PyScan
	callAt  int      // the name of the call being scanned
	spans   [][2]int // the calls read
	end     int      // phase 3: after the last call, before its closing quote
}

// quotedCallAt reads 'name( at buf[j], a quote and the name of a call, or
// the name quoted alone, 'name'(: it returns the name and its '(' (-1 when
// it is not one).
func (m *machine) quotedCallAt(j int) (name string, paren int, need bool) {
	buf := m.buf
	k := j + 1
	for k < len(buf) && k-j <= 2*maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.') {
		k++
	}
	if k+1 >= len(buf) && !m.eof && k-j <= 2*maxStealWord {
		return "", -1, true
	}
	if k >= len(buf) || k == j+1 || !lenient.IsIdentStart(buf[j+1]) {
		return "", -1, false
	}
	switch {
	case buf[k] == '(':
		return string(buf[j+1 : k]), k, false
	case buf[k] == buf[j] && k+1 < len(buf) && buf[k+1] == '(':
		return string(buf[j+1 : k]), k + 1, false
	}
	return "", -1, false
}

func (r *quotedCalls) advance(m *machine) bool {
	buf := m.buf
	for {
		switch r.phase {
		case 0: // at an element's opening quote
			_, paren, need := m.quotedCallAt(r.at)
			if need {
				return false
			}
			if paren < 0 {
				return r.notACall(m)
			}
			r.callAt, r.sc, r.phase = r.at+1, lenient.NewPyScan(paren), 1
			if m.buf[paren-1] == m.buf[r.at] {
				r.callAt = r.at // 'name'(args): the call's name is quoted
			}
		case 1: // scanning a call's arguments
			switch r.sc.Feed(buf, m.eof) {
			case lenient.Need:
				return false
			case lenient.Fail:
				if m.eof && r.sc.FailPos >= len(buf) {
					// cut off at the end of the reply: the calls before it run
					return r.finish(m, len(buf), true)
				}
				return r.notACall(m)
			}
			r.spans = append(r.spans, [2]int{r.callAt, r.sc.End})
			r.phase = 2
		case 2: // after a call: another in the same string, or the quote
			end := r.spans[len(r.spans)-1][1]
			paren, need := m.nextOnLine(end)
			if need {
				return false
			}
			if paren >= 0 {
				k := paren
				for k > end && (lenient.IsPyIdentByte(buf[k-1]) || buf[k-1] == '.') {
					k--
				}
				r.callAt, r.sc, r.phase = k, lenient.NewPyScan(paren), 1
				continue
			}
			r.end, r.phase = end, 3
		case 3: // the closing quote (a model may leave it out), then ',' or ']'
			j := r.end
			for j < len(buf) && (buf[j] == ' ' || buf[j] == '\t') && j-r.end < maxLook {
				j++
			}
			if j < len(buf) && (buf[j] == '\'' || buf[j] == '"') {
				j++
			}
			if !r.bracket {
				// alone on its line, as a bare call must be
				k := j
				for k < len(buf) && (buf[k] == ' ' || buf[k] == '\t' || buf[k] == ';') && k-j < maxLook {
					k++
				}
				if k >= len(buf) && !m.eof && k-j < maxLook {
					return false
				}
				if k < len(buf) && buf[k] != '\n' && buf[k] != '\r' {
					return r.notACall(m)
				}
				if bytes.IndexByte(buf[j:k], ';') < 0 {
					k = j
				}
				return r.finish(m, k, false)
			}
			k, need, far := m.skipWS(j, maxLook)
			if need {
				return false
			}
			if far || k >= len(buf) {
				return r.notACall(m)
			}
			switch buf[k] {
			case ']':
				return r.finish(m, k+1, false)
			case ',':
				n, need, far := m.skipWS(k+1, maxLook)
				if need {
					return false
				}
				if far || n >= len(buf) {
					return r.notACall(m)
				}
				if buf[n] == ']' {
					return r.finish(m, n+1, false)
				}
				if buf[n] != '\'' && buf[n] != '"' {
					return r.notACall(m)
				}
				r.at, r.phase = n, 0
				continue
			}
			return r.notACall(m)
		}
	}
}

// notACall gives the text back: the opening byte is text, and what follows
// is read again.
func (r *quotedCalls) notACall(m *machine) bool {
	if m.regionText(r.start, r.start+1) {
		return true
	}
	m.pos = r.start + 1
	return true
}

// finish reads the calls found, each from its span; cut reports a call cut
// off at the end of the reply after them.
func (r *quotedCalls) finish(m *machine, end int, cut bool) bool {
	var raws []RawCall
	for _, sp := range r.spans {
		pp := &lenient.Python{Src: m.buf, Pos: sp[0], End: sp[1]}
		calls := pp.CallList(false)
		raws = append(raws, pyRaws(calls, m.buf, 0)...)
		if pp.Err != "" {
			raws = append(raws, RawCall{Offset: pp.ErrAt, Err: result.DiagMalformed, ErrMsg: "a call in the list cannot be read: " + pp.Err})
		}
	}
	if cut {
		raws = append(raws, RawCall{Offset: r.callAt, Err: result.DiagTruncated, ErrMsg: "the call is cut off before its arguments end"})
	}
	if m.fence != nil && r.bracket {
		m.fence.listCalls += len(raws)
	}
	m.addCalls(raws)
	m.listed = true
	m.pos = end
	return true
}

// namedCalls is a list that names a tool first and then gives its
// arguments, as some models write a call: ['f', {'a': 1}], [f, a=1], or a
// list of such pairs, [('f', {'a': 1}), ['g', {'b': 2}]]. The first name
// must be a declared tool; a list that turns out to be anything else is
// text.
type namedCalls struct {
	start int // the '['
	sc    *lenient.PyScan
}

func (r *namedCalls) advance(m *machine) bool {
	if r.sc == nil {
		r.sc = lenient.NewPyScan(r.start)
	}
	switch r.sc.Feed(m.buf, m.eof) {
	case lenient.Need:
		return false
	case lenient.Fail:
		return r.notACall(m)
	}
	pp := &lenient.Python{Src: m.buf, Pos: r.start, End: r.sc.End}
	calls := pp.NamedList()
	if len(calls) == 0 || pp.Err != "" || !m.cfg.known(calls[0].Name, false) {
		return r.notACall(m)
	}
	raws := pyRaws(calls, m.buf, 0)
	if m.fence != nil {
		m.fence.listCalls += len(raws)
	}
	m.addCalls(raws)
	m.listed = true
	m.pos = r.sc.End
	return true
}

func (r *namedCalls) notACall(m *machine) bool {
	if m.regionText(r.start, r.start+1) {
		return true
	}
	m.pos = r.start + 1
	return true
}
