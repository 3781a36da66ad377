package protocol

import (
	"bytes"
	"strings"
)

// Regions that hold calls.

const (
	repairMissingCloser = "missing closing tag: the call ends where its JSON ends"
	repairExtraClosers  = "extra closing brackets after the call ignored"
)

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
	sc        *pyScan

	began   bool
	sent    int
	jp      *jparser
	vals    []*jnode
	repairs repairSet
	extra   []string
	phase   int
	after   int
	xs      xmlScan
	cf      finder
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
		} else {
			r.xs = xmlScan{at: r.body, closers: r.closers, gemma: r.gemma}
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
				r.sc = newPyScan(r.pyOpen)
			}
			st := r.sc.feed(buf, m.eof)
			r.delta(m, r.sc.pos)
			switch st {
			case jNeed:
				return false
			case jFail:
				// Unbalanced: fall back to finding the closer.
				r.py = false
				r.xs = xmlScan{at: r.sc.failPos, closers: r.closers}
				return r.advanceText(m)
			}
			r.after, r.phase = r.sc.end, 1
		}
		i, need, _ := m.skipWS(r.after, maxLook)
		if need {
			return false
		}
		if i < len(buf) && buf[i] == '<' {
			for k, cl := range r.closers {
				match, need := hasPrefixFold(buf, i, cl, m.eof)
				if need {
					return false
				}
				if match {
					return r.finishPython(m, i+len(r.closers[k]), "")
				}
			}
		}
		if !r.pyBracket && i < len(buf) && isIdentStart(buf[i]) {
			// another call: name(...)
			k := i
			for k < len(buf) && k-i < 2*maxStealWord && (isPyIdentByte(buf[k]) || buf[k] == '.') {
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
	pp := &pyParser{src: m.buf, i: start, end: r.after}
	calls := pp.callList(r.pyBracket)
	raws := pyRaws(calls, m.buf, 0)
	for i := range raws {
		raws[i].offset = r.start
		if repair != "" {
			raws[i].repairs = append(raws[i].repairs, repair)
		}
	}
	if pp.err != "" {
		raws = append(raws, rawCall{offset: r.start, err: DiagMalformed, errMsg: "the call cannot be read: " + pp.err})
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
			st := r.jp.feed(buf, m.eof)
			r.delta(m, r.jp.pos)
			switch st {
			case jNeed:
				return false
			case jFail:
				r.mergeRepairs()
				if r.jp.truncated {
					return r.finishBad(m, len(buf), DiagTruncated, "the call is cut off before its JSON ends: "+r.jp.failMsg)
				}
				r.cf = finder{pats: r.closers, at: r.jp.failPos}
				r.phase = 2
				continue
			}
			r.vals = append(r.vals, r.jp.root)
			r.mergeRepairs()
			r.after = r.jp.end
			r.phase = 1
		case 1: // after a value: more values, a closing fence, the closer
			i := r.after
			for i < len(buf) && isWS(buf[i]) {
				i++
			}
			if i >= len(buf) {
				if !m.eof {
					return false
				}
				r.extra = append(r.extra, repairMissingCloser)
				return r.finish(m, r.jp.end, r.jp.end)
			}
			c := buf[i]
			if c == '<' {
				for _, cl := range r.closers {
					match, need := hasPrefixFold(buf, i, cl, m.eof)
					if need {
						return false
					}
					if match {
						return r.finish(m, r.jp.end, i+len(cl))
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
				for j < len(buf) && isWS(buf[j]) {
					j++
				}
				if j >= len(buf) && !m.eof {
					return false
				}
				if j < len(buf) && (buf[j] == '{' || buf[j] == '[') {
					r.jp = m.newJParser(j, false)
					r.phase = 0
					continue
				}
			case '{', '[':
				r.jp = m.newJParser(i, false)
				r.phase = 0
				continue
			case '}', ']':
				r.extra = appendOnce(r.extra, repairExtraClosers)
				r.after = i + 1
				continue
			}
			r.extra = append(r.extra, repairMissingCloser)
			return r.finish(m, r.jp.end, r.jp.end)
		case 2: // malformed JSON: find the closer
			idx, k := r.cf.find(buf, m.eof)
			if idx < 0 {
				r.delta(m, r.cf.at)
				if !m.eof {
					return false
				}
				return r.finishBad(m, len(buf), DiagMalformed, "the call's JSON cannot be read: "+r.jp.failMsg)
			}
			r.delta(m, idx)
			return r.finishBad(m, idx+len(r.closers[k]), DiagMalformed, "the call's JSON cannot be read: "+r.jp.failMsg)
		}
	}
}

func appendOnce(s []string, x string) []string {
	for _, y := range s {
		if y == x {
			return s
		}
	}
	return append(s, x)
}

func (r *tagCall) mergeRepairs() {
	for _, k := range r.jp.rep.order {
		if r.repairs.seen&(1<<k) == 0 {
			r.repairs.add(k)
		}
	}
}

func (r *tagCall) allRepairs() []string {
	return append(r.repairs.strings(), r.extra...)
}

// finish ends the region at end, the calls read from the values.
func (r *tagCall) finish(m *machine, bodyEnd, end int) bool {
	r.delta(m, bodyEnd)
	var raws []rawCall
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
			raws = append(raws, rawCall{name: r.name, args: v, src: m.buf, offset: r.start})
		default:
			raws = append(raws, callsFromJSON(v, m.buf, r.start)...)
		}
	}
	rep := r.allRepairs()
	for i := range raws {
		raws[i].repairs = append(raws[i].repairs, rep...)
		if r.weak {
			raws[i].raw = m.buf[r.start:end]
		}
	}
	m.addCalls(raws)
	m.pos = end
	return true
}

