package dialect

import (
	"github.com/ptkit/ptk/dialect/internal/shape"
	"github.com/ptkit/ptk/dialect/result"
	"strconv"
	"strings"

	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
)

// rawCode is functionary's python recipient: >>>python and raw code up to
// the next recipient or the end of the reply, run as {"code": ...}.
type rawCode struct {
	start, body int
	name        string
	began       bool
	sent        int
	f           tag.Finder
}

func (r *rawCode) advance(m *machine) bool {
	buf := m.buf
	if !r.began {
		r.began = true
		m.beginCall(r.name)
		r.f = tag.Finder{Pats: []string{">>>"}, At: r.body}
		r.sent = r.body
	}
	idx, _ := r.f.Find(buf, m.eof)
	end := r.f.At
	if idx < 0 && m.eof {
		end = len(buf)
	}
	if end > r.sent {
		m.callDelta(buf[r.sent:end])
		r.sent = end
	}
	if idx < 0 && !m.eof {
		return false
	}
	code := strings.TrimRight(string(buf[r.body:end]), " \t\r\n")
	args := &lenient.Node{Kind: lenient.Object, Keys: []string{"code"}, Kids: []*lenient.Node{{Kind: lenient.String, Str: code}}}
	m.addCalls([]RawCall{{Name: r.name, Args: args, Offset: r.start, Repairs: []string{`raw code for the python recipient read as {"code": ...}`}}})
	m.pos = end
	return true
}

// Calls written as JSON after a header that names the tool, and JSON found
// in prose.

// headerCall is JSON arguments after a header that names the tool:
// functionary's >>>name, Mistral's name[ARGS], Harmony's to=functions.name,
// Llama's <|python_tag|>.
type headerCall struct {
	start, jsonAt int
	name          string
	ends          []string // tokens that may close the call, consumed
	multi         bool     // more values may follow after ';'
	began         bool
	jp            *lenient.Reader
	vals          []*lenient.Node
	rep           lenient.Repairs
	sent          int
	got           bool // the current value is read
	cut           bool // the reply ended before the value's last bracket
	// textBefore is text between the header and the JSON (Mistral's
	// "[TOOL_CALLS] junk [{...}]"), kept as text.
	textBefore [2]int
}

func newHeaderCall(m *machine, start, jsonAt int, name string) *headerCall {
	return regionOf(&m.regions.headerCall, headerCall{start: start, jsonAt: jsonAt, name: name})
}

