// Package markup reads the bodies of tool calls written as markup rather
// than JSON: Qwen3-Coder's <function=name><parameter=k>v</parameter> (and
// its bare <k>v</k> parameters), Claude's and MiniMax's <invoke>, DeepSeek
// DSML, Step-3, GLM's and LongCat's <arg_key>/<arg_value>, and Gemma's
// call:name{...} with <|"|> or FunctionGemma's <escape> strings. The dialect
// scanner finds where such a call ends with [Scan] and reads it with
// [XMLCalls], [GLM] or [Gemma].
package markup

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
)

// Call is a call read from markup, before it is checked against the
// declared tools.
type Call struct {
	Name string
	// Args holds the arguments; with TextArgs their values are text, whose
	// type the tool's schema decides.
	Args     *lenient.Node
	TextArgs bool
	Offset   int
	Repairs  []string
	// Err, when not empty, says why the call cannot be read.
	Err string
	// NoValue is the first <arg_key> with no value after it.
	NoValue string
	// Cut reports that Err is the call cut off before its end.
	Cut bool
}

// trimValue removes what surrounds a value written on lines of its own, as
// Qwen writes values: the line break after the opening tag, and the line
// break and indentation before the closing tag (which a value of several
// lines that does not start on a line of its own keeps: Step-3's and
// Seed-OSS's code ends with its own line break). A value on one line loses
// the white space around it too when it was indented on a line of its own,
// or padded on both sides (line breaks a client flattened to spaces):
// "\n    Dallas\n    ", " latest news ". A value of several lines keeps
// its indentation.
func trimValue(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\r"))
	ownLine := len(b) > 0 && b[0] == '\n'
	if ownLine {
		b = b[1:]
	}
	if k := bytes.LastIndexByte(b, '\n'); k >= 0 && isHSpace(b[k+1:]) && (ownLine || bytes.IndexByte(b[:k], '\n') < 0) {
		b = bytes.TrimSuffix(b[:k], []byte("\r"))
	}
	if bytes.IndexByte(b, '\n') < 0 && len(b) > 0 && (ownLine || lenient.IsWS(b[0]) && lenient.IsWS(b[len(b)-1])) {
		if t := bytes.TrimSpace(b); len(t) > 0 {
			return t
		}
	}
	return b
}

func isHSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// MMMarker is what MiniMax-M3 writes before each of its tags.
const MMMarker = "]<]minimax[>["