func (r *tagCall) finishBad(m *machine, end int, k DiagKind, msg string) bool {
	if r.weak {
		m.pos = end
		m.regionText(r.start, end)
		return true
	}
	m.addCalls([]rawCall{{name: r.name, offset: r.start, err: k, errMsg: msg, repairs: r.allRepairs()}})
	m.pos = end
	return true
}

func (r *tagCall) advanceText(m *machine) bool {
	buf := m.buf
	idx, k := r.xs.find(buf, m.eof)
	if idx < 0 {
		r.delta(m, r.xs.at)
		if !m.eof {
			return false
		}
		// No closer: the call ends with its last complete element, or is cut off.
		if isAllSpace(buf[r.body:]) {
			return r.finishBad(m, len(buf), DiagTruncated, "the call is cut off right after its opening tag")
		}
		end := len(buf)
		if r.xs.lastEnd > r.body {
			end = r.xs.lastEnd
		}
		raws, complete := parseTextBody(buf[r.body:end], r.start, r.gemma)
		if !complete {
			return r.finishBad(m, len(buf), DiagTruncated, "the call is cut off before it ends")
		}
		for i := range raws {
			raws[i].repairs = append(raws[i].repairs, "missing closing tag: the call ends where its last element ends")
		}
		m.addCalls(raws)
		m.pos = end
		return true
	}
	r.delta(m, idx)
	raws, _ := parseTextBody(buf[r.body:idx], r.start, r.gemma)
	m.addCalls(raws)
	m.pos = idx + len(r.closers[k])
	return true
}

// xmlScan finds a closer outside parameter values, resumably.
type xmlScan struct {
	at      int
	closers []string
	gemma   bool
	inParam string // the closer of the parameter value we are in
	inStr   bool   // inside a Gemma <|"|> string
	lastEnd int    // after the last </function> or </invoke> seen
}

var paramOpen = []struct{ open, close string }{
	{"<parameter", "</parameter>"},
	{"<arg_value>", "</arg_value>"},
}

func (x *xmlScan) find(buf []byte, eof bool) (int, int) {
	for i := x.at; i < len(buf); i++ {
		if buf[i] != '<' {
			continue
		}
		x.at = i
		if x.gemma {
			match, need := hasPrefixFold(buf, i, `<|"|>`, eof)
			if need {
				return -1, -1
			}
			if match {
				x.inStr = !x.inStr
				i += 4
				continue
			}
			if x.inStr {
				continue
			}
		}
		if x.inParam != "" {
			match, need := hasPrefixFold(buf, i, x.inParam, eof)
			if need {
				return -1, -1
			}
			if match {
				i += len(x.inParam) - 1
				x.inParam = ""
			}
			continue
		}
		for _, p := range paramOpen {
			match, need := hasPrefixFold(buf, i, p.open, eof)
			if need {
				return -1, -1
			}
			if match {
				if p.open == "<parameter" {
					// <parameter>key</parameter> holds a key, not a value
					if i+len(p.open) >= len(buf) && !eof {
						return -1, -1
					}
					if i+len(p.open) < len(buf) && buf[i+len(p.open)] == '>' {
						break
					}
				}
				x.inParam = p.close
				break
			}
		}
		if x.inParam != "" {
			continue
		}
		for k, c := range x.closers {
			match, need := hasPrefixFold(buf, i, c, eof)
			if need {
				return -1, -1
			}
			if match {
				return i, k
			}
		}
		for _, c := range []string{"</function>", "</invoke>"} {
			match, need := hasPrefixFold(buf, i, c, eof)
			if need {
				return -1, -1
			}
			if match {
				x.lastEnd = i + len(c)
			}
		}
	}
	x.at = len(buf)
	return -1, -1
}

// parseTextBody reads the calls in a non-JSON call body. complete reports
// that the body reads as whole calls.
func parseTextBody(b []byte, off int, gemma bool) ([]rawCall, bool) {
	t := bytes.TrimSpace(b)
	switch {
	case len(t) == 0:
		return []rawCall{{offset: off, err: DiagMalformed, errMsg: "the call is empty"}}, true
	case gemma || bytes.HasPrefix(t, []byte("call:")):
		return parseGemma(t, off)
	case t[0] == '<':
		return parseXMLCalls(t, off)
	case t[0] == '[':
		pp := &pyParser{src: t, end: len(t)}
		calls := pp.callList(true)
		out := pyRaws(calls, t, off)
		if pp.err != "" {
			out = append(out, rawCall{offset: off, err: DiagMalformed, errMsg: "the call cannot be read: " + pp.err})
			return out, len(calls) > 0
		}
		return out, true
	}
	// name<arg_key>..., name(...), or a bare name
	k := 0
	for k < len(t) && (isPyIdentByte(t[k]) || t[k] == '.' || t[k] == '-') {
		k++
	}
	rest := bytes.TrimSpace(t[k:])
	switch {
	case len(rest) > 0 && rest[0] == '(':
		pp := &pyParser{src: t, end: len(t)}
		calls := pp.callList(false)
		out := pyRaws(calls, t, off)
		if pp.err != "" {
			out = append(out, rawCall{offset: off, err: DiagMalformed, errMsg: "the call cannot be read: " + pp.err})
			return out, len(calls) > 0
		}
		return out, true
	default:
		return parseGLM(t, off)
	}
}

