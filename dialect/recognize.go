package dialect

import (
	"bytes"
	"github.com/ptkit/ptk/dialect/internal/markup"
	"github.com/ptkit/ptk/dialect/result"
	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
	"strings"
)

// Recognizers look a bounded distance past a trigger byte and decide whether
// a construct starts there. They change nothing unless they decide: asked
// again at the same place with more input, they answer afresh.

const maxLook = 256

// maxTicks is the longest run of backticks read as a code fence or span.
const maxTicks = 32

func (m *machine) recognize(i int) action {
	rec := byTrigger[m.buf[i]]
	if rec == nil {
		return action{}
	}
	m.entered = true // a recognizer may fill a region's slot
	a := rec(m, i)
	if a.call && m.quoted(i-a.steal) {
		// A call quoted in a Markdown block quote is shown, not made.
		return action{}
	}
	return a
}

// quoted reports whether buf[i] sits on a line of a Markdown block quote, a
// line whose first character is '>'. It looks back at most maxLook bytes.
func (m *machine) quoted(i int) bool {
	if m.inert != nil && m.lineStart == 0 {
		return false // the data's first line may follow anything
	}
	if m.lineStart >= 0 && m.lineStart <= i {
		k := m.lineStart
		for k < i && (m.buf[k] == ' ' || m.buf[k] == '\t') {
			k++
		}
		return k < i && m.buf[k] == '>'
	}
	first := -1
	for k, n := i, 0; n < maxLook; k, n = k-1, n+1 {
		switch c := m.byteBefore(k); c {
		case '\n', -1:
			return first == '>'
		case ' ', '\t':
		default:
			first = c
		}
	}
	return false
}

// skipWS returns the first non-white-space index at or after i, at most n
// bytes on; need is true when the input ends first.
func (m *machine) skipWS(i, n int) (j int, need, far bool) {
	j = i
	for j < len(m.buf) {
		if c := m.buf[j]; !lenient.IsWS(c) {
			if c != 0xC4 && c != 0xE2 {
				break
			}
			k, need := lenient.Artefact(m.buf, j, m.eof)
			if need {
				return j, true, false
			}
			if k == 0 {
				break
			}
			j += k - 1 // a detokenizer's ▁, Ġ, Ċ for white space
		}
		j++
		if j-i > n {
			// far: j is a byte of white space, or the end of the reply
			return j, j >= len(m.buf) && !m.eof, true
		}
	}
	return j, j >= len(m.buf) && !m.eof, false
}

var wrapperNames = map[string]bool{
	"ptk_call": true, "ptk_batch": true, "tool_call": true, "tool_calls": true, "toolcall": true,
	"function_call": true, "function_calls": true, "functioncall": true, "tool_use": true,
	"longcat_tool_call": true, "tool_request": true,
}

// wrapperClosers close any call wrapper: models mix them up.
var wrapperClosers = []string{
	"</ptk_call>", "</ptk_batch>", "</tool_call>", "</tool_calls>", "</toolcall>", "</function_call>",
	"</function_calls>", "</functioncall>", "</tool_use>", "</longcat_tool_call>", "</tool_request>",
	"<|/tool_call|>", "</|tool_call|>", "<|tool_call_end|>", "<tool_call|>",
}

// barredWrappers are special-token wrappers and their closers:
// <|python_start|>[f(a=1)]<|python_end|> (Llama 4), LFM2's
// <|tool_call_start|>, InternLM's <|action_start|><|plugin|>, Command R's
// <|START_ACTION|>, Apertus's <|tools_prefix|>, Phi-4's <|tool_call|>.
var barredWrappers = map[string]string{
	"python_start":    "<|python_end|>",
	"tool_call_start": "<|tool_call_end|>",
	"action_start":    "<|action_end|>",
	"start_action":    "<|end_action|>",
	"tools_prefix":    "<|tools_suffix|>",
	"tool_call":       "<|/tool_call|>",
	"tool_calls":      "<|/tool_calls|>",
	"toolcall":        "<|/toolcall|>",
	"function_call":   "</s>", // GigaChat 3
}

// strayTokens are protocol tokens that are never text.
var strayTokens = map[string]bool{
	"end": true, "return": true, "call": true, "eot_id": true, "eom_id": true, "im_end": true,
	"python_end": true, "message": true, "constrain": true, "endoftext": true, "end_of_text": true,
	"tool_calls_section_begin": true, "tool_calls_section_end": true, "tool_calls_end": true,
	"tool_call_end": true, "tool_sep": true, "tool_call_argument_begin": true, "eos": true,
	"end_of_turn": true, "tool_call": true, "end_of_sentence": true, "begin_of_sentence": true,
	"start_response": true, "end_response": true, "end_action": true, "action_end": true, "plugin": true,
	"tools_suffix": true, "role_sep": true, "end_thinking": true,
	"role_end": true, "assistant_start": true, "assistant_end": true, "inner_suffix": true, // Ling, Apertus
	"end_of_turn_token": true, // Command R
}

func (m *machine) recognizeTag(i int) action {
	buf := m.buf
	if match, need := lenient.HasPrefixFold(buf, i, "<call:", m.eof); need {
		return action{need: true}
	} else if match {
		return action{reg: regionOf(&m.regions.dropRegion, dropRegion{start: i, end: i + len("<call:"), text: true,
			diag: &result.Diagnostic{Kind: result.DiagUnsupported, Offset: i, Message: "<call:...> syntax is not a call ptk runs; read as text"}})}
	}
	if i > m.textFrom && buf[i-1] == ']' {
		if match, need := lenient.HasPrefixFold(buf, i, markup.MMMarker[1:], m.eof); need {
			return action{need: true}
		} else if match {
			return action{reg: regionOf(&m.regions.dropRegion, dropRegion{end: i + len(markup.MMMarker) - 1}), steal: 1}
		}
	}
	t, ok, need := tag.Read(buf, i, m.eof)
	if need {
		return action{need: true}
	}
	if !ok {
		return action{}
	}
	for _, r := range tagRules {
		if r.match(t) {
			return r.start(m, i, t)
		}
	}
	return action{}
}

// skipMarkers skips white space and MiniMax-M3's markers from j.
func (m *machine) skipMarkers(j int) (int, bool) {
	for {
		match, need := lenient.HasPrefixFold(m.buf, j, markup.MMMarker, m.eof)
		if need {
			return j, true
		}
		if !match {
			return j, false
		}
		if j, need, _ = m.skipWS(j+len(markup.MMMarker), maxLook); need {
			return j, true
		}
	}
}

