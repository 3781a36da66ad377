package protocol

// Calls written in Python syntax outside any marker.

// pythonic is a call list in Python syntax: [f(a=1), g(b='x')], or one
// bare call on a line of its own (name(...)) where the name is declared.
type pythonic struct {
	start   int  // '[' or the first byte of the name
	paren   int  // for a bare call: its '('
	bracket bool // a [ ... ] list
	strong  bool // inside markers that say it is a call
	sc      *pyScan
}

func (r *pythonic) advance(m *machine) bool {
	buf := m.buf
	if r.sc == nil {
		open := r.start
		if !r.bracket {
			open = r.paren
		}
		r.sc = newPyScan(open)
		if r.strong {
			m.beginCall("")
		}
	}
	st := r.sc.feed(buf, m.eof)
	if st == jNeed {
		return false
	}
	end := r.sc.end
	if st == jFail {
		end = r.sc.failPos
		if m.eof && r.sc.failPos >= len(buf) {
			end = len(buf)
		}
	}
	pp := &pyParser{src: buf, i: r.start, end: end}
	calls := pp.callList(r.bracket)
	accept := len(calls) > 0
	if accept && !r.strong {
		if len(m.p.tools) > 0 {
			t, _ := m.p.resolve(calls[0].name)
			accept = t != nil
		} else {
			for _, c := range calls {
				if len(c.positional) > 0 {
					accept = false
				}
			}
			accept = accept && r.bracket
		}
	}
	if !accept {
		if r.strong {
			msg := "the call cannot be read"
			if pp.err != "" {
				msg += ": " + pp.err
			}
			m.addCalls([]rawCall{{offset: r.start, err: DiagMalformed, errMsg: msg}})
			m.pos = max(end, r.start+1)
			return true
		}
		// Not a call: the opening byte is text, and the rest is read again.
		if m.regionText(r.start, r.start+1) {
			return true
		}
		m.pos = r.start + 1
		if !r.bracket {
			// the name was stolen from the prose: give it back
			if m.regionText(r.start+1, r.paren) {
				return true
			}
			m.pos = r.paren + 1
			if m.regionText(r.paren, r.paren+1) {
				return true
			}
		}
		return true
	}
	raws := pyRaws(calls, buf, 0)
	if pp.err != "" {
		raws = append(raws, rawCall{offset: pp.errAt, err: DiagMalformed, errMsg: "a call in the list cannot be read: " + pp.err})
	}
	if st == jFail && pp.err == "" {
		end = pp.i
	}
	m.addCalls(raws)
	m.pos = end
	return true
}