func pyRaws(calls []pyCall, src []byte, off int) []rawCall {
	out := make([]rawCall, 0, len(calls))
	for _, c := range calls {
		out = append(out, rawCall{name: c.name, args: c.args, positional: c.positional, offset: off + c.start, raw: src[c.start:c.end]})
	}
	return out
}

// textUntil returns b[i:] up to the first of pats (lower case): the text,
// where the pattern starts and ends, and which pattern it was (-1 and
// len(b) when none is found).
func textUntil(b []byte, i int, pats ...string) (text []byte, at, after, which int) {
	f := finder{pats: pats, at: i}
	j, k := f.find(b, true)
	if j < 0 {
		return b[i:], len(b), len(b), -1
	}
	return b[i:j], j, j + len(pats[k]), k
}

// trimNewline removes one line break at each end, as Qwen writes values.
func trimNewline(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\r"))
	if len(b) > 0 && b[0] == '\n' {
		b = b[1:]
	}
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
		b = bytes.TrimSuffix(b, []byte("\r"))
	}
	return b
}

// parseXMLCalls reads XML-style calls: Qwen's <function=name><parameter=k>v
// </parameter></function>, <function name="x">{json}</function>, Claude's
// <invoke name="x"><parameter name="k">v</parameter></invoke>,
// <function>name</function><parameter>k</parameter>v, GLM's
// <arg_key>k</arg_key><arg_value>v</arg_value>, and the same with a
// namespace (<steptml:parameter>, <｜DSML｜invoke>, <longcat_arg_key>).
func parseXMLCalls(b []byte, off int) ([]rawCall, bool) {
	var calls []rawCall
	var cur *rawCall
	complete := true
	flush := func() {
		if cur != nil {
			calls = append(calls, *cur)
			cur = nil
		}
	}
	start := func(name string) {
		flush()
		cur = &rawCall{name: name, offset: off, textArgs: true, args: &jnode{kind: jObject}}
	}
	set := func(key string, val []byte, json bool) {
		if cur == nil {
			start("")
		}
		v := &jnode{kind: jString, s: string(val)}
		if json { // DSML's string="false": the value is JSON
			if n := parseLiteral(strings.TrimSpace(v.s)); n != nil {
				v = n
			}
		}
		cur.args.keys = append(cur.args.keys, key)
		cur.args.kids = append(cur.args.kids, v)
	}
	isEnd := func(t tagInfo) bool {
		return t.closing && (t.name == "function" || t.name == "invoke" || t.name == "tool_call" || t.name == "function_calls")
	}
	i := 0
	for {
		t, at, after, ok := nextTag(b, i, func(tagInfo) bool { return true })
		if !ok {
			break
		}
		_ = at
		i = after
		switch {
		case (t.name == "function" || t.name == "invoke" || t.name == "tool") && !t.closing:
			name := t.eq
			if name == "" {
				name, _ = attr(t.attrs, "name")
			}
			if name == "" && t.name == "function" {
				// <function>name</function>, parameters follow
				u, end, after, _ := nextTag(b, i, func(u tagInfo) bool { return u.name == "function" })
				start(string(bytes.TrimSpace(b[i:end])))
				if u.closing {
					i = after
				} else {
					i = end
				}
				continue
			}
			start(name)
			// a JSON body: <function=name>{"a": 1}</function>
			k := i
			for k < len(b) && isWS(b[k]) {
				k++
			}
			if k < len(b) && (b[k] == '{' || b[k] == '[') {
				_, end, after, found := nextTag(b, k, isEnd)
				if n, _, err := parseLenient(b[k:end]); err == nil {
					cur.args, cur.textArgs = detach(n), false
				} else {
					cur.err, cur.errMsg = DiagMalformed, "the call's JSON cannot be read: "+err.Error()
				}
				i = after
				if found {
					flush()
				} else {
					complete = false
				}
			}
		case isEnd(t):
			flush()
		case t.name == "parameter" && !t.closing:
			key := t.eq
			if key == "" {
				key, _ = attr(t.attrs, "name")
			}
			if key == "" {
				// <parameter>key</parameter>value
				u, kEnd, kAfter, _ := nextTag(b, i, func(u tagInfo) bool { return u.name == "parameter" || isEnd(u) })
				if !u.closing || u.name != "parameter" {
					i = kEnd // not a key: <parameter> without </parameter>
					continue
				}
				_, vEnd, _, _ := nextTag(b, kAfter, func(u tagInfo) bool { return u.name == "parameter" && !u.closing || isEnd(u) })
				set(string(bytes.TrimSpace(b[i:kEnd])), bytes.TrimSpace(b[kAfter:vEnd]), false)
				i = vEnd
				continue
			}
			isJSON := false
			if s, ok := attr(t.attrs, "string"); ok && s == "false" {
				isJSON = true
			}
			// The value runs to </parameter>; a missing one ends it at the
			// next parameter or the end of the call.
			pt, pAt, pAfter, found := nextTag(b, i, func(u tagInfo) bool { return u.name == "parameter" })
			switch {
			case found && pt.closing:
				set(key, trimNewline(b[i:pAt]), isJSON)
				i = pAfter
			default:
				_, end, _, eFound := nextTag(b[:pAt], i, isEnd)
				if !found && !eFound {
					complete = false
				}
				set(key, trimNewline(b[i:end]), isJSON)
				i = end
			}
		case t.name == "arg_key" && !t.closing:
			u, kEnd, kAfter, _ := nextTag(b, i, func(u tagInfo) bool { return u.name == "arg_key" || u.name == "arg_value" })
			if !u.closing || u.name != "arg_key" {
				i = kEnd
				continue
			}
			key := string(bytes.TrimSpace(b[i:kEnd]))
			vk := kAfter
			for vk < len(b) && isWS(b[vk]) {
				vk++
			}
			i = kAfter
			var val []byte
			if vt, vOK, _ := readTag(b, vk, true); vOK && vt.name == "arg_value" && !vt.closing {
				u, vEnd, vAfter, found := nextTag(b, vt.end, func(u tagInfo) bool { return u.name == "arg_value" || u.name == "arg_key" })
				if !found {
					complete = false
				}
				val = b[vt.end:vEnd]
				i = vAfter
				if !u.closing || u.name != "arg_value" {
					i = vEnd
				}
			}
			set(key, val, false)
		case (t.name == "name" || t.name == "tool_name") && !t.closing:
			u, end, after, _ := nextTag(b, i, func(u tagInfo) bool { return u.name == t.name })
			if !u.closing {
				after = end
			}
			if cur == nil || cur.name != "" {
				start(string(bytes.TrimSpace(b[i:end])))
			} else {
				cur.name = string(bytes.TrimSpace(b[i:end]))
			}
			i = after
		case (t.name == "arguments" || t.name == "args" || t.name == "parameters" || t.name == "input") && !t.closing:
			u, end, after, _ := nextTag(b, i, func(u tagInfo) bool { return u.name == t.name })
			if !u.closing {
				after = end
			}
			if cur == nil {
				start("")
			}
			if n := parseLiteral(string(bytes.TrimSpace(b[i:end]))); n != nil && n.kind == jObject {
				cur.args, cur.textArgs = detach(n), false
			}
			i = after
		}
	}
	flush()
	for k := range calls {
		if calls[k].name == "" && calls[k].err == "" {
			calls[k].err, calls[k].errMsg = DiagMalformed, "the call has no tool name"
		}
	}
	if len(calls) == 0 {
		return []rawCall{{offset: off, err: DiagMalformed, errMsg: "no call found in the XML"}}, false
	}
	return calls, complete
}