// drop makes a tag that is never text disappear.
func (m *machine) drop(t tag.Info) action {
	return action{reg: regionOf(&m.regions.dropRegion, dropRegion{end: t.End})}
}

// gigaChatHeader reads GigaChat 3's message separator: before "function
// call<|role_sep|>" it opens a call, which runs to </s> or the end of the
// reply; elsewhere it is a protocol token, not text.
func (m *machine) gigaChatHeader(i int, t tag.Info) action {
	const header = "function call"
	j, need, _ := m.skipWS(t.End, maxLook)
	if need {
		return action{need: true}
	}
	match, need := lenient.HasPrefixFold(m.buf, j, header, m.eof)
	if need {
		return action{need: true}
	}
	if !match {
		return m.drop(t)
	}
	if j, need, _ = m.skipWS(j+len(header), maxLook); need {
		return action{need: true}
	}
	nt, ok, need := tag.Read(m.buf, j, m.eof)
	if need {
		return action{need: true}
	}
	if !ok || !barred(nt) || nt.Name != "role_sep" {
		return m.drop(t)
	}
	t.End = nt.End
	return m.wrapper(i, t, append([]string{"</s>"}, wrapperClosers...), false, false)
}

// recipient reads a Harmony recipient written without its tokens from j,
// "to=functions.name json{" or "to=functions.name <|constrain|>json {":
// the tool and where its JSON starts.
func (m *machine) recipient(j int) (name string, jsonAt int, ok, need bool) {
	buf := m.buf
	if match, need := lenient.HasPrefixFold(buf, j, "to=", m.eof); need || !match {
		return "", 0, false, need
	}
	k := j + len("to=")
	for k < len(buf) && k-j < maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.' || buf[k] == '-') {
		k++
	}
	name = strings.TrimPrefix(string(buf[j+len("to="):k]), "functions.")
	for _, skip := range []string{" ", "<|constrain|>", "json", " ", "\n"} {
		if match, need := lenient.HasPrefixFold(buf, k, skip, m.eof); need {
			return "", 0, false, true
		} else if match {
			k += len(skip)
		}
	}
	if k >= len(buf) {
		return "", 0, false, !m.eof
	}
	return name, k, name != "" && buf[k] == '{', false
}

// kimiHead reads the name after Kimi-K3's <|open|> or <|close|> at t, up to
// its <|sep|>; t.End becomes the end of the <|sep|>. ok is false when there
// is none nearby.
func (m *machine) kimiHead(t *tag.Info) (name string, ok, need bool) {
	f := tag.Finder{Pats: []string{"<|sep|>"}, At: t.End, Limit: t.End + maxLook}
	k, _ := f.Find(m.buf, m.eof)
	if k < 0 {
		return "", false, !m.eof && len(m.buf) < t.End+maxLook
	}
	name, _, _ = strings.Cut(strings.TrimSpace(string(m.buf[t.End:k])), " ")
	t.End = k + len("<|sep|>")
	return name, true, false
}

// kimi reads Kimi-K3's <|open|>name<|sep|>, reasoning, the answer's text
// or the calls, and drops its <|close|>name<|sep|>; a closer of reasoning
// never opened is read as </think> would be.
func (m *machine) kimi(i int, t tag.Info) action {
	open := t.Name == "open"
	name, ok, need := m.kimiHead(&t)
	switch {
	case need:
		return action{need: true}
	case !ok:
		return action{}
	case !open && name == "think":
		return m.unopenedThink(i, t)
	case !open, name == "response", name == "message":
		return m.drop(t)
	case name == "think":
		return m.think(t, "<|close|>think<|sep|>")
	case name == "tools":
		return action{reg: regionOf(&m.regions.xmlCall, xmlCall{start: i, kimi: true, closers: []string{"<|close|>tools<|sep|>"}}), call: true}
	case name == "call": // a call without its tools block
		return action{reg: regionOf(&m.regions.xmlCall, xmlCall{start: i, kimi: true, closers: []string{"<|close|>call<|sep|>"}}), call: true}
	}
	return action{}
}

// unopenedThink drops a </think> that closes a block the reply never opened.
func (m *machine) unopenedThink(i int, t tag.Info) action {
	return action{reg: regionOf(&m.regions.dropRegion, dropRegion{end: t.End,
		diag: &result.Diagnostic{Kind: result.DiagUnopenedThink, Offset: i, Message: "the reply closes a reasoning block it never opened: the model's template opens it; " +
			"parse with StartInThink (ptk parse --think) so its reasoning is not read as text or calls"}})}
}

// sectionOpener reads a token section opener (<|tool_calls_begin|> and the
// like): dropped before a call token, a call itself otherwise.
func (m *machine) sectionOpener(i int, t tag.Info) action {
	buf := m.buf
	j, need, _ := m.skipWS(t.End, maxLook)
	if need {
		return action{need: true}
	}
	if j < len(buf) && buf[j] == '<' {
		nt, ok, need := tag.Read(buf, j, m.eof)
		if need {
			return action{need: true}
		}
		if ok && nt.Name == "tool_call_begin" || ok && nt.Name == "tool_calls_section_end" || ok && nt.Name == "tool_calls_end" {
			return m.drop(t)
		}
	}
	if j >= len(buf) {
		return m.drop(t)
	}
	return m.tokenCall(i, t)
}

// tokenCall starts a call written in special tokens (Kimi, DeepSeek).
func (m *machine) tokenCall(i int, t tag.Info) action {
	return action{reg: regionOf(&m.regions.tokenCall, tokenCall{start: i, body: t.End}), call: true}
}

// callWrapper starts a call in a wrapper tag: <PTK_CALL>, <tool_call>,
// <minimax:tool_call>, <｜DSML｜function_calls> ..., closed by its own closer
// or any wrapper's.
func (m *machine) callWrapper(i int, t tag.Info) action {
	closers := wrapperClosers
	if t.Raw != t.Name && t.Attrs == "" && t.Eq == "" {
		closers = append([]string{"</" + string(bytes.ToLower(m.buf[i+1:t.End]))}, wrapperClosers...)
	}
	return m.wrapper(i, t, closers, false, false)
}