// XMLCalls reads XML-style calls: Qwen's <function=name><parameter=k>v
// </parameter></function>, <function name="x">{json}</function>, Claude's
// <invoke name="x"><parameter name="k">v</parameter></invoke>,
// <function>name</function><parameter>k</parameter>v, GLM's
// <arg_key>k</arg_key><arg_value>v</arg_value>, and the same with a
// namespace (<steptml:parameter>, <｜DSML｜invoke>, <longcat_arg_key>).
func XMLCalls(b []byte, off int) ([]Call, bool) {
	if bytes.Contains(b, []byte(MMMarker)) {
		b = bytes.ReplaceAll(b, []byte(MMMarker), nil)
	}
	var calls []Call
	var cur *Call
	complete := true
	flush := func() {
		if cur != nil {
			calls = append(calls, *cur)
			cur = nil
		}
	}
	start := func(name string) {
		flush()
		cur = &Call{Name: name, Offset: off, TextArgs: true, Args: &lenient.Node{Kind: lenient.Object}}
	}
	var lists map[*lenient.Node]bool // the lists made of parameters written again
	set := func(key string, val []byte, json bool) {
		if cur == nil {
			start("")
		}
		if t := bytes.TrimSpace(val); bytes.HasPrefix(t, []byte("<![CDATA[")) && bytes.HasSuffix(t, []byte("]]>")) {
			val = t[len("<![CDATA[") : len(t)-len("]]>")]
		}
		v := &lenient.Node{Kind: lenient.String, Str: string(val)}
		if json { // DSML's string="false": the value is JSON
			if n := lenient.ParseLiteral(strings.TrimSpace(v.Str)); n != nil {
				v = n
			}
		}
		if k := slices.Index(cur.Args.Keys, key); k >= 0 {
			// a parameter written again is a list: <city>A</city><city>B</city>
			if l := cur.Args.Kids[k]; lists[l] {
				l.Kids = append(l.Kids, v)
			} else {
				if lists == nil {
					lists = map[*lenient.Node]bool{}
				}
				l = &lenient.Node{Kind: lenient.Array, Kids: []*lenient.Node{l, v}}
				cur.Args.Kids[k], lists[l] = l, true
			}
			return
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
					cur.Err = "the call's JSON cannot be read: " + err.Error()
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
		case (t.Name == "parameter" || t.Name == "param" && t.Attrs != "") && !t.Closing:
			pname := t.Name
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
			pt, pAt, pAfter, found := nextTag(b, i, func(u tag.Info) bool { return u.Name == pname })
			switch {
			case found && pt.Closing:
				// a value that holds "</parameter>" itself runs to the last
				// closer before the next parameter or the call's end
				for {
					nt, nAt, nAfter, nFound := nextTag(b, pAfter, func(u tag.Info) bool { return u.Name == pname || isEnd(u) })
					if !nFound || nt.Name != pname || !nt.Closing {
						break
					}
					pAt, pAfter = nAt, nAfter
				}
				set(key, trimValue(b[i:pAt]), isJSON)
				i = pAfter
			default:
				_, end, _, eFound := nextTag(b[:pAt], i, isEnd)
				if !found && !eFound {
					complete = false
				}
				set(key, trimValue(b[i:end]), isJSON)
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
			var note string
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
			} else if u, vEnd, vAfter, found := nextTag(b, kAfter, func(u tag.Info) bool { return u.Name == "arg_value" || u.Name == "arg_key" }); found && u.Closing && u.Name == "arg_value" {
				// the opener dropped: <arg_key>k</arg_key>v</arg_value>
				val, i = trimValue(b[kAfter:vEnd]), vAfter
				note = "xml: <arg_value> missing before " + strconv.Quote(lenient.Clip(key, 40)) + "'s value"
			} else {
				note = "no value"
			}
			set(key, val, false)
			switch {
			case note == "no value":
				if cur.NoValue == "" {
					cur.NoValue = key
				}
			case note != "":
				cur.Repairs = append(cur.Repairs, note)
			}
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
		case BareParam(t) && cur != nil && cur.Name != "" && cur.TextArgs:
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
			set(string(b[at+1:at+1+len(t.Raw)]), trimValue(b[i:vEnd]), false)
			i = vAfter
		}
	}
	flush()
	for k := range calls {
		if calls[k].Name == "" && calls[k].Err == "" {
			calls[k].Err = "the call has no tool name"
		}
	}
	if len(calls) == 0 {
		return []Call{{Offset: off, Err: "no call found in the XML"}}, false
	}
	return calls, complete
}

// BareParam reports a tag that can hold a parameter written as its own
// element: <path>, <max_results>, opening, without attributes.
func BareParam(t tag.Info) bool {
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
		if bytes.HasPrefix(b[j:], []byte("<![CDATA[")) {
			k := bytes.Index(b[j:], []byte("]]>"))
			if k < 0 {
				break
			}
			i = j + k + 3
			continue
		}
		if t, ok, _ := tag.Read(b, j, true); ok && match(t) {
			return t, j, t.End, true
		}
		i = j + 1
	}
	return tag.Info{}, len(b), len(b), false
}

