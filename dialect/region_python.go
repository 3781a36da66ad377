package dialect

import (
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
}

// notACall gives the text back: the opening byte (and a name taken from the
// prose) is text, and what follows is read again.
func (r *pythonic) notACall(m *machine) bool {
	if !r.bracket {
		if m.regionText(r.start, r.paren+1) {
			return true
		}
		m.pos = r.paren + 1
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
	st := r.st
	if st == lenient.Need {
		if st = r.sc.Feed(buf, m.eof); st == lenient.Need {
			return false
		}
		r.st = st // the brackets are settled; only what follows may be awaited
	}
	end := r.sc.End
	if st == lenient.Fail {
		end = r.sc.FailPos
		if m.eof && r.sc.FailPos >= len(buf) {
			end = len(buf)
		}
	}
	pp := &lenient.Python{Src: buf, Pos: r.start, End: end}
	calls := pp.CallList(r.bracket)
	accept := len(calls) > 0
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
	if !r.bracket && !r.strong {
		// name(...) counts only on a line of its own: what follows on its
		// line ("is what you would write in Python") makes it prose.
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
	}
	raws := pyRaws(calls, buf, 0)
	if pp.Err != "" {
		raws = append(raws, RawCall{Offset: pp.ErrAt, Err: result.DiagMalformed, ErrMsg: "a call in the list cannot be read: " + pp.Err})
	}
	if st == lenient.Fail && pp.Err == "" {
		end = pp.Pos
	}
	m.addCalls(raws)
	m.listed = m.listed || r.bracket && len(calls) > 0
	m.pos = end
	return true
}