// endOfSequence drops Mistral's </s> when nothing but white space follows.
func (m *machine) endOfSequence(i int, t tag.Info) action {
	j, need, far := m.skipWS(t.End, maxLook)
	if need {
		return action{need: true}
	}
	if !far && j >= len(m.buf) {
		return m.drop(t)
	}
	return action{}
}

// glmInline starts GLM's call written without a wrapper,
// name<arg_key>k</arg_key><arg_value>v</arg_value>, claiming the name
// before the tag.
func (m *machine) glmInline(i int, t tag.Info) action {
	buf := m.buf
	k := i
	for k > m.textFrom && i-k < maxStealWord && (lenient.IsPyIdentByte(buf[k-1]) || buf[k-1] == '.' || buf[k-1] == '-') {
		k--
	}
	if k == i || i-k >= maxStealWord {
		return action{}
	}
	return action{reg: regionOf(&m.regions.glmInline, glmInline{start: k, at: i}), steal: i - k, call: true}
}

// strayCloser drops a closing tag left over after a call (as in
// "<function=x>...</function></tool_call>"); anywhere else it is text.
func (m *machine) strayCloser(i int, t tag.Info) action {
	if m.callEnd < 0 || i-m.callEnd > maxLook {
		return action{}
	}
	for k := m.callEnd; k < i; k++ {
		if !lenient.IsWS(m.buf[k]) {
			return action{}
		}
	}
	return m.drop(t)
}

// think starts a reasoning block that ends at one of closers.
func (m *machine) think(t tag.Info, closers ...string) action {
	return action{reg: regionOf(&m.regions.thinkRegion, thinkRegion{contentFrom: t.End, closers: closers})}
}

// xmlCall starts a call in XML written without a wrapper, when the tag names
// a tool and what follows it is a call's body: <parameter...>, JSON, or the
// closing tag. "The <function=...> syntax" in prose is text.
func (m *machine) xmlCall(i int, t tag.Info) action {
	name := t.Eq
	if name == "" {
		name, _ = tag.Attr(t.Attrs, "name")
	}
	if !tag.IsToolName(name) {
		return action{}
	}
	j, need, far := m.skipWS(t.End, maxLook)
	if need {
		return action{need: true}
	}
	if far || j >= len(m.buf) || m.buf[j] != '<' && m.buf[j] != '{' {
		return action{}
	}
	if m.buf[j] == '<' {
		nt, ok, need := tag.Read(m.buf, j, m.eof)
		if need {
			return action{need: true}
		}
		if !ok || !(nt.Name == "parameter" || nt.Name == "param" && nt.Attrs != "" || nt.Closing && (nt.Name == t.Name || nt.Name == "tool_call") ||
			markup.BareParam(nt) && t.Name == "function" && m.declared(name)) {
			return action{}
		}
	}
	closers := []string{"</function>", "</tool_call>"}
	if t.Name == "invoke" {
		closers = []string{"</invoke>"}
	}
	if t.Raw != t.Name {
		closers = append([]string{"</" + string(bytes.ToLower(m.buf[i+1:i+1+tag.NameLen(m.buf[i+1:t.End])]))}, closers...)
	}
	a := action{reg: regionOf(&m.regions.xmlCall, xmlCall{start: i, closers: closers}), call: true}
	if t.Name == "invoke" {
		a.steal = m.strayLine(i)
	}
	return a
}

// tagAfter reads the tag that follows white space from j; ok is false when
// something else comes first.
func (m *machine) tagAfter(j int) (t tag.Info, ok, need bool) {
	j, need, far := m.skipWS(j, maxLook)
	if need || far || j >= len(m.buf) || m.buf[j] != '<' {
		return tag.Info{}, false, need
	}
	return tag.Read(m.buf, j, m.eof)
}

// toolTag starts a call written as Cline and Roo Code ask for one, the
// tool's name as the tag and its parameters inside:
// <read_file><path>a.go</path></read_file>. Only for a declared tool, and
// only when a parameter's tag or the closer follows the opener.
func (m *machine) toolTag(i int, t tag.Info) action {
	if !m.cfg.Declared || !m.cfg.known(t.Raw, true) {
		return action{}
	}
	nt, ok, need := m.tagAfter(t.End)
	if need {
		return action{need: true}
	}
	if !ok || !markup.BareParam(nt) && !(nt.Closing && nt.Raw == t.Raw) {
		return action{}
	}
	return action{reg: regionOf(&m.regions.xmlCall, xmlCall{start: i, tool: t.Raw, body: t.End, closers: []string{"</" + strings.ToLower(t.Raw) + ">"}}), call: true}
}

// strayLine returns the length of a lone short word line (and the white
// space after it) just before i: the remnant of a wrapper token that a
// client mangled, as in Claude's leaked "count\n<invoke ...>" blocks.
func (m *machine) strayLine(i int) int {
	buf := m.buf
	k := i
	sawNL := false
	for k > m.textFrom && lenient.IsWS(buf[k-1]) && i-k < maxStealWord {
		if buf[k-1] == '\n' {
			sawNL = true
		}
		k--
	}
	if !sawNL {
		return 0
	}
	w := k
	for w > m.textFrom && k-w <= 24 && (buf[w-1] >= 'a' && buf[w-1] <= 'z' || buf[w-1] == '_') {
		w--
	}
	if w == k || k-w > 24 {
		return 0
	}
	if m.byteBefore(w) != '\n' {
		return 0
	}
	return i - w
}