// nextTag finds the first tag at or after i that match accepts. at and
// after are where it starts and ends (len(b) when there is none).
func nextTag(b []byte, i int, match func(tagInfo) bool) (t tagInfo, at, after int, found bool) {
	for i < len(b) {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			break
		}
		j += i
		if t, ok, _ := readTag(b, j, true); ok && match(t) {
			return t, j, t.end, true
		}
		i = j + 1
	}
	return tagInfo{}, len(b), len(b), false
}

// detach marks a value read from another text, so it is written out anew.
func detach(n *jnode) *jnode {
	n.clean = false
	for _, k := range n.kids {
		detach(k)
	}
	return n
}

// parseGLM reads GLM's name<arg_key>k</arg_key><arg_value>v</arg_value>...
func parseGLM(b []byte, off int) ([]rawCall, bool) {
	_, k, _, found := nextTag(b, 0, func(t tagInfo) bool { return t.name == "arg_key" && !t.closing })
	name := bytes.TrimSpace(b[:k])
	if len(name) == 0 || bytes.ContainsAny(name, " \t\n<>{}") {
		return []rawCall{{offset: off, err: DiagMalformed, errMsg: "the call cannot be read: " + clip(string(b), 40)}}, false
	}
	rc := rawCall{name: string(name), offset: off, textArgs: true, args: &jnode{kind: jObject}}
	complete := true
	if found {
		calls, c := parseXMLCalls(b[k:], off)
		complete = c
		if len(calls) > 0 && calls[0].err == DiagMalformed && calls[0].args != nil {
			rc.args = calls[0].args
		}
	}
	return []rawCall{rc}, complete
}

// parseGemma reads Gemma 4's call:name{key:<|"|>text<|"|>,n:1}.
func parseGemma(b []byte, off int) ([]rawCall, bool) {
	g := gemmaParser{b: b}
	var out []rawCall
	for {
		g.ws()
		if g.i >= len(b) {
			break
		}
		if !bytes.HasPrefix(b[g.i:], []byte("call:")) {
			break
		}
		g.i += len("call:")
		s := g.i
		for g.i < len(b) && b[g.i] != '{' && b[g.i] != '<' && !isWS(b[g.i]) {
			g.i++
		}
		name := string(b[s:g.i])
		g.ws()
		if g.i >= len(b) || b[g.i] != '{' {
			out = append(out, rawCall{name: name, offset: off, err: DiagMalformed, errMsg: "expected '{' after call:" + name})
			return out, false
		}
		v := g.value(0)
		if v == nil {
			out = append(out, rawCall{name: name, offset: off, err: DiagMalformed, errMsg: "the call's arguments cannot be read"})
			return out, false
		}
		out = append(out, rawCall{name: name, args: v, offset: off})
	}
	if len(out) == 0 {
		return []rawCall{{offset: off, err: DiagMalformed, errMsg: "expected call:name{...}"}}, false
	}
	return out, true
}

type gemmaParser struct {
	b []byte
	i int
}

const gemmaQuote = `<|"|>`

func (g *gemmaParser) ws() {
	for g.i < len(g.b) && isWS(g.b[g.i]) {
		g.i++
	}
}

