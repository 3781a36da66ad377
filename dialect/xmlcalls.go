package dialect

// Calls written in XML: Qwen3-Coder, Claude and MiniMax invoke, DeepSeek
// DSML, Step-3, GLM and LongCat arguments, and Gemma 4's call:name{...}.

import (
	"bytes"
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
			for k < len(b) && lenient.IsWS(b[k]) {
				k++
			}
			if k < len(b) && (b[k] == '{' || b[k] == '[') {
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
			for vk < len(b) && lenient.IsWS(b[vk]) {
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
			if cur == nil || cur.Name != "" {
				start(string(bytes.TrimSpace(b[i:end])))
			} else {
				cur.Name = string(bytes.TrimSpace(b[i:end]))
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
			if n := lenient.ParseLiteral(string(bytes.TrimSpace(b[i:end]))); n != nil && n.Kind == lenient.Object {
				cur.Args, cur.TextArgs = lenient.Detach(n), false
			}
			i = after
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

// parseGLM reads GLM's name<arg_key>k</arg_key><arg_value>v</arg_value>...
func parseGLM(b []byte, off int) ([]RawCall, bool) {
	_, k, _, found := nextTag(b, 0, func(t tagInfo) bool { return t.name == "arg_key" && !t.closing })
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
	g := gemmaParser{b: b}
	var out []RawCall
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
		for g.i < len(b) && b[g.i] != '{' && b[g.i] != '<' && !lenient.IsWS(b[g.i]) {
			g.i++
		}
		name := string(b[s:g.i])
		g.ws()
		if g.i >= len(b) || b[g.i] != '{' {
			out = append(out, RawCall{Name: name, Offset: off, Err: DiagMalformed, ErrMsg: "expected '{' after call:" + name})
			return out, false
		}
		v := g.value(0)
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

type gemmaParser struct {
	b []byte
	i int
}

const gemmaQuote = `<|"|>`

func (g *gemmaParser) ws() {
	for g.i < len(g.b) && lenient.IsWS(g.b[g.i]) {
		g.i++
	}
}

func (g *gemmaParser) value(depth int) *lenient.Node {
	g.ws()
	if g.i >= len(g.b) || depth > lenient.MaxDepth {
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
		return &lenient.Node{Kind: lenient.String, Str: s}
	case b[g.i] == '{':
		g.i++
		n := &lenient.Node{Kind: lenient.Object}
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
			n.Keys = append(n.Keys, key)
			n.Kids = append(n.Kids, v)
			g.ws()
			if g.i < len(b) && b[g.i] == ',' {
				g.i++
			}
		}
	case b[g.i] == '[':
		g.i++
		n := &lenient.Node{Kind: lenient.Array}
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
			n.Kids = append(n.Kids, v)
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
	if g.i == s {
		return nil // nothing here: not a value
	}
	w := strings.TrimSpace(string(b[s:g.i]))
	switch w {
	case "true", "True":
		return &lenient.Node{Kind: lenient.Bool, Bool: true}
	case "false", "False":
		return &lenient.Node{Kind: lenient.Bool}
	case "null", "None":
		return &lenient.Node{Kind: lenient.Null}
	}
	if num, ok, _ := lenient.ParseNumberWord(w); ok {
		return &lenient.Node{Kind: lenient.Number, Str: num}
	}
	return &lenient.Node{Kind: lenient.String, Str: w}
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
			r.f = finder{pats: []string{"</arg_value>"}, at: i}
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
			r.f = finder{pats: []string{"</arg_key>"}, at: i}
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