// wrapper starts a call between tags, after checking what follows the opener
// is a call and not a mention of the tag in prose.
func (m *machine) wrapper(i int, t tag.Info, closers []string, weak, gemma bool) action {
	buf := m.buf
	j, need, far := m.skipWS(t.End, maxLook)
	if need {
		return action{need: true}
	}
	if far {
		return action{}
	}
	if j, need = m.skipMarkers(j); need {
		return action{need: true}
	}
	// Special tokens that open the body (InternLM's <|plugin|>) are not part of it.
	for j < len(buf) && buf[j] == '<' && !weak {
		nt, ok, need := tag.Read(buf, j, m.eof)
		if need {
			return action{need: true}
		}
		if !ok || !(nt.BarL && nt.BarR && !nt.Closing && (nt.Name == "plugin" || nt.Name == "interpreter")) {
			break
		}
		if j, need, far = m.skipWS(nt.End, maxLook); need {
			return action{need: true}
		} else if far {
			return action{}
		}
	}
	r := regionOf(&m.regions.tagCall, tagCall{start: i, body: j, closers: closers, weak: weak, gemma: gemma})
	a := action{reg: r, call: true}
	if j >= len(buf) {
		if weak {
			return action{}
		}
		return a // cut off right after the opener
	}
	c := buf[j]
	switch {
	case gemma:
		return a
	case c == '{':
		r.json, r.jsonAt = true, j
		return a
	case c == '[':
		k, need, _ := m.skipWS(j+1, maxLook)
		if need {
			return action{need: true}
		}
		if k < len(buf) && lenient.IsIdentStart(buf[k]) {
			if weak {
				return action{}
			}
			r.py, r.pyOpen, r.pyBracket = true, j, true // [f(a=1), g(b=2)]
			return a
		}
		r.json, r.jsonAt = true, j
		return a
	case c == '`' || c == '~':
		// ```json fence inside the tags
		k := j
		for k < len(buf) && buf[k] == c && k-j < maxTicks {
			k++
		}
		if k >= len(buf) && !m.eof {
			return action{need: true}
		}
		if k-j < 3 {
			return action{}
		}
		for k < len(buf) && buf[k] != '\n' && k-j < 64 {
			k++
		}
		if k >= len(buf) && !m.eof {
			return action{need: true}
		}
		k, need, _ = m.skipWS(k, maxLook)
		if need {
			return action{need: true}
		}
		if k < len(buf) && (buf[k] == '{' || buf[k] == '[') {
			r.json, r.jsonAt = true, k
			return a
		}
		return action{}
	case c == '<':
		if weak {
			return action{}
		}
		// <tool_call></tool_call> in prose names the tags; it is not a call
		nt, ok, need := tag.Read(buf, j, m.eof)
		if need {
			return action{need: true}
		}
		if ok && nt.Closing && (wrapperNames[nt.Name] || nt.Name == t.Name) {
			return action{}
		}
		if ok && !nt.Closing && !nt.BarL && !nt.BarR && wrapperNames[nt.Name] {
			// <tool_call>\n<tool_call>\n{...}: an opener written twice, or a
			// closer written as an opener; the call is the second's. Data
			// that holds it has it spelled differently too: what a reply
			// writes between the two would make the first the call's.
			if m.inert != nil {
				m.inert.hazards = append(m.inert.hazards, i)
			}
			d := m.drop(t)
			d.call = true
			return d
		}
		return a
	case lenient.IsIdentStart(c):
		if weak {
			return action{}
		}
		k := j
		for k < len(buf) && k-j < maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.' || buf[k] == '-' || buf[k] == ':') {
			k++
		}
		if k >= len(buf) && !m.eof {
			return action{need: true}
		}
		word := buf[j:k]
		if bytes.HasPrefix(word, []byte("call:")) {
			return a // Gemma-style call:name{...}
		}
		if string(word) == "function" && k < len(buf) && buf[k] == '=' {
			return a // Qwen3-Coder's <function=name> missing its '<'
		}
		if k < len(buf) && buf[k] == '(' {
			r.py, r.pyOpen = true, k // f(a=1), one call a line
			return a
		}
		n, need, _ := m.skipWS(k, maxLook)
		if need {
			return action{need: true}
		}
		if n < len(buf) && buf[n] == '{' {
			r.json, r.jsonAt, r.name = true, n, string(word)
			if word[len(word)-1] == ':' {
				r.name = "" // "Sure: {...}": prose before the call's JSON, not its name
			}
			return a
		}
		if n < len(buf) && buf[n] == '<' {
			return a // name<arg_key>..., or a name and the closer
		}
		if string(word) == "assistant" || string(word) == "commentary" {
			// a Harmony header inside the wrapper: assistant to=functions.x json {...}
			if name, jsonAt, ok, need := m.recipient(n); need {
				return action{need: true}
			} else if ok {
				r.json, r.jsonAt, r.name = true, jsonAt, name
				return a
			}
		}
		if n < len(buf) && n > k && lenient.IsIdentStart(buf[n]) {
			// name key</arg_key>: GLM's <arg_key> dropped (vLLM #47190)
			e := n
			for e < len(buf) && e-n < maxStealWord && lenient.IsPyIdentByte(buf[e]) {
				e++
			}
			if match, need := lenient.HasPrefixFold(buf, e, "</arg_key>", m.eof); need {
				return action{need: true}
			} else if match {
				return a
			}
		}
		return action{}
	}
	return action{}
}

func (m *machine) pythonTag(i int, t tag.Info) action {
	buf := m.buf
	j, need, far := m.skipWS(t.End, maxLook)
	if need {
		return action{need: true}
	}
	drop := action{reg: regionOf(&m.regions.dropRegion, dropRegion{end: t.End})}
	if far || j >= len(buf) {
		return drop
	}
	switch c := buf[j]; {
	case c == '{':
		return action{reg: regionOf(&m.regions.headerCall, headerCall{start: i, jsonAt: j, multi: true}), call: true}
	case c == '[':
		return action{reg: regionOf(&m.regions.pythonic, pythonic{start: j, bracket: true, strong: true}), call: true}
	case lenient.IsIdentStart(c):
		k := j
		for k < len(buf) && k-j < maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.') {
			k++
		}
		if k >= len(buf) && !m.eof {
			return action{need: true}
		}
		if k < len(buf) && buf[k] == '(' {
			return action{reg: regionOf(&m.regions.pythonic, pythonic{start: j, paren: k, strong: true}), call: true}
		}
	}
	return drop
}