func (r *headerCall) advance(m *machine) bool {
	buf := m.buf
	if !r.began {
		if t := r.textBefore; t[1] > t[0] {
			r.textBefore = [2]int{}
			if m.regionText(t[0], t[1]) {
				return true
			}
		}
		r.began = true
		m.beginCall(r.name)
		r.jp = m.newJParser(r.jsonAt, false)
		if r.name == "" {
			r.jp.KeepClosed() // to salvage the calls of a list that breaks
		}
		r.sent = r.jsonAt
	}
	for {
		if !r.got {
			st := r.jp.Feed(buf, m.eof)
			if r.jp.Pos > r.sent {
				m.callDelta(buf[r.sent:r.jp.Pos])
				r.sent = r.jp.Pos
			}
			switch st {
			case lenient.Need:
				return false
			case lenient.Fail:
				if r.name == "" && r.jp.CloseAtEnd(len(buf), completeEnvelope) {
					// [{"name": "f", "arguments": {...}} and the reply ends:
					// the calls are complete, only the bracket is missing.
					r.rep.Merge(&r.jp.Rep)
					r.vals = append(r.vals, r.jp.Root)
					r.got = true
					r.cut = true
					continue
				}
				k := result.DiagMalformed
				msg := "the call's JSON cannot be read: " + r.jp.FailMsg
				end := r.jp.FailPos
				if r.jp.Truncated {
					k, msg, end = result.DiagTruncated, "the call is cut off before its JSON ends", len(buf)
				}
				var raws []RawCall
				if r.name == "" {
					// [TOOL_CALLS] [{...}, {"name": "f", "argu: the calls
					// before the one that broke are whole
					for _, n := range r.jp.Closed {
						for _, rc := range m.bareCalls(n, buf, n.Start) {
							rc.raw = buf[n.Start:n.End]
							raws = append(raws, rc)
						}
					}
				}
				m.addCalls(append(raws, RawCall{Name: r.name, Offset: r.start, Err: k, ErrMsg: msg}))
				m.pos = end
				return true
			}
			r.rep.Merge(&r.jp.Rep)
			r.vals = append(r.vals, r.jp.Root)
			r.got = true
		}
		end := r.jp.End
		i := end
		for i < len(buf) && lenient.IsWS(buf[i]) && i-end <= maxRunGap {
			i++
		}
		if i >= len(buf) && i-end <= maxRunGap && !m.eof {
			return false
		}
		if r.multi && i < len(buf) && buf[i] == ';' {
			j := i + 1
			for j < len(buf) && lenient.IsWS(buf[j]) && j-i <= maxRunGap {
				j++
			}
			if j >= len(buf) && !m.eof {
				return false
			}
			if j < len(buf) && buf[j] == '{' {
				r.jp = m.newJParser(j, false)
				r.got = false
				continue
			}
		}
		for _, e := range r.ends {
			match, need := lenient.HasPrefixFold(buf, i, e, m.eof)
			if need {
				return false
			}
			if match {
				end = i + len(e)
				break
			}
		}
		raws := m.raws[:0]
		for k, v := range r.vals {
			if r.name != "" && k == 0 {
				rc := RawCall{Name: r.name, Args: v, Src: buf, Offset: r.start}
				if v.Kind != lenient.Object {
					rc.Err, rc.ErrMsg = result.DiagMalformed, "the arguments must be a JSON object"
				}
				raws = append(raws, rc)
				continue
			}
			raws = appendCallsFromJSON(raws, v, buf, r.start)
		}
		rep := r.rep.Strings()
		if r.cut {
			rep = append(rep, repairCutBrace)
		}
		for k := range raws {
			raws[k].Repairs = append(raws[k].Repairs, rep...)
		}
		m.addCalls(raws)
		m.raws = raws[:0]
		m.pos = end
		return true
	}
}

// bareJSON is JSON found in prose: a call only if it names a declared tool
// (or, with no tools declared, has exactly the shape of a call). Values
// written one after another (separated by white space, ';' or ',') are read
// as a run: calls while they are calls, text once one is not.
type bareJSON struct {
	start   int
	sepFrom int // where the separator before this value began, or -1
	jp      *lenient.Reader
	textRun bool // a value of this run was not a call: the rest is text
	after   int  // phase 1: the end of the last value
	phase   int
}

const maxRunGap = 64

func (r *bareJSON) from() int {
	if r.sepFrom >= 0 {
		return r.sepFrom
	}
	return r.start
}

func (r *bareJSON) advance(m *machine) bool {
	buf := m.buf
	for {
		if r.phase == 1 {
			end := r.after
			if m.inert != nil {
				// An inert pass reads each value alone: a run goes on only
				// after a call, whose trigger changes anyway.
				m.pos = end
				return true
			}
			i := end
			for i < len(buf) && i-end <= maxRunGap && (lenient.IsWS(buf[i]) || buf[i] == ';' || buf[i] == ',') {
				i++
			}
			if i >= len(buf) && i-end <= maxRunGap && !m.eof {
				return false
			}
			if i < len(buf) && i-end <= maxRunGap && (buf[i] == '{' || buf[i] == '[') {
				r.start, r.sepFrom, r.jp, r.phase = i, end, nil, 0
				continue
			}
			m.pos = end
			return true
		}
		if r.jp == nil {
			r.jp = m.newJParser(r.start, true)
		}
		switch r.jp.Feed(buf, m.eof) {
		case lenient.Need:
			return false
		case lenient.Fail:
			if !r.cutCall(m) {
				return r.salvage(m)
			}
		}
		end := r.jp.End
		var raws []RawCall
		if !r.textRun {
			raws = m.bareCalls(r.jp.Root, buf, r.start)
		}
		if raws == nil {
			r.textRun = true
			if m.regionText(r.from(), end) {
				return true
			}
		} else {
			if sep := buf[r.from():r.start]; isAllSpace(sep) {
				m.regionText(r.from(), r.start)
			} // a ';' or ',' between calls is not text: {...}; {...}
			rep := r.jp.Rep.Strings()
			for i := range raws {
				raws[i].Repairs = append(raws[i].Repairs, rep...)
				raws[i].raw = buf[r.start:end]
			}
			m.addCalls(raws)
		}
		r.after, r.phase = end, 1
	}
}