func (g *gemmaParser) value(depth int) *jnode {
	g.ws()
	if g.i >= len(g.b) || depth > maxDepth {
		return nil
	}
	b := g.b
	switch {
	case bytes.HasPrefix(b[g.i:], []byte(gemmaQuote)):
		g.i += len(gemmaQuote)
		end := bytes.Index(b[g.i:], []byte(gemmaQuote))
		if end < 0 {
			return nil
		}
		s := string(b[g.i : g.i+end])
		g.i += end + len(gemmaQuote)
		return &jnode{kind: jString, s: s}
	case b[g.i] == '{':
		g.i++
		n := &jnode{kind: jObject}
		for {
			g.ws()
			if g.i < len(b) && b[g.i] == '}' {
				g.i++
				return n
			}
			s := g.i
			for g.i < len(b) && b[g.i] != ':' && b[g.i] != '}' {
				g.i++
			}
			if g.i >= len(b) || b[g.i] != ':' {
				return nil
			}
			key := strings.TrimSpace(string(b[s:g.i]))
			key = strings.Trim(key, `"'`)
			g.i++
			v := g.value(depth + 1)
			if v == nil {
				return nil
			}
			n.keys = append(n.keys, key)
			n.kids = append(n.kids, v)
			g.ws()
			if g.i < len(b) && b[g.i] == ',' {
				g.i++
			}
		}
	case b[g.i] == '[':
		g.i++
		n := &jnode{kind: jArray}
		for {
			g.ws()
			if g.i < len(b) && b[g.i] == ']' {
				g.i++
				return n
			}
			v := g.value(depth + 1)
			if v == nil {
				return nil
			}
			n.kids = append(n.kids, v)
			g.ws()
			if g.i < len(b) && b[g.i] == ',' {
				g.i++
			}
		}
	}
	// a bare scalar up to ',', '}' or ']'
	s := g.i
	for g.i < len(b) && b[g.i] != ',' && b[g.i] != '}' && b[g.i] != ']' {
		g.i++
	}
	w := strings.TrimSpace(string(b[s:g.i]))
	switch w {
	case "true", "True":
		return &jnode{kind: jBool, b: true}
	case "false", "False":
		return &jnode{kind: jBool}
	case "null", "None":
		return &jnode{kind: jNull}
	}
	if num, ok, _ := parseNumberWord(w); ok {
		return &jnode{kind: jNumber, s: num}
	}
	return &jnode{kind: jString, s: w}
}

// headerCall is JSON arguments after a header that names the tool:
// functionary's >>>name, Mistral's name[ARGS], Harmony's to=functions.name,
// Llama's <|python_tag|>.
type headerCall struct {
	start, jsonAt int
	name          string
	ends          []string // tokens that may close the call, consumed
	multi         bool     // more values may follow after ';'
	began         bool
	jp            *jparser
	vals          []*jnode
	rep           repairSet
	sent          int
	got           bool // the current value is read
}

func newHeaderCall(m *machine, start, jsonAt int, name string) *headerCall {
	return regionOf(&m.regions.headerCall, headerCall{start: start, jsonAt: jsonAt, name: name})
}