// harmony reads a Harmony message header: <|start|>assistant<|channel|>
// commentary to=functions.name <|constrain|>json<|message|>.
func (m *machine) harmony(i int, t tag.Info) action {
	buf := m.buf
	f := tag.Finder{Pats: []string{"<|message|>"}, At: t.End, Limit: i + 2*maxLook}
	idx, _ := f.Find(buf, m.eof)
	drop := action{reg: regionOf(&m.regions.dropRegion, dropRegion{end: t.End})}
	if idx < 0 {
		if len(buf) < i+2*maxLook+len("<|message|>") && !m.eof {
			return action{need: true}
		}
		return drop
	}
	header := string(buf[t.End:idx])
	msg := idx + len("<|message|>")
	channel := ""
	if t.Name == "channel" {
		channel = firstWord(header)
	} else if k := bytes.Index([]byte(header), []byte("<|channel|>")); k >= 0 {
		channel = firstWord(header[k+len("<|channel|>"):])
	}
	recipient := ""
	if k := bytes.Index([]byte(header), []byte("to=")); k >= 0 {
		recipient = strings.TrimPrefix(firstWord(header[k+3:]), "functions.")
	}
	if recipient != "" {
		j, need, _ := m.skipWS(msg, maxLook)
		if need {
			return action{need: true}
		}
		if j < len(buf) && buf[j] == '{' {
			return action{reg: regionOf(&m.regions.headerCall, headerCall{start: i, jsonAt: j, name: recipient, ends: []string{"<|call|>", "<|end|>"}}), call: true}
		}
		return action{reg: regionOf(&m.regions.dropRegion, dropRegion{end: msg})}
	}
	if channel == "analysis" {
		return action{reg: regionOf(&m.regions.thinkRegion, thinkRegion{contentFrom: msg,
			closers: []string{"<|end|>", "<|start|>", "<|channel|>", "<|return|>"},
			keep:    []bool{false, true, true, false}})}
	}
	return action{reg: regionOf(&m.regions.dropRegion, dropRegion{end: msg})}
}

func firstWord(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	j := i
	for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '<' && s[j] != '\n' {
		j++
	}
	return s[i:j]
}

func (m *machine) recognizeBracket(i int) action {
	buf := m.buf
	if match, need := lenient.HasPrefixFold(buf, i, "[tool_calls]", m.eof); need {
		return action{need: true}
	} else if match {
		return m.mistral(i, i+len("[tool_calls]"))
	}
	if match, need := lenient.HasPrefixFold(buf, i, "[think]", m.eof); need {
		return action{need: true}
	} else if match { // Magistral
		return action{reg: regionOf(&m.regions.thinkRegion, thinkRegion{contentFrom: i + len("[think]"), closers: []string{"[/think]"}})}
	}
	j, need, far := m.skipWS(i+1, maxStealWord)
	if need {
		return action{need: true}
	}
	if far || j >= len(buf) {
		return action{}
	}
	switch c := buf[j]; {
	case c == '{':
		// Firefunction writes functools[{...}]
		if i-m.textFrom >= len("functools") && string(buf[i-len("functools"):i]) == "functools" {
			return action{reg: regionOf(&m.regions.headerCall, headerCall{start: i, jsonAt: i}), steal: len("functools"), call: true}
		}
		if !m.standsAlone(i) {
			return action{}
		}
		return action{reg: regionOf(&m.regions.bareJSON, bareJSON{start: i, sepFrom: -1}), call: true}
	case lenient.IsIdentStart(c):
		k := j
		for k < len(buf) && k-j < 2*maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.' || buf[k] == '-') {
			k++
		}
		if k >= len(buf) && !m.eof {
			return action{need: true}
		}
		if k < len(buf) && buf[k] == '(' && (m.standsAlone(i) || m.listed && m.cfg.Declared && m.cfg.known(string(buf[j:k]), true)) {
			return action{reg: regionOf(&m.regions.pythonic, pythonic{start: i, bracket: true}), call: true}
		}
		if k < len(buf) && buf[k] == ']' && j == i+1 {
			return m.bracketMarker(i, buf[j:k], k+1)
		}
		if a, ok := m.namedList(i, j); ok {
			return a
		}
	case c == '\'' || c == '"':
		// calls written as strings: ['f(a=1)', 'g(b=2)']
		if !m.cfg.Declared {
			return action{}
		}
		name, paren, need := m.quotedCallAt(j)
		if need {
			return action{need: true}
		}
		if paren < 0 {
			if a, ok := m.namedList(i, j); ok {
				return a
			}
			return action{}
		}
		if !(m.standsAlone(i) || m.listed) || !m.cfg.known(name, false) {
			return action{}
		}
		return action{reg: regionOf(&m.regions.quotedCalls, quotedCalls{start: i, bracket: true, at: j}), call: true}
	case c == '[' || c == '(':
		if a, ok := m.namedList(i, j); ok {
			return a
		}
	}
	return action{}
}

// bracketMarker reads a call between bracket markers: [tool]name[args]{...}[end]
// when name is a declared tool, and LM Studio's [TOOL_REQUEST]{...}
// [END_TOOL_REQUEST]. w is the marker's word; after is the byte after it.
func (m *machine) bracketMarker(i int, w []byte, after int) action {
	buf := m.buf
	lw := string(bytes.ToLower(w))
	ends := []string{"[end]", "[/" + lw + "]", "[end_" + lw + "]"}
	n, need, far := m.skipWS(after, maxLook)
	if need {
		return action{need: true}
	}
	if far || n >= len(buf) {
		return action{}
	}
	if buf[n] == '{' {
		if lw != "tool_request" {
			return action{}
		}
		return action{reg: regionOf(&m.regions.headerCall, headerCall{start: i, jsonAt: n, ends: ends}), call: true}
	}
	if !lenient.IsIdentStart(buf[n]) || !m.cfg.Declared {
		return action{}
	}
	k := n
	for k < len(buf) && k-n < 2*maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.' || buf[k] == '-') {
		k++
	}
	if k >= len(buf) && !m.eof {
		return action{need: true}
	}
	name := string(buf[n:k])
	if !m.cfg.known(name, false) {
		return action{}
	}
	if k < len(buf) && buf[k] == '[' { // a marker before the arguments: [args]
		e := k + 1
		for e < len(buf) && e-k < 32 && lenient.IsPyIdentByte(buf[e]) {
			e++
		}
		if e >= len(buf) && !m.eof {
			return action{need: true}
		}
		if e >= len(buf) || buf[e] != ']' || e == k+1 {
			return action{}
		}
		k = e + 1
	}
	o, need, far := m.skipWS(k, maxLook)
	if need {
		return action{need: true}
	}
	if far || o >= len(buf) || buf[o] != '{' {
		return action{}
	}
	return action{reg: regionOf(&m.regions.headerCall, headerCall{start: i, jsonAt: o, name: name, ends: ends}), call: true}
}