// GLM reads GLM's name<arg_key>k</arg_key><arg_value>v</arg_value>...
// split, if not nil, finds the declared tool a name starts with: it splits
// a name glued to the first key when the model dropped the <arg_key> between
// them (vLLM #47190: send_command_to_shellcommand</arg_key>).
func GLM(b []byte, off int, split func(string) (string, bool)) ([]Call, bool) {
	if t, at, _, found := nextTag(b, 0, func(t tag.Info) bool { return glmTag(t.Name) }); found && t.Closing {
		if c, ok := glmDropped(b, at, t, off, split); ok {
			return c, true
		}
	}
	_, k, _, found := nextTag(b, 0, func(t tag.Info) bool { return t.Name == "arg_key" && !t.Closing })
	name := bytes.TrimSpace(b[:k])
	if len(name) == 0 || bytes.ContainsAny(name, " \t\n<>{}") {
		return []Call{{Offset: off, Err: "the call cannot be read: " + lenient.Clip(string(b), 40)}}, false
	}
	rc := Call{Name: string(name), Offset: off, TextArgs: true, Args: &lenient.Node{Kind: lenient.Object}}
	complete := true
	if found {
		calls, c := XMLCalls(b[k:], off)
		complete = c
		if len(calls) > 0 && calls[0].Err != "" && calls[0].Args != nil {
			rc.Args, rc.Repairs = calls[0].Args, calls[0].Repairs
			if calls[0].NoValue != "" {
				rc.Err = "the argument " + strconv.Quote(lenient.Clip(calls[0].NoValue, 40)) + " has no <arg_value>"
			}
		}
	}
	return []Call{rc}, complete
}

func glmTag(name string) bool { return name == "arg_key" || name == "arg_value" }

// glmDropped reads a GLM call whose first tag, t at b[at], is a closing one:
// its <arg_key> dropped after the name ("name key</arg_key>", or the key
// glued to the name), or a name alone with a stray closer (name</arg_value>).
func glmDropped(b []byte, at int, t tag.Info, off int, split func(string) (string, bool)) ([]Call, bool) {
	head := string(bytes.TrimSpace(b[:at]))
	if head == "" || strings.ContainsAny(head, "<>{}") {
		return nil, false
	}
	if t.Name == "arg_value" {
		if f := bytes.Fields(b[at:]); len(f) != 1 || !bytes.Equal(f[0], []byte("</arg_value>")) || strings.ContainsAny(head, " \t\n") {
			return nil, false
		}
		return []Call{{Name: head, Offset: off, TextArgs: true, Args: &lenient.Node{Kind: lenient.Object},
			Repairs: []string{"xml: a stray </arg_value> after the name ignored"}}}, true
	}
	name, key := head, ""
	if k := strings.LastIndexAny(head, " \t\n"); k >= 0 {
		name, key = strings.TrimSpace(head[:k]), head[k+1:]
	} else if split != nil {
		n, ok := split(head)
		if !ok || len(n) >= len(head) {
			return nil, false
		}
		name, key = n, head[len(n):]
	}
	if key == "" || strings.ContainsAny(name, " \t\n") {
		return nil, false
	}
	fixed := append([]byte(name+"<arg_key>"+key), b[at:]...)
	calls, complete := GLM(fixed, off, nil)
	if len(calls) == 1 && calls[0].Err == "" {
		calls[0].Repairs = append(calls[0].Repairs, "xml: <arg_key> missing before "+strconv.Quote(lenient.Clip(key, 40)))
	}
	return calls, complete
}

// Gemma reads Gemma 4's call:name{key:<|"|>text<|"|>,n:1} and
// FunctionGemma's call:name{key:<escape>text<escape>}.
func Gemma(b []byte, off int) ([]Call, bool) {
	g := lenient.Gemma{Src: b}
	var out []Call
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
		for g.Pos < len(b) && b[g.Pos] != '{' && b[g.Pos] != '(' && b[g.Pos] != '<' && !lenient.IsWS(b[g.Pos]) {
			g.Pos++
		}
		name := string(b[s:g.Pos])
		g.WS()
		if g.Pos < len(b) && b[g.Pos] == '(' {
			// call:name(...): Gemma's key:value in parentheses, or Python's
			// keyword arguments, as Gemma 4 also writes its calls
			c, ok := gemmaParens(b, s, g.Pos, name, off)
			return append(out, c), ok
		}
		if g.Pos >= len(b) || b[g.Pos] != '{' {
			out = append(out, Call{Name: name, Offset: off, Err: "expected '{' after call:" + name})
			return out, false
		}
		v := g.Value()
		if v == nil {
			out = append(out, Call{Name: name, Offset: off, Err: "the call's arguments cannot be read"})
			return out, false
		}
		out = append(out, Call{Name: name, Args: v, Offset: off})
	}
	if len(out) == 0 {
		return []Call{{Offset: off, Err: "expected call:name{...}"}}, false
	}
	return out, true
}

