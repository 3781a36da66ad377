package dialect

// Calls written in XML: Qwen3-Coder, Claude and MiniMax invoke, DeepSeek
// DSML, Step-3, GLM and LongCat arguments, and Gemma 4's call:name{...}.

import (
	"bytes"
	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
	"strings"
)

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
func parseXMLCalls(b []byte, off int) ([]RawCall, bool) {
	var calls []RawCall
	var cur *RawCall
	complete := true
	flush := func() {
		if cur != nil {
			calls = append(calls, *cur)
			cur = nil
		}
	}
	start := func(name string) {
		flush()
		cur = &RawCall{Name: name, Offset: off, TextArgs: true, Args: &lenient.Node{Kind: lenient.Object}}
	}
	set := func(key string, val []byte, json bool) {
		if cur == nil {
			start("")
		}
		v := &lenient.Node{Kind: lenient.String, Str: string(val)}
		if json { // DSML's string="false": the value is JSON
			if n := lenient.ParseLiteral(strings.TrimSpace(v.Str)); n != nil {
				v = n
			}
		}
		cur.Args.Keys = append(cur.Args.Keys, key)
		cur.Args.Kids = append(cur.Args.Kids, v)
	}
	isEnd := func(t tag.Info) bool {
		return t.Closing && (t.Name == "function" || t.Name == "invoke" || t.Name == "tool_call" || t.Name == "function_calls")
	}
	i := 0
	for {
		t, at, after, ok := nextTag(b, i, func(tag.Info) bool { return true })
		if !ok {
			break
		}
		i = after
		switch {
		case (t.Name == "function" || t.Name == "invoke" || t.Name == "tool") && !t.Closing:
			name := t.Eq
			if name == "" {
				name, _ = tag.Attr(t.Attrs, "name")
			}
			if name == "" && t.Name == "function" {
				// <function>name</function>, parameters follow
				u, end, after, _ := nextTag(b, i, func(u tag.Info) bool { return u.Name == "function" })
				start(string(bytes.TrimSpace(b[i:end])))
				if u.Closing {
					i = after
				} else {
					i = end
				}
				continue
			}
			start(name)
			// a JSON body: <function=name>{"a": 1}</function>
			k := i
			for k < len(b) && lenient.IsWS(b[k]) {
				k++
			}
			if k < len(b) && (b[k] == '{' || b[k] == '[') {
				// The JSON ends by its brackets: the closer may be cut off
				// or missing at the end of the reply (functionary v3.1).
				jr := lenient.NewReader(k, false)
				if jr.Feed(b, true) == lenient.Done {
					rest := jr.End
					for rest < len(b) && lenient.IsWS(b[rest]) {
						rest++
					}
					if _, at, after, found := nextTag(b, jr.End, isEnd); found && at == rest {
						cur.Args, cur.TextArgs = lenient.Detach(jr.Root), false
						i = after
						flush()
						continue
					}
					if rest == len(b) || lenient.CutOff(b, rest, []string{"</function>", "</invoke>", "</tool_call>"}) {
						cur.Args, cur.TextArgs = lenient.Detach(jr.Root), false
						cur.Repairs = append(cur.Repairs, "missing closing tag: the call ends where its JSON ends")
						i = len(b)
						flush()
						continue
					}
				}
				_, end, after, found := nextTag(b, k, isEnd)
				if n, _, err := lenient.Parse(b[k:end]); err == nil {
					cur.Args, cur.TextArgs = lenient.Detach(n), false
				} else {
					cur.Err, cur.ErrMsg = DiagMalformed, "the call's JSON cannot be read: "+err.Error()
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
		case t.Name == "parameter" && !t.Closing:
			key := t.Eq
			if key == "" {
				key, _ = tag.Attr(t.Attrs, "name")
			}
			if key == "" {
				// <parameter>key</parameter>value
				u, kEnd, kAfter, _ := nextTag(b, i, func(u tag.Info) bool { return u.Name == "parameter" || isEnd(u) })
				if !u.Closing || u.Name != "parameter" {
					i = kEnd // not a key: <parameter> without </parameter>
					continue
				}
				_, vEnd, _, _ := nextTag(b, kAfter, func(u tag.Info) bool { return u.Name == "parameter" && !u.Closing || isEnd(u) })
				set(string(bytes.TrimSpace(b[i:kEnd])), bytes.TrimSpace(b[kAfter:vEnd]), false)
				i = vEnd
				continue
			}
			isJSON := false
			if s, ok := tag.Attr(t.Attrs, "string"); ok && s == "false" {
				isJSON = true
			}
			// The value runs to </parameter>; a missing one ends it at the
			// next parameter or the end of the call.
			pt, pAt, pAfter, found := nextTag(b, i, func(u tag.Info) bool { return u.Name == "parameter" })
			switch {
			case found && pt.Closing:
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
		case t.Name == "arg_key" && !t.Closing:
			u, kEnd, kAfter, _ := nextTag(b, i, func(u tag.Info) bool { return u.Name == "arg_key" || u.Name == "arg_value" })
			if !u.Closing || u.Name != "arg_key" {
				i = kEnd
				continue
			}
			key := string(bytes.TrimSpace(b[i:kEnd]))
			vk := kAfter
			for vk < len(b) && lenient.IsWS(b[vk]) {
				vk++
			}
			i = kAfter
			var val []byte
			if vt, vOK, _ := tag.Read(b, vk, true); vOK && vt.Name == "arg_value" && !vt.Closing {
				u, vEnd, vAfter, found := nextTag(b, vt.End, func(u tag.Info) bool { return u.Name == "arg_value" || u.Name == "arg_key" })
				if !found {
					complete = false
				}
				val = b[vt.End:vEnd]
				i = vAfter
				if !u.Closing || u.Name != "arg_value" {
					i = vEnd
				}
			}
			set(key, val, false)
		case (t.Name == "name" || t.Name == "tool_name") && !t.Closing:
			u, end, after, _ := nextTag(b, i, func(u tag.Info) bool { return u.Name == t.Name })
			if !u.Closing {
				after = end
			}
			if cur == nil || cur.Name != "" {
				start(string(bytes.TrimSpace(b[i:end])))
			} else {
				cur.Name = string(bytes.TrimSpace(b[i:end]))
			}
			i = after
		case (t.Name == "arguments" || t.Name == "args" || t.Name == "parameters" || t.Name == "input") && !t.Closing:
			u, end, after, _ := nextTag(b, i, func(u tag.Info) bool { return u.Name == t.Name })
			if !u.Closing {
				after = end
			}
			if cur == nil {
				start("")
			}
			if n := lenient.ParseLiteral(string(bytes.TrimSpace(b[i:end]))); n != nil && n.Kind == lenient.Object {
				cur.Args, cur.TextArgs = lenient.Detach(n), false
			}
			i = after
		case bareParam(t) && cur != nil && cur.Name != "" && cur.TextArgs:
			// Qwen3-Coder as live models write it: <path>a.go</path> for
			// <parameter=path>a.go</parameter>. The value runs to the
			// matching closer; tags inside it (<b>, <중요>) are text.
			_, vEnd, vAfter, found := nextTag(b, i, func(u tag.Info) bool { return u.Closing && u.Raw == t.Raw })
			if !found {
				_, vEnd, _, found = nextTag(b, i, isEnd)
				if !found {
					complete = false
				}
				vAfter = vEnd
			}
			set(string(b[at+1:at+1+len(t.Raw)]), trimNewline(b[i:vEnd]), false)
			i = vAfter
		}
	}
	flush()
	for k := range calls {
		if calls[k].Name == "" && calls[k].Err == "" {
			calls[k].Err, calls[k].ErrMsg = DiagMalformed, "the call has no tool name"
		}
	}
	if len(calls) == 0 {
		return []RawCall{{Offset: off, Err: DiagMalformed, ErrMsg: "no call found in the XML"}}, false
	}
	return calls, complete
}

// bareParam reports a tag that can hold a parameter written as its own
// element: <path>, <max_results>, opening, without attributes.
func bareParam(t tag.Info) bool {
	if t.Closing || t.BarL || t.BarR || t.Eq != "" || t.Attrs != "" || t.Raw != t.Name || t.Name == "" {
		return false
	}
	for i := 0; i < len(t.Name); i++ {
		c := t.Name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// nextTag finds the first tag at or after i that match accepts. at and
// after are where it starts and ends (len(b) when there is none).
func nextTag(b []byte, i int, match func(tag.Info) bool) (t tag.Info, at, after int, found bool) {
	for i < len(b) {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			break
		}
		j += i
		if t, ok, _ := tag.Read(b, j, true); ok && match(t) {
			return t, j, t.End, true
		}
		i = j + 1
	}
	return tag.Info{}, len(b), len(b), false
}

// parseGLM reads GLM's name<arg_key>k</arg_key><arg_value>v</arg_value>...
func parseGLM(b []byte, off int) ([]RawCall, bool) {
	_, k, _, found := nextTag(b, 0, func(t tag.Info) bool { return t.Name == "arg_key" && !t.Closing })
	name := bytes.TrimSpace(b[:k])
	if len(name) == 0 || bytes.ContainsAny(name, " \t\n<>{}") {
		return []RawCall{{Offset: off, Err: DiagMalformed, ErrMsg: "the call cannot be read: " + lenient.Clip(string(b), 40)}}, false
	}
	rc := RawCall{Name: string(name), Offset: off, TextArgs: true, Args: &lenient.Node{Kind: lenient.Object}}
	complete := true
	if found {
		calls, c := parseXMLCalls(b[k:], off)
		complete = c
		if len(calls) > 0 && calls[0].Err == DiagMalformed && calls[0].Args != nil {
			rc.Args = calls[0].Args
		}
	}
	return []RawCall{rc}, complete
}

// parseGemma reads Gemma 4's call:name{key:<|"|>text<|"|>,n:1}.
func parseGemma(b []byte, off int) ([]RawCall, bool) {
	g := lenient.Gemma{Src: b}
	var out []RawCall
	for {
		g.WS()
		if g.Pos >= len(b) {
			break
		}
		if !bytes.HasPrefix(b[g.Pos:], []byte("call:")) {
			break
		}
		g.Pos += len("call:")
		s := g.Pos
		for g.Pos < len(b) && b[g.Pos] != '{' && b[g.Pos] != '<' && !lenient.IsWS(b[g.Pos]) {
			g.Pos++
		}
		name := string(b[s:g.Pos])
		g.WS()
		if g.Pos >= len(b) || b[g.Pos] != '{' {
			out = append(out, RawCall{Name: name, Offset: off, Err: DiagMalformed, ErrMsg: "expected '{' after call:" + name})
			return out, false
		}
		v := g.Value()
		if v == nil {
			out = append(out, RawCall{Name: name, Offset: off, Err: DiagMalformed, ErrMsg: "the call's arguments cannot be read"})
			return out, false
		}
		out = append(out, RawCall{Name: name, Args: v, Offset: off})
	}
	if len(out) == 0 {
		return []RawCall{{Offset: off, Err: DiagMalformed, ErrMsg: "expected call:name{...}"}}, false
	}
	return out, true
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
			m.addCalls([]RawCall{{Name: firstName(raws), Offset: r.start, Err: DiagTruncated, ErrMsg: "the call is cut off before it ends"}})
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

func firstName(raws []RawCall) string {
	if len(raws) > 0 {
		return raws[0].Name
	}
	return ""
}

// glmInline is GLM's call written without a wrapper:
// name<arg_key>k</arg_key><arg_value>v</arg_value>...
type glmInline struct {
	start int // the name
	at    int // the first <arg_key>
	phase int
	pos   int
	f     tag.Finder
	began bool
	sent  int
}

func (r *glmInline) advance(m *machine) bool {
	buf := m.buf
	if !r.began {
		r.began = true
		m.beginCall(string(buf[r.start:r.at]))
		r.sent = r.start
		r.f = tag.Finder{Pats: []string{"</arg_key>"}, At: r.at}
	}
	for {
		switch r.phase {
		case 0, 2: // inside a key or a value: find its end
			j, _ := r.f.Find(buf, m.eof)
			if j < 0 {
				return r.wait(m)
			}
			r.pos = j + len(r.f.Pats[0])
			r.phase++
		case 1: // after a key: its value
			i := r.pos
			for i < len(buf) && lenient.IsWS(buf[i]) && i-r.pos <= maxRunGap {
				i++
			}
			match, need := lenient.HasPrefixFold(buf, i, "<arg_value>", m.eof)
			if need {
				return r.wait(m)
			}
			if !match {
				return r.end(m, r.pos, false)
			}
			r.f = tag.Finder{Pats: []string{"</arg_value>"}, At: i}
			r.phase = 2
		case 3: // after a value: another key, or the end
			i := r.pos
			for i < len(buf) && lenient.IsWS(buf[i]) && i-r.pos <= maxRunGap {
				i++
			}
			match, need := lenient.HasPrefixFold(buf, i, "<arg_key>", m.eof)
			if need {
				return r.wait(m)
			}
			if !match {
				return r.end(m, r.pos, true)
			}
			r.f = tag.Finder{Pats: []string{"</arg_key>"}, At: i}
			r.phase = 0
		}
	}
}

func (r *glmInline) wait(m *machine) bool {
	if !m.eof {
		return false
	}
	m.addCalls([]RawCall{{Name: string(m.buf[r.start:r.at]), Offset: r.start, Err: DiagTruncated, ErrMsg: "the call is cut off before its arguments end"}})
	m.pos = len(m.buf)
	return true
}

func (r *glmInline) end(m *machine, end int, ok bool) bool {
	if end > r.sent {
		m.callDelta(m.buf[r.sent:end])
	}
	raws, _ := parseGLM(m.buf[r.start:end], r.start)
	if !ok {
		raws = []RawCall{{Name: string(m.buf[r.start:r.at]), Offset: r.start, Err: DiagMalformed, ErrMsg: "an <arg_key> without its <arg_value>"}}
	}
	m.addCalls(raws)
	m.pos = end
	return true
}