// responseTag drops a <response> wrapper around calls: the opener when a
// tag follows it, the closer right after a call.
func (m *machine) responseTag(i int, t tag.Info) action {
	if t.Closing {
		if m.callEnd >= 0 && m.callEnd <= i && isAllSpace(m.buf[m.callEnd:i]) {
			a := m.drop(t)
			a.call = true // it may share a code fence with the calls
			return a
		}
		return action{}
	}
	nt, ok, need := m.tagAfter(t.End)
	if need {
		return action{need: true}
	}
	if !ok || nt.Closing || !(wrapperNames[nt.Name] || nt.Name == "function" || nt.Name == "invoke") {
		return action{}
	}
	a := m.drop(t)
	a.call = true
	return a
}

// mistral reads what follows [TOOL_CALLS]: a JSON list of calls, or
// name[ARGS]{...} (with an optional [CALL_ID]id).
func (m *machine) mistral(i, e int) action {
	buf := m.buf
	j, need, far := m.skipWS(e, maxLook)
	if need {
		return action{need: true}
	}
	drop := action{reg: regionOf(&m.regions.dropRegion, dropRegion{end: e})}
	if far {
		return drop
	}
	if j >= len(buf) {
		return action{reg: regionOf(&m.regions.badCall, badCall{start: i, end: len(buf), kind: result.DiagTruncated, msg: "[TOOL_CALLS] with no call after it"}), call: true}
	}
	c := buf[j]
	if c == '[' || c == '{' {
		return action{reg: regionOf(&m.regions.headerCall, headerCall{start: i, jsonAt: j}), call: true}
	}
	args := 0
	if lenient.IsIdentStart(c) {
		if args = m.mistralArgs(j); args < 0 {
			return action{need: true}
		}
	}
	if args == 0 {
		q := m.jsonOnLine(j)
		if q < 0 {
			return action{need: true}
		}
		if q > 0 {
			// [TOOL_CALLS] some words [{...}]: the words are text, the JSON the calls
			return action{reg: regionOf(&m.regions.headerCall, headerCall{start: i, jsonAt: q, textBefore: [2]int{j, q}}), call: true}
		}
	}
	if !lenient.IsIdentStart(c) {
		return drop
	}
	k := j
	for k < len(buf) && k-j < 2*maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.' || buf[k] == '-') {
		k++
	}
	if k >= len(buf) {
		if !m.eof {
			return action{need: true}
		}
		name := string(buf[j:k])
		return action{reg: regionOf(&m.regions.badCall, badCall{start: i, end: k, name: name, kind: result.DiagTruncated, msg: "the call to " + name + " has no arguments ([ARGS] missing)"}), call: true}
	}
	name := string(buf[j:k])
	n := k
	if match, need := lenient.HasPrefixFold(buf, n, "[call_id]", m.eof); need {
		return action{need: true}
	} else if match {
		n += len("[call_id]")
		for n < len(buf) && buf[n] != '[' && n-k < maxLook {
			n++
		}
		if n >= len(buf) && !m.eof {
			return action{need: true}
		}
	}
	if match, need := lenient.HasPrefixFold(buf, n, "[args]", m.eof); need {
		return action{need: true}
	} else if match {
		n += len("[args]")
	}
	n, need, far = m.skipWS(n, maxLook)
	if need {
		return action{need: true}
	}
	if far {
		return drop
	}
	if n < len(buf) && buf[n] == '{' {
		return action{reg: regionOf(&m.regions.headerCall, headerCall{start: i, jsonAt: n, name: name}), call: true}
	}
	if n >= len(buf) {
		return action{reg: regionOf(&m.regions.badCall, badCall{start: i, end: n, name: name, kind: result.DiagTruncated, msg: "the call to " + name + " has no arguments"}), call: true}
	}
	return drop
}

// jsonOnLine finds the start of a JSON list of calls or a call object later
// on the line that starts at j: `[{` or `{"`, within maxLook bytes; 0 if
// none, -1 if the input ends before it can tell.
func (m *machine) jsonOnLine(j int) int {
	buf := m.buf
	k := j
	for ; k < len(buf) && k-j < maxLook && buf[k] != '\n'; k++ {
		if buf[k] != '[' && buf[k] != '{' {
			continue
		}
		if k+2 >= len(buf) && !m.eof {
			return -1
		}
		switch {
		case buf[k] == '[' && k+1 < len(buf) && buf[k+1] == '{',
			buf[k] == '[' && k+2 < len(buf) && buf[k+1] == ' ' && buf[k+2] == '{',
			buf[k] == '{' && k+1 < len(buf) && buf[k+1] == '"':
			return k
		}
	}
	if k >= len(buf) && k-j < maxLook && !m.eof {
		return -1
	}
	return 0
}

// mistralArgs says whether the name at j is followed by [ARGS], [CALL_ID]
// or '{' (Mistral's name[ARGS]{...}): 1 yes, 0 no, -1 the input ends before
// it can tell.
func (m *machine) mistralArgs(j int) int {
	buf := m.buf
	k := j
	for k < len(buf) && k-j < 2*maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.' || buf[k] == '-') {
		k++
	}
	if k >= len(buf) {
		if m.eof {
			return 0
		}
		return -1
	}
	if buf[k] == '{' {
		return 1
	}
	a, need1 := lenient.HasPrefixFold(buf, k, "[args]", m.eof)
	c, need2 := lenient.HasPrefixFold(buf, k, "[call_id]", m.eof)
	switch {
	case a || c:
		return 1
	case need1 || need2:
		return -1
	}
	return 0
}

// badCall records a call that cannot run and skips its text.
type badCall struct {
	start, end int
	name, msg  string
	kind       result.DiagKind
}

func (r *badCall) advance(m *machine) bool {
	m.addCalls([]RawCall{{Name: r.name, Offset: r.start, Err: r.kind, ErrMsg: r.msg}})
	m.pos = r.end
	return true
}

func (m *machine) recognizeBrace(i int) action {
	buf := m.buf
	j, need, far := m.skipWS(i+1, maxStealWord)
	if need {
		return action{need: true}
	}
	if far || j >= len(buf) {
		return action{}
	}
	if c := buf[j]; (c == '"' || c == '\'' || lenient.IsIdentStart(c)) && m.standsAlone(i) {
		return action{reg: regionOf(&m.regions.bareJSON, bareJSON{start: i, sepFrom: -1}), call: true}
	}
	return action{}
}