// gemmaParens reads call:name(...), the name at b[s:] and the parenthesis
// at b[p]: the arguments in Gemma's key:<|"|>value<|"|> form, or in Python's
// key="value" form. The call ends at the last parenthesis.
func gemmaParens(b []byte, s, p int, name string, off int) (Call, bool) {
	e := bytes.LastIndexByte(b, ')')
	if e < p {
		return Call{Name: name, Offset: off, Err: "the call's arguments are cut off"}, false
	}
	if len(bytes.TrimSpace(b[e+1:])) > 0 {
		return Call{Name: name, Offset: off, Err: "text after call:" + name + "(...)"}, false
	}
	braced := append(append([]byte("{"), b[p+1:e]...), '}')
	g := lenient.Gemma{Src: braced}
	if v := g.Value(); v != nil && g.Pos == len(braced) {
		return Call{Name: name, Args: v, Offset: off, Repairs: []string{"call:" + name + "(...) read as call:" + name + "{...}"}}, true
	}
	pp := &lenient.Python{Src: b[s : e+1], End: e + 1 - s}
	if calls := pp.CallList(false); pp.Err == "" && len(calls) == 1 && calls[0].Err == "" && len(calls[0].Positional) == 0 {
		return Call{Name: name, Args: calls[0].Args, Offset: off}, true
	}
	return Call{Name: name, Offset: off, Err: "the arguments of call:" + name + "(...) cannot be read"}, false
}

// Scan finds the closer of a call written as markup, outside its parameter
// values and Gemma strings, resumably: Find may be called again as the
// buffer grows.
type Scan struct {
	At      int
	Closers []string
	Gemma   bool
	inParam string // the closer of the parameter value we are in
	inCDATA bool   // inside <![CDATA[...]]>, where nothing is markup
	inStr   string // inside a Gemma string: its quote, <|"|> or <escape>
	LastEnd int    // after the last </function> or </invoke> seen
}

var paramOpen = []struct{ open, close string }{
	{"<parameter", "</parameter>"},
	{"<arg_value>", "</arg_value>"},
	{"<param ", "</param>"}, // MiniCPM5
}

// Find returns the index of the first closer at or after At and which of
// Closers it is, or -1, -1 when there is none yet.
func (x *Scan) Find(buf []byte, eof bool) (int, int) {
	for i := x.At; i < len(buf); i++ {
		if x.inCDATA {
			k := bytes.Index(buf[i:], []byte("]]>"))
			if k < 0 {
				x.At = max(i, len(buf)-2)
				return -1, -1
			}
			i, x.inCDATA = i+k+2, false
			continue
		}
		if buf[i] != '<' {
			continue
		}
		x.At = i
		if !x.Gemma {
			match, need := lenient.HasPrefixFold(buf, i, "<![cdata[", eof)
			if need {
				return -1, -1
			}
			if match {
				i, x.inCDATA = i+len("<![cdata[")-1, true
				continue
			}
		}
		if x.Gemma {
			found := false
			for _, q := range lenient.GemmaQuotes {
				if x.inStr != "" && x.inStr != q {
					continue
				}
				match, need := lenient.HasPrefixFold(buf, i, q, eof)
				if need {
					return -1, -1
				}
				if match {
					if x.inStr == "" {
						x.inStr = q
					} else {
						x.inStr = ""
					}
					i += len(q) - 1
					found = true
					break
				}
			}
			if found || x.inStr != "" {
				continue
			}
		}
		if x.inParam != "" {
			match, need := lenient.HasPrefixFold(buf, i, x.inParam, eof)
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
			match, need := lenient.HasPrefixFold(buf, i, p.open, eof)
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
		for k, c := range x.Closers {
			match, need := lenient.HasPrefixFold(buf, i, c, eof)
			if need {
				return -1, -1
			}
			if match {
				return i, k
			}
		}
		for _, c := range []string{"</function>", "</invoke>"} {
			match, need := lenient.HasPrefixFold(buf, i, c, eof)
			if need {
				return -1, -1
			}
			if match {
				x.LastEnd = i + len(c)
			}
		}
	}
	x.At = len(buf)
	return -1, -1
}