// cutCall reads JSON in prose that the reply cut off just before its last
// brace as a call, when it is one: {"name": "f", "arguments": {...}
func (r *bareJSON) cutCall(m *machine) bool {
	jp := r.jp
	if !jp.Truncated || r.textRun || !m.cfg.Declared {
		return false
	}
	if jp.CloseAtEnd(len(m.buf), func(v *lenient.Node) bool { return completeCall(v) && m.bareCalls(v, m.buf, r.start) != nil }) {
		jp.Rep.Add(lenient.RepairCutBrace)
		return true
	}
	return false
}

// salvage handles JSON that failed: it is text, except the outermost
// complete objects inside it that are calls, as when a model starts a call,
// breaks it, and writes it again whole.
func (r *bareJSON) salvage(m *machine) bool {
	failAt := r.jp.FailPos
	if r.jp.Truncated {
		failAt = len(m.buf)
	} else {
		// A call may start again where this one broke:
		// {"name": "x", "parameters": {{"name": "x", "parameters": {}}
		m.bareRetry = failAt
	}
	pos := r.from()
	if !r.textRun {
		for _, n := range r.jp.Closed {
			raws := m.bareCalls(n, m.buf, n.Start)
			if raws == nil {
				continue
			}
			if !listPunct(m.buf[pos:n.Start]) && m.regionText(pos, n.Start) {
				return true
			}
			for i := range raws {
				raws[i].raw = m.buf[n.Start:n.End]
			}
			m.addCalls(raws)
			pos = n.End
		}
	}
	if m.regionText(pos, failAt) {
		return true
	}
	m.pos = failAt
	return true
}

// listPunct reports whether b holds only what stands between the calls of
// a broken list, "[", "," and white space: not text for the user.
func listPunct(b []byte) bool {
	for _, c := range b {
		if c != '[' && c != ',' && !lenient.IsWS(c) {
			return false
		}
	}
	return true
}

// bareCalls returns the calls in a JSON value found outside call markers, or
// nil when the value is not one.
func (m *machine) bareCalls(v *lenient.Node, src []byte, off int) []RawCall {
	switch v.Kind {
	case lenient.Object:
		// {"tool_calls": [...]}, as an API response writes them
		for _, k := range []string{"tool_calls", "function_calls"} {
			if inner := v.Get(k); inner != nil && inner.Kind == lenient.Array && shape.OnlyKeys(v, k, "content", "role") {
				return m.bareCalls(inner, src, off)
			}
		}
		rc, ok := m.bareCall(v, src)
		if !ok {
			return nil
		}
		rc.Offset = off
		return []RawCall{rc}
	case lenient.Array:
		if len(v.Kids) == 0 {
			return nil
		}
		out := make([]RawCall, 0, len(v.Kids))
		for _, k := range v.Kids {
			rc, ok := m.bareCall(k, src)
			if !ok {
				return nil
			}
			rc.Offset = off
			out = append(out, rc)
		}
		return out
	}
	return nil
}

func (m *machine) bareCall(v *lenient.Node, src []byte) (RawCall, bool) {
	rc, kind, exact := callOf(v, src)
	if kind == shape.NotCall {
		return rc, false
	}
	if shape.LooksLikeSchema(rc.Args) {
		// {"name": "get_weather", "parameters": {"type": "object", ...}}
		// is a tool's definition quoted in prose, not a call.
		return rc, false
	}
	if !m.cfg.Declared {
		return rc, kind == shape.NameArgs && exact
	}
	if (kind == shape.NameArgs || kind == shape.NameOnly) && !rc.plain {
		// {"ts": ..., "name": "read_file", "arguments": {...}, "latency_ms": 12}
		// is a record of a call, not a call.
		return rc, false
	}
	found, requiresArgs := m.cfg.Lookup(rc.Name, kind == shape.NameAsKey)
	if !found {
		if kind == shape.NameArgs {
			m.diag(result.Diagnostic{Kind: result.DiagNotACall, Offset: v.Start, Tool: rc.Name,
				Message: "JSON naming " + strconv.Quote(rc.Name) + " read as text: no such tool is declared"})
		}
		return rc, false
	}
	if kind == shape.NameOnly && requiresArgs {
		return rc, false
	}
	return rc, true
}