// standsAlone reports whether a call written without markers may start at
// buf[i]: at the start of a line (not indented as a code block), or after a
// colon or the end of a sentence — not in the middle of one ("I called
// {...} yesterday"), not after a JSON key ("tool_calls": [...]).
func (m *machine) standsAlone(i int) bool {
	if i == m.bareRetry || m.firstLine(i) {
		return true
	}
	k := i
	spaces := 0
	for k > m.lineStart && k > 0 && (m.buf[k-1] == ' ' || m.buf[k-1] == '\t') && spaces <= maxStealWord {
		k--
		spaces++
		if m.buf[k] == '\t' {
			spaces += 3
		}
	}
	if k <= m.lineStart || k == 0 {
		// four spaces of indent make a Markdown code block, but not inside
		// a fence, where code is indented as code
		return spaces < 4 || m.fence != nil
	}
	if spaces > maxStealWord {
		return false
	}
	switch m.buf[k-1] {
	case '.', '!', '?':
		return true
	case ':':
		return k < 2 || m.buf[k-2] != '"'
	case '>': // after reasoning or a special token: </think>{...}, <|...|>{...}
		return bytes.HasSuffix(m.buf[:k], []byte("|>")) || lenient.HasSuffixFold(m.buf[:k], "</think>") || lenient.HasSuffixFold(m.buf[:k], "</thinking>")
	}
	return false
}

func (m *machine) recognizeTicks(i int) action {
	buf := m.buf
	ch := buf[i] // '`' or '~'
	n := i
	for n < len(buf) && buf[n] == ch && n-i <= maxTicks {
		n++
	}
	if n-i > maxTicks {
		return action{} // a wall of backticks is text
	}
	if n >= len(buf) && !m.eof {
		return action{need: true}
	}
	ticks := n - i
	if f := m.fence; f != nil && !f.closed {
		if ch == f.char && ticks >= f.ticks {
			return action{reg: regionOf(&m.regions.fenceClose, fenceClose{end: n}), call: true}
		}
		if ch == '~' {
			return action{}
		}
		return action{reg: regionOf(&m.regions.inlineCode, inlineCode{start: i, ticks: ticks})}
	}
	if ticks < 3 {
		if ch == '~' {
			return action{}
		}
		return action{reg: regionOf(&m.regions.inlineCode, inlineCode{start: i, ticks: ticks})}
	}
	atLine := m.atLineStart(i)
	// info string: ```json, ```tool_code
	k := n
	for k < len(buf) && k-n < 32 && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '+' || buf[k] == '-' || buf[k] == '.') {
		k++
	}
	if k >= len(buf) && !m.eof {
		return action{need: true}
	}
	info := buf[n:k]
	for k < len(buf) && (buf[k] == ' ' || buf[k] == '\t') {
		k++
	}
	content := k
	if k < len(buf) && buf[k] == '\n' {
		content = k + 1
	}
	j, need, far := m.skipWS(content, maxLook)
	if need {
		return action{need: true}
	}
	md := bytes.EqualFold(info, []byte("markdown")) || bytes.EqualFold(info, []byte("md"))
	text := action{reg: regionOf(&m.regions.textFence, textFence{char: ch, ticks: ticks, atLine: atLine, pos: n, markdown: md})}
	if far || j >= len(buf) {
		return text
	}
	toolCode := bytes.EqualFold(info, []byte("tool_code")) || bytes.EqualFold(info, []byte("tool_call"))
	switch c := buf[j]; {
	case c == '{' || c == '[' || c == '<' || c == '>',
		// a name: name(...) or GLM's name<arg_key>, in a fence that could hold them
		lenient.IsIdentStart(c) && (len(info) == 0 || toolCode || bytes.EqualFold(info, []byte("python")) || bytes.EqualFold(info, []byte("py"))):
		return action{reg: regionOf(&m.regions.fenceOpen, fenceOpen{start: i, char: ch, ticks: ticks, content: content, atLine: atLine, toolCode: toolCode}), call: true}
	}
	return text
}

func (m *machine) recognizeArrows(i int) action {
	buf := m.buf
	match, need := lenient.HasPrefixFold(buf, i, ">>>", m.eof)
	if need {
		return action{need: true}
	}
	if !match {
		return action{}
	}
	j := i + 3
	k := j
	for k < len(buf) && k-j < maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.' || buf[k] == '-') {
		k++
	}
	if k >= len(buf) && !m.eof {
		return action{need: true}
	}
	if k == j || k >= len(buf) || buf[k] != '\n' {
		return action{}
	}
	name := string(buf[j:k])
	if name == "all" {
		return action{reg: regionOf(&m.regions.dropRegion, dropRegion{end: k + 1})}
	}
	n, need, _ := m.skipWS(k+1, maxLook)
	if need {
		return action{need: true}
	}
	if n < len(buf) && buf[n] == '{' {
		return action{reg: regionOf(&m.regions.headerCall, headerCall{start: i, jsonAt: n, name: name}), call: true}
	}
	if (name == "python" || name == "ipython") && n < len(buf) && m.declared(name) {
		// functionary's python recipient takes raw code
		return action{reg: regionOf(&m.regions.rawCode, rawCode{start: i, body: k + 1, name: name}), call: true}
	}
	return action{}
}

// recognizeParen handles name(...) on a line of its own, where name is a
// declared tool (or inside a ```tool_code fence).
func (m *machine) recognizeParen(i int) action {
	toolCode := m.fence != nil && m.fence.toolCode
	if !m.cfg.Declared && !toolCode {
		return action{}
	}
	buf := m.buf
	k := i
	for k > m.textFrom && i-k < 2*maxStealWord && (lenient.IsPyIdentByte(buf[k-1]) || buf[k-1] == '.') {
		k--
	}
	if k == i && !toolCode {
		return m.callTuple(i)
	}
	if k == i || !lenient.IsIdentStart(buf[k]) || i-k >= 2*maxStealWord {
		return action{}
	}
	name := string(buf[k:i])
	if !m.lineStartAt(k) {
		// a call written as a string alone on its line: 'f(a=1)'
		if q := k - 1; q >= m.textFrom && (buf[q] == '\'' || buf[q] == '"') && m.lineStartAt(q) && !toolCode && m.cfg.known(name, false) {
			return action{reg: regionOf(&m.regions.quotedCalls, quotedCalls{start: q, at: q}), steal: i - q, call: true}
		}
		return action{}
	}
	if !toolCode {
		if !m.cfg.known(name, false) {
			return action{}
		}
	}
	return action{reg: regionOf(&m.regions.pythonic, pythonic{start: k, paren: i, strong: toolCode}), steal: i - k, call: true}
}