func (r *headerCall) advance(m *machine) bool {
	buf := m.buf
	if !r.began {
		r.began = true
		m.beginCall(r.name)
		r.jp = m.newJParser(r.jsonAt, false)
		r.sent = r.jsonAt
	}
	for {
		if !r.got {
			st := r.jp.feed(buf, m.eof)
			if r.jp.pos > r.sent {
				m.callDelta(buf[r.sent:r.jp.pos])
				r.sent = r.jp.pos
			}
			switch st {
			case jNeed:
				return false
			case jFail:
				k := DiagMalformed
				msg := "the call's JSON cannot be read: " + r.jp.failMsg
				end := r.jp.failPos
				if r.jp.truncated {
					k, msg, end = DiagTruncated, "the call is cut off before its JSON ends", len(buf)
				}
				m.addCalls([]rawCall{{name: r.name, offset: r.start, err: k, errMsg: msg}})
				m.pos = end
				return true
			}
			for _, k := range r.jp.rep.order {
				if r.rep.seen&(1<<k) == 0 {
					r.rep.add(k)
				}
			}
			r.vals = append(r.vals, r.jp.root)
			r.got = true
		}
		end := r.jp.end
		i := end
		for i < len(buf) && isWS(buf[i]) && i-end <= maxRunGap {
			i++
		}
		if i >= len(buf) && i-end <= maxRunGap && !m.eof {
			return false
		}
		if r.multi && i < len(buf) && buf[i] == ';' {
			j := i + 1
			for j < len(buf) && isWS(buf[j]) && j-i <= maxRunGap {
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
			match, need := hasPrefixFold(buf, i, e, m.eof)
			if need {
				return false
			}
			if match {
				end = i + len(e)
				break
			}
		}
		var raws []rawCall
		for k, v := range r.vals {
			if r.name != "" && k == 0 {
				rc := rawCall{name: r.name, args: v, src: buf, offset: r.start}
				if v.kind != jObject {
					rc.err, rc.errMsg = DiagMalformed, "the arguments must be a JSON object"
				}
				raws = append(raws, rc)
				continue
			}
			raws = append(raws, callsFromJSON(v, buf, r.start)...)
		}
		rep := r.rep.strings()
		for k := range raws {
			raws[k].repairs = append(raws[k].repairs, rep...)
		}
		m.addCalls(raws)
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
	jp      *jparser
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
			i := end
			for i < len(buf) && i-end <= maxRunGap && (isWS(buf[i]) || buf[i] == ';' || buf[i] == ',') {
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
		switch r.jp.feed(buf, m.eof) {
		case jNeed:
			return false
		case jFail:
			return r.salvage(m)
		}
		end := r.jp.end
		var raws []rawCall
		if !r.textRun {
			raws = m.bareCalls(r.jp.root, buf, r.start)
		}
		if raws == nil {
			r.textRun = true
			if m.regionText(r.from(), end) {
				return true
			}
		} else {
			m.regionText(r.from(), r.start) // the separator, white space or not
			rep := r.jp.rep.strings()
			for i := range raws {
				raws[i].repairs = append(raws[i].repairs, rep...)
				raws[i].raw = buf[r.start:end]
			}
			m.addCalls(raws)
		}
		r.after, r.phase = end, 1
	}
}

// salvage handles JSON that failed: it is text, except the outermost
// complete objects inside it that are calls, as when a model starts a call,
// breaks it, and writes it again whole.
func (r *bareJSON) salvage(m *machine) bool {
	failAt := r.jp.failPos
	if r.jp.truncated {
		failAt = len(m.buf)
	}
	pos := r.from()
	if !r.textRun {
		for _, n := range r.jp.closed {
			raws := m.bareCalls(n, m.buf, n.start)
			if raws == nil {
				continue
			}
			if m.regionText(pos, n.start) {
				return true
			}
			for i := range raws {
				raws[i].raw = m.buf[n.start:n.end]
			}
			m.addCalls(raws)
			pos = n.end
		}
	}
	if m.regionText(pos, failAt) {
		return true
	}
	m.pos = failAt
	return true
}

// bareCalls returns the calls in a JSON value found outside call markers, or
// nil when the value is not one.
func (m *machine) bareCalls(v *jnode, src []byte, off int) []rawCall {
	switch v.kind {
	case jObject:
		// {"tool_calls": [...]}, as an API response writes them
		for _, k := range []string{"tool_calls", "function_calls"} {
			if inner := v.get(k); inner != nil && inner.kind == jArray && onlyKeys(v, k, "content", "role") {
				return m.bareCalls(inner, src, off)
			}
		}
		rc, ok := m.bareCall(v, src)
		if !ok {
			return nil
		}
		rc.offset = off
		return []rawCall{rc}
	case jArray:
		if len(v.kids) == 0 {
			return nil
		}
		out := make([]rawCall, 0, len(v.kids))
		for _, k := range v.kids {
			rc, ok := m.bareCall(k, src)
			if !ok {
				return nil
			}
			rc.offset = off
			out = append(out, rc)
		}
		return out
	}
	return nil
}

func (m *machine) bareCall(v *jnode, src []byte) (rawCall, bool) {
	rc, shape, exact := callOf(v, src)
	if shape == notCall {
		return rc, false
	}
	if looksLikeSchema(rc.args) {
		// {"name": "get_weather", "parameters": {"type": "object", ...}}
		// is a tool's definition quoted in prose, not a call.
		return rc, false
	}
	if len(m.p.tools) == 0 {
		return rc, shape == nameArgs && exact
	}
	var t *toolSpec
	if shape == nameAsKey {
		t = m.p.resolveExact(rc.name)
	} else {
		t, _ = m.p.resolve(rc.name)
	}
	if t == nil {
		if shape == nameArgs {
			m.diag(Diagnostic{Kind: DiagNotACall, Offset: v.start, Tool: rc.name,
				Message: "JSON naming " + quoteList([]string{rc.name}) + " read as text: no such tool is declared"})
		}
		return rc, false
	}
	if shape == nameOnly && t.schema != nil && t.schema.get("required") != nil && len(t.schema.get("required").kids) > 0 {
		return rc, false
	}
	return rc, true
}

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

// xmlCall is a call in XML written without a wrapper:
// <function=name>...</function>, <invoke name="x">...</invoke>.
type xmlCall struct {
	start   int
	closers []string
	began   bool
	xs      xmlScan
	sent    int
}

func (r *xmlCall) advance(m *machine) bool {
	buf := m.buf
	if !r.began {
		r.began = true
		m.beginCall("")
		r.xs = xmlScan{at: r.start + 1, closers: r.closers}
		r.sent = r.start
	}
	idx, k := r.xs.find(buf, m.eof)
	upto := r.xs.at
	if idx >= 0 {
		upto = idx + len(r.closers[k])
	}
	if upto > r.sent {
		m.callDelta(buf[r.sent:upto])
		r.sent = upto
	}
	if idx < 0 {
		if !m.eof {
			return false
		}
		raws, complete := parseXMLCalls(buf[r.start:], r.start)
		if !complete {
			m.addCalls([]rawCall{{name: firstName(raws), offset: r.start, err: DiagTruncated, errMsg: "the call is cut off before it ends"}})
		} else {
			m.addCalls(raws)
		}
		m.pos = len(buf)
		return true
	}
	raws, _ := parseXMLCalls(buf[r.start:upto], r.start)
	m.addCalls(raws)
	m.pos = upto
	return true
}

func firstName(raws []rawCall) string {
	if len(raws) > 0 {
		return raws[0].name
	}
	return ""
}

// tokenCall is a call between special tokens: Kimi's
// <|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{...}<|tool_call_end|>,
// DeepSeek's <｜tool▁call▁begin｜>function<｜tool▁sep｜>name ```json {...}```<｜tool▁call▁end｜>
// (or name<｜tool▁sep｜>{...}), and Step-3's XML after the separator. JSON
// arguments are read by their structure: an end token inside a string
// argument is part of the string.
type tokenCall struct {
	start, body int
	phase       int
	pos         int
	name        string
	f           finder
	jp          *jparser
	began       bool
	sent        int
	repairs     []string
}

// tokenCallEnds end a token call. The first of them close the call and are
// skipped; the others (a section's end, the next call's start) belong to
// what follows.
var tokenCallEnds = tokens("tool_call_end", "tool_calls_section_end", "tool_calls_end", "tool_call_begin")

var tokenCallEndsOwn = len(tokens("tool_call_end"))

func consumedEnd(k int) bool { return k < tokenCallEndsOwn }

// tokens spells special tokens the ways models write them: <|name|>,
// <｜name｜>, and DeepSeek's <｜name▁with▁low▁lines｜>.
func tokens(names ...string) []string {
	var out []string
	for _, n := range names {
		low := strings.ReplaceAll(n, "_", "▁")
		out = append(out, "<|"+n+"|>", "<｜"+n+"｜>", "<｜"+low+"｜>", "<|"+low+"|>")
	}
	return out
}

func (r *tokenCall) advance(m *machine) bool {
	buf := m.buf
	if !r.began {
		r.began = true
		m.beginCall("")
		r.f = finder{pats: append(append([]string{}, tokenSeps...), tokenCallEnds...), at: r.body}
		r.sent = r.body
	}
	for {
		switch r.phase {
		case 0: // the header, up to the separator
			idx, k := r.f.find(buf, m.eof)
			if idx < 0 {
				r.delta(m, r.f.at)
				if !m.eof {
					return false
				}
				return r.bad(m, len(buf), DiagTruncated, "the call is cut off before its arguments")
			}
			if k >= len(tokenSeps) { // an end token before any separator
				end := idx
				if consumedEnd(k - len(tokenSeps)) {
					end += len(tokenCallEnds[k-len(tokenSeps)])
				}
				return r.bad(m, end, DiagMalformed, "the call has no arguments")
			}
			header := strings.TrimSpace(string(buf[r.body:idx]))
			r.pos = idx + len(tokenSeps[k])
			if header == "function" || header == "" {
				r.phase = 1 // DeepSeek R1: the name is on the next line
			} else {
				r.name = tokenName(header)
				r.phase = 2
			}
		case 1: // DeepSeek R1's name line, or Step-3's XML
			i, need, _ := m.skipWS(r.pos, maxLook)
			if need {
				return false
			}
			if i < len(buf) && buf[i] == '<' {
				r.phase = 4
				continue
			}
			nl := i
			for nl < len(buf) && buf[nl] != '\n' && nl-i < maxLook {
				nl++
			}
			if nl >= len(buf) && !m.eof {
				return false
			}
			r.name = tokenName(string(buf[i:nl]))
			r.pos, r.phase = nl, 2
		case 2: // the arguments: JSON, maybe fenced
			i, need, _ := m.skipWS(r.pos, maxLook)
			if need {
				return false
			}
			if i+3 <= len(buf) && (string(buf[i:i+3]) == "```" || string(buf[i:i+3]) == "~~~") {
				for i < len(buf) && buf[i] != '\n' {
					i++
				}
				if i, need, _ = m.skipWS(i, maxLook); need {
					return false
				}
			} else if i+3 > len(buf) && !m.eof && (buf[i] == '`' || buf[i] == '~') {
				return false
			}
			if i < len(buf) && (buf[i] == '{' || buf[i] == '[') {
				r.jp = m.newJParser(i, false)
				r.phase = 3
				continue
			}
			r.phase = 4 // not JSON: read to the end token
		case 3:
			st := r.jp.feed(buf, m.eof)
			r.delta(m, r.jp.pos)
			switch st {
			case jNeed:
				return false
			case jFail:
				if r.jp.truncated {
					return r.bad(m, len(buf), DiagTruncated, "the call is cut off before its JSON ends")
				}
				r.phase = 4
				continue
			}
			// after the JSON: a closing fence, then the end token
			i, need, _ := m.skipWS(r.jp.end, maxLook)
			if need {
				return false
			}
			if i+3 <= len(buf) && (string(buf[i:i+3]) == "```" || string(buf[i:i+3]) == "~~~") {
				if i, need, _ = m.skipWS(i+3, maxLook); need {
					return false
				}
			} else if i < len(buf) && i+3 > len(buf) && !m.eof && (buf[i] == '`' || buf[i] == '~') {
				return false
			}
			end := r.jp.end
			found := false
			for k, e := range tokenCallEnds {
				match, need := hasPrefixFold(buf, i, e, m.eof)
				if need {
					return false
				}
				if match {
					found = true
					if consumedEnd(k) {
						end = i + len(e)
					}
					break
				}
			}
			if !found {
				r.repairs = append(r.repairs, "missing end token: the call ends where its JSON ends")
			}
			rc := rawCall{name: r.name, args: r.jp.root, src: buf, offset: r.start, repairs: append(r.jp.rep.strings(), r.repairs...)}
			m.addCalls([]rawCall{rc})
			m.pos = end
			return true
		case 4: // read to the end token, then parse what is there
			r.f = finder{pats: tokenCallEnds, at: r.pos}
			r.phase = 5
		case 5:
			idx, k := r.f.find(buf, m.eof)
			if idx < 0 {
				r.delta(m, r.f.at)
				if !m.eof {
					return false
				}
				idx, k = len(buf), -1
			}
			r.delta(m, idx)
			rc := parseTokenCall(buf[r.body:idx], r.start)
			if k < 0 && rc.err == "" {
				rc.err, rc.errMsg = DiagTruncated, "the call is cut off before its end token"
			}
			m.addCalls([]rawCall{rc})
			m.pos = idx
			if k >= 0 && consumedEnd(k) {
				m.pos = idx + len(tokenCallEnds[k])
			}
			return true
		}
	}
}

func (r *tokenCall) delta(m *machine, upto int) {
	if upto > r.sent {
		m.callDelta(m.buf[r.sent:upto])
		r.sent = upto
	}
}

func (r *tokenCall) bad(m *machine, end int, k DiagKind, msg string) bool {
	r.delta(m, end)
	m.addCalls([]rawCall{{name: r.name, offset: r.start, err: k, errMsg: msg}})
	m.pos = end
	return true
}

// tokenName reads a name from a call header: Kimi's functions.get_weather:0
// loses its namespace and index.
func tokenName(h string) string {
	h = strings.TrimSpace(h)
	if c := strings.LastIndexByte(h, ':'); c > 0 && isDigits(h[c+1:]) {
		h = h[:c]
	}
	return strings.TrimPrefix(h, "functions.")
}

var tokenSeps = tokens("tool_sep", "tool_call_argument_begin")

func parseTokenCall(b []byte, off int) rawCall {
	f := finder{pats: tokenSeps}
	k, p := f.find(b, true)
	if k < 0 {
		return rawCall{name: tokenName(string(b)), offset: off, err: DiagMalformed, errMsg: "the call has no arguments"}
	}
	header := strings.TrimSpace(string(b[:k]))
	rest := bytes.TrimSpace(b[k+len(tokenSeps[p]):])
	if len(rest) > 0 && rest[0] == '<' { // Step-3: <steptml:invoke name="x">...
		raws, _ := parseXMLCalls(rest, off)
		return raws[0]
	}
	name := header
	if header == "function" || header == "" {
		// DeepSeek R1: the name is the first line after the separator
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			nl = len(rest)
		}
		name = string(rest[:nl])
		rest = rest[nl:]
	}
	name = tokenName(name)
	body := stripFence(bytes.TrimSpace(rest))
	if len(body) == 0 {
		return rawCall{name: name, offset: off}
	}
	n, rep, err := parseLenient(body)
	if err != nil {
		msg := "the call's JSON cannot be read: " + err.Error()
		if se, ok := err.(*SyntaxError); ok && se.Truncated {
			return rawCall{name: name, offset: off, err: DiagTruncated, errMsg: msg}
		}
		return rawCall{name: name, offset: off, err: DiagMalformed, errMsg: msg}
	}
	return rawCall{name: name, args: detach(n), offset: off, repairs: rep.strings()}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// stripFence removes a ```json ... ``` fence around b.
func stripFence(b []byte) []byte {
	if !bytes.HasPrefix(b, []byte("```")) {
		return b
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return b
	}
	b = b[nl+1:]
	b = bytes.TrimSpace(b)
	b = bytes.TrimSuffix(b, []byte("```"))
	return bytes.TrimSpace(b)
}

// glmInline is GLM's call written without a wrapper:
// name<arg_key>k</arg_key><arg_value>v</arg_value>...
type glmInline struct {
	start int // the name
	at    int // the first <arg_key>
	phase int
	pos   int
	f     finder
	began bool
	sent  int
}

func (r *glmInline) advance(m *machine) bool {
	buf := m.buf
	if !r.began {
		r.began = true
		m.beginCall(string(buf[r.start:r.at]))
		r.sent = r.start
		r.f = finder{pats: []string{"</arg_key>"}, at: r.at}
	}
	for {
		switch r.phase {
		case 0, 2: // inside a key or a value: find its end
			j, _ := r.f.find(buf, m.eof)
			if j < 0 {
				return r.wait(m)
			}
			r.pos = j + len(r.f.pats[0])
			r.phase++
		case 1: // after a key: its value
			i := r.pos
			for i < len(buf) && isWS(buf[i]) && i-r.pos <= maxRunGap {
				i++
			}
			match, need := hasPrefixFold(buf, i, "<arg_value>", m.eof)
			if need {
				return r.wait(m)
			}
			if !match {
				return r.end(m, r.pos, false)
			}
			r.f = finder{pats: []string{"</arg_value>"}, at: i}
			r.phase = 2
		case 3: // after a value: another key, or the end
			i := r.pos
			for i < len(buf) && isWS(buf[i]) && i-r.pos <= maxRunGap {
				i++
			}
			match, need := hasPrefixFold(buf, i, "<arg_key>", m.eof)
			if need {
				return r.wait(m)
			}
			if !match {
				return r.end(m, r.pos, true)
			}
			r.f = finder{pats: []string{"</arg_key>"}, at: i}
			r.phase = 0
		}
	}
}

func (r *glmInline) wait(m *machine) bool {
	if !m.eof {
		return false
	}
	m.addCalls([]rawCall{{name: string(m.buf[r.start:r.at]), offset: r.start, err: DiagTruncated, errMsg: "the call is cut off before its arguments end"}})
	m.pos = len(m.buf)
	return true
}

func (r *glmInline) end(m *machine, end int, ok bool) bool {
	if end > r.sent {
		m.callDelta(m.buf[r.sent:end])
	}
	raws, _ := parseGLM(m.buf[r.start:end], r.start)
	if !ok {
		raws = []rawCall{{name: string(m.buf[r.start:r.at]), offset: r.start, err: DiagMalformed, errMsg: "an <arg_key> without its <arg_value>"}}
	}
	m.addCalls(raws)
	m.pos = end
	return true
}