// roles are the roles a message header names.
var roles = map[string]bool{"assistant": true, "user": true, "system": true, "tool": true, "ipython": true, "model": true}

// messageHeader reads a message's header: ChatML's <|im_start|>role, Llama
// 3's <|start_header_id|>role<|end_header_id|>, Gemma's <start_of_turn>role.
// Before anything the reply wrote it is the reply's own header, dropped;
// after, the reply has gone on past the end of its turn, and the rest is a
// conversation the model made up. <|im_start|> without a role is no header
// (Hermes 2 Theta writes it around its calls): the token is dropped.
func (m *machine) messageHeader(i int, t tag.Info) action {
	buf := m.buf
	j := t.End
	k := j
	for k < len(buf) && k-j < 12 && buf[k] >= 'a' && buf[k] <= 'z' {
		k++
	}
	if k >= len(buf) && !m.eof {
		return action{need: true}
	}
	if !roles[string(buf[j:k])] {
		// the token alone is no header, and never text
		return m.drop(t)
	}
	end := k
	if match, need := lenient.HasPrefixFold(buf, k, "<|end_header_id|>", m.eof); need {
		return action{need: true}
	} else if match {
		end = k + len("<|end_header_id|>")
	} else if t.Name == "start_header_id" || k < len(buf) && !lenient.IsWS(buf[k]) && buf[k] != '<' {
		return m.drop(t) // <|im_start|>users...: a word, not a role
	}
	if m.inert != nil {
		// Data repeated in a reply would end the reply here: what the model
		// writes after it, calls included, would be read as nothing.
		m.inert.hazards = append(m.inert.hazards, i)
		return action{}
	}
	if m.wroteSomething(i) {
		if !m.lineStartAt(i) && m.byteBefore(i) != '>' {
			return action{} // "models write <|im_start|>user": a mention
		}
		return action{reg: regionOf(&m.regions.pastTurn, pastTurn{start: i, header: string(buf[i:end])})}
	}
	return action{reg: regionOf(&m.regions.dropRegion, dropRegion{end: end})}
}

// wroteSomething reports whether the reply wrote anything before buf[i]:
// a call, reasoning, or text that is not white space.
func (m *machine) wroteSomething(i int) bool {
	if m.nextIndex() > 0 || len(m.reasoning) > 0 || m.fence != nil {
		return true
	}
	for m.spaceUpTo < len(m.text) {
		if !isAllSpace(m.text[m.spaceUpTo : m.spaceUpTo+1]) {
			return true
		}
		m.spaceUpTo++
	}
	return !isAllSpace(m.buf[m.textFrom:i])
}

// namedList recognizes a list that names a declared tool first and then
// gives its arguments: ['f', {'a': 1}], [f, a=1], and lists of such pairs,
// [('f', {'a': 1}), ('g', {'b': 2})] — buf[i] is the '[' and buf[j] the
// first byte inside it. ok is false when it is not one; a need for more
// input is an action of its own.
func (m *machine) namedList(i, j int) (a action, ok bool) {
	if !m.cfg.Declared {
		return action{}, false
	}
	buf := m.buf
	k := j
	if buf[k] == '[' || buf[k] == '(' {
		n, need, far := m.skipWS(k+1, maxStealWord)
		if need {
			return action{need: true}, true
		}
		if far || n >= len(buf) {
			return action{}, false
		}
		k = n
	}
	q := byte(0)
	if buf[k] == '\'' || buf[k] == '"' {
		q = buf[k]
		k++
	}
	n := k
	for n < len(buf) && n-k <= 2*maxStealWord && (lenient.IsPyIdentByte(buf[n]) || buf[n] == '.') {
		n++
	}
	if n >= len(buf) && !m.eof {
		return action{need: true}, true
	}
	if n == k || !lenient.IsIdentStart(buf[k]) {
		return action{}, false
	}
	name := string(buf[k:n])
	if q != 0 {
		if n >= len(buf) || buf[n] != q {
			return action{}, false
		}
		n++
	}
	c, need, far := m.skipWS(n, maxStealWord)
	if need {
		return action{need: true}, true
	}
	if far || c >= len(buf) || buf[c] != ',' || !m.cfg.known(name, false) || !(m.standsAlone(i) || m.listed) {
		return action{}, false
	}
	return action{reg: regionOf(&m.regions.namedCalls, namedCalls{start: i}), call: true}, true
}

// callTuple recognizes calls in a tuple on a line of their own,
// (f(a=1), g(b=2)), as DBRX writes them: buf[i] is the '('.
func (m *machine) callTuple(i int) action {
	if !m.cfg.Declared || !m.lineStartAt(i) {
		return action{}
	}
	buf := m.buf
	j, need, far := m.skipWS(i+1, maxStealWord)
	if need {
		return action{need: true}
	}
	if far || j >= len(buf) || !lenient.IsIdentStart(buf[j]) {
		return action{}
	}
	k := j
	for k < len(buf) && k-j < 2*maxStealWord && (lenient.IsPyIdentByte(buf[k]) || buf[k] == '.') {
		k++
	}
	if k >= len(buf) && !m.eof {
		return action{need: true}
	}
	if k >= len(buf) || buf[k] != '(' || !m.cfg.known(string(buf[j:k]), false) {
		return action{}
	}
	// The tuple closes on its line, within maxTupleLine bytes: an opener
	// that does not is prose, decided here once, not by a region that
	// reads to the end of the reply from each line's '('.
	e := i
	for e < len(buf) && buf[e] != '\n' && e-i < maxTupleLine {
		e++
	}
	if e >= len(buf) && !m.eof && e-i < maxTupleLine {
		return action{need: true}
	}
	if e-i >= maxTupleLine {
		return action{}
	}
	if st := lenient.NewPyScan(i).Feed(buf[:e], true); st != lenient.Done {
		return action{}
	}
	return action{reg: regionOf(&m.regions.pythonic, pythonic{start: i, bracket: true}), call: true}
}

// maxTupleLine bounds the line a tuple of calls is looked for on.
const maxTupleLine = 4096
