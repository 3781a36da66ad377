package protocol

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"unicode/utf8"

	"github.com/ptkit/ptk"
)

// Formatter writes the protocol text a model reads.
type Formatter interface {
	// SystemPrompt returns the system prompt: the caller's own instructions
	// (may be empty), then the protocol instructions, then the tool definitions.
	SystemPrompt(instructions string, tools []ptk.ToolInfo) string
	// Tools renders tool definitions for a model.
	Tools(tools []ptk.ToolInfo) string
	// Calls renders an assistant turn's calls the way the model is taught to
	// write them, to replay the turn to a chat model.
	Calls(calls []ptk.Call) string
	// Results renders the results of one turn's calls, in call order, as the
	// text of one message.
	Results(results []ptk.Result) string
	// Transcript flattens messages already in the protocol's form (a system
	// prompt from SystemPrompt, user turns, the model's replies, results from
	// Results) into one prompt for a text-only model, ending with the cue for
	// the assistant's next turn.
	Transcript(msgs []ptk.Message) string
	// Conversation flattens a conversation into one prompt for a text-only
	// model (no chat API), ending with the cue for the assistant's next turn.
	Conversation(msgs []ptk.Message, tools []ptk.ToolInfo) string
}

// PTK is the [Formatter] of the PTK protocol, v1. Its zero value is ready to
// use; it holds no state, so one value may be shared by any number of
// goroutines.
//
// What it writes:
//
//   - The system prompt (prompt.tmpl): the caller's instructions, then the
//     protocol (a call is {"tool": …, "args": …, "reasoning": …} between
//     <PTK_CALL> tags, with an example built from the first tool's schema),
//     then the tool definitions.
//   - Tool definitions: per tool a "## name" line, its description, then one
//     line per parameter, in the schema's order:
//     "- name (type, required|optional, default D, constraints): description".
//     Nested objects, and the objects inside arrays, list their fields below,
//     indented by two spaces, down to six levels. A tool without parameters
//     says "No arguments.".
//   - Results: one <PTK_RESULT id="…" tool="…"> element per result
//     (<PTK_ERROR …> for an error), separated by blank lines.
//   - A flattened conversation: turns headed "SYSTEM:", "USER:", "ASSISTANT:"
//     and "TOOL:", each header alone on its line, ending with the cue
//     "ASSISTANT:\n".
//
// Data never reads as protocol: every text that comes from data (message
// contents, tool results, tool descriptions) goes through [Neutralize], and
// in a flattened conversation no line of data can pass for a turn header.
type PTK struct{}

var _ Formatter = PTK{}

//go:embed prompt.tmpl
var formatPromptText string

var formatPromptTmpl = template.Must(template.New("prompt.tmpl").Parse(formatPromptText))

// SystemPrompt returns the system prompt: instructions (trimmed; omitted when
// empty), the protocol instructions with an example call of the first tool,
// then the definitions of tools, as [PTK.Tools] renders them. The
// instructions are the caller's and are written as given.
func (p PTK) SystemPrompt(instructions string, tools []ptk.ToolInfo) string {
	data := struct {
		Instructions, Example, Tools string
	}{
		Instructions: strings.TrimSpace(instructions),
		Example:      defExampleCall(tools),
		Tools:        p.Tools(tools),
	}
	var b strings.Builder
	// The template is fixed and its data are strings: it cannot fail.
	_ = formatPromptTmpl.Execute(&b, data)
	return strings.TrimRight(b.String(), "\n")
}

// Tools renders the definitions of tools, in the order given, separated by
// blank lines:
//
//	## read_file
//	Read a text file from the workspace.
//	- path (string, required): File path relative to the workspace.
//	- offset (integer, optional, default 1, >= 1): First line to read.
//	- unit ("celsius" | "fahrenheit", optional)
//	- filter (object, optional):
//	  - status (string, required)
//	  - tags (array of string, optional)
//
// Parameters follow the order of the schema's properties. Types are shown as
// written, except the non-standard names dict (object), float (number) and
// tuple (array); an enum or const shows its values, anyOf/oneOf and a list of
// types show "a | b", an array "array of <item type>", a map
// "object of <value type>". A property is required when its object lists it
// in "required" (or it says "required": true) and it does not say
// "optional": true. $ref is followed inside the schema (a cycle shows the
// referenced name), allOf is merged. Nesting deeper than six levels is shown
// as "- …". A tool whose schema is not valid JSON is shown with "(parameters
// schema unreadable)". The text is [Neutralize]d.
func (PTK) Tools(tools []ptk.ToolInfo) string {
	var b strings.Builder
	for i, t := range tools {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(toolDef(t))
	}
	return Neutralize(strings.TrimRight(b.String(), "\n"))
}

// renderCache keeps text rendered from tool definitions: a program sends
// the same tools in every run, and decoding a schema costs more than the
// rest of a system prompt. Bounded: when full it starts again.
type renderCache struct {
	sync.Mutex
	m map[string]string
}

const renderCacheMax = 1024

// get returns the text kept for key, or renders it and keeps it.
func (c *renderCache) get(key string, render func() string) string {
	c.Lock()
	s, ok := c.m[key]
	c.Unlock()
	if ok {
		return s
	}
	s = render()
	c.Lock()
	if c.m == nil || len(c.m) >= renderCacheMax {
		c.m = make(map[string]string)
	}
	c.m[key] = s
	c.Unlock()
	return s
}

// renderedDefs keeps tool definitions as rendered, exampleCalls the
// example calls of the system prompt.
var renderedDefs, exampleCalls renderCache

// toolDef returns the rendered definition of t.
func toolDef(t ptk.ToolInfo) string {
	return renderedDefs.get(t.Name+"\x00"+t.Description+"\x00"+string(t.Parameters), func() string {
		var b strings.Builder
		writeToolDef(&b, t)
		return b.String()
	})
}

// Calls renders an assistant turn's calls the way the model is taught to
// write them: one <PTK_CALL> block per call, in order, each holding
// {"tool": …, "args": …, "reasoning": …} on one line ("reasoning" only when
// the call has one). Args are written as they are (nil as {}); args spread over
// several lines are compacted when they are valid JSON. A protocol tag inside
// the JSON is made inert by writing its "<" as \u003c, which leaves the JSON
// value unchanged. Chat models need it to replay an assistant turn;
// [PTK.Conversation] uses it for the assistant turns it flattens.
func (PTK) Calls(calls []ptk.Call) string {
	var b strings.Builder
	var obj []byte
	for i, c := range calls {
		if i > 0 {
			b.WriteByte('\n')
		}
		obj = append(obj[:0], `{"tool": `...)
		obj = formatQuote(obj, c.Tool)
		obj = append(obj, `, "args": `...)
		obj = appendCallArgs(obj, c.Args)
		if c.Reasoning != "" {
			obj = append(obj, `, "reasoning": `...)
			obj = formatQuote(obj, c.Reasoning)
		}
		obj = append(obj, '}')
		b.WriteString("<PTK_CALL>\n")
		b.WriteString(neutralizeWith(string(obj), `\u003c`))
		b.WriteString("\n</PTK_CALL>")
	}
	return b.String()
}

// appendCallArgs appends raw call arguments: as they are, trimmed, or
// compacted when they span lines and are valid JSON.
func appendCallArgs(dst []byte, args json.RawMessage) []byte {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return append(dst, "{}"...)
	}
	if bytes.ContainsAny(args, "\r\n") && json.Valid(args) {
		var buf bytes.Buffer
		if json.Compact(&buf, args) == nil {
			return append(dst, buf.Bytes()...)
		}
	}
	return append(dst, args...)
}

// Results renders the results of one turn's calls, in the order given, as one
// message: per result a <PTK_RESULT id="…" tool="…"> element, or <PTK_ERROR …>
// when IsError is set, its content on the lines between the tags, results
// separated by a blank line:
//
//	<PTK_RESULT id="call_1" tool="read_file">
//	module example.com/m
//	</PTK_RESULT>
//
//	<PTK_ERROR id="call_2" tool="grep">
//	invalid pattern
//	</PTK_ERROR>
//
// An attribute is left out when its value is empty; in attribute values
// & " < are written &amp; &quot; &lt; and line breaks as spaces. The content is
// [Neutralize]d; empty content gives an empty element (<PTK_RESULT …></PTK_RESULT>).
// A final newline of the content is not doubled.
func (PTK) Results(results []ptk.Result) string {
	return formatResults(results, false)
}

func formatResults(results []ptk.Result, escapeHeaders bool) string {
	var b strings.Builder
	for i, r := range results {
		if i > 0 {
			b.WriteString("\n\n")
		}
		tag := "PTK_RESULT"
		if r.IsError {
			tag = "PTK_ERROR"
		}
		b.WriteByte('<')
		b.WriteString(tag)
		writeResultAttr(&b, "id", r.CallID)
		writeResultAttr(&b, "tool", r.Tool)
		b.WriteByte('>')
		content := Neutralize(r.Content)
		if escapeHeaders {
			content = escapeTurnHeaders(content)
		}
		if content != "" {
			b.WriteByte('\n')
			b.WriteString(content)
			if !strings.HasSuffix(content, "\n") {
				b.WriteByte('\n')
			}
		}
		b.WriteString("</")
		b.WriteString(tag)
		b.WriteByte('>')
	}
	return b.String()
}

// writeResultAttr writes ` name="value"`, escaped, unless value is empty.
func writeResultAttr(b *strings.Builder, name, value string) {
	if value == "" {
		return
	}
	b.WriteByte(' ')
	b.WriteString(name)
	b.WriteString(`="`)
	for _, r := range value {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '<':
			b.WriteString("&lt;")
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// The headers of a flattened conversation's turns.
const (
	turnHeaderSystem    = "SYSTEM:"
	turnHeaderUser      = "USER:"
	turnHeaderAssistant = "ASSISTANT:"
	turnHeaderTool      = "TOOL:"
)

// Conversation flattens msgs into one prompt for a text-only model:
//
//	SYSTEM:
//	<system prompt>
//
//	USER:
//	<content>
//
//	ASSISTANT:
//	<content>
//	<PTK_CALL>
//	{"tool": "read_file", "args": {"path": "go.mod"}}
//	</PTK_CALL>
//
//	TOOL:
//	<PTK_RESULT id="call_1" tool="read_file">
//	…
//	</PTK_RESULT>
//
//	ASSISTANT:
//
// Each turn is a header line followed by its text, turns are separated by a
// blank line, and the prompt ends with the cue "ASSISTANT:" and a newline, so
// the model's first token is the text of its turn. The first turn is always
// SYSTEM: [PTK.SystemPrompt] with the content of msgs[0] as instructions when
// it is a system message, with none otherwise, so the protocol and the tools
// appear exactly once. An assistant turn is its text followed by its calls
// ([PTK.Calls]); consecutive tool messages form one TOOL turn holding their
// results ([PTK.Results]); a message of any other role is a USER turn.
// Contents are trimmed of blank lines at both ends.
//
// No data can forge a turn or a call. All contents are [Neutralize]d, and in
// every turn a line that starts, after spaces or tabs, with a role name
// (system, user, assistant or tool, in any letter case) followed by optional
// spaces or tabs and ":" is escaped with a backslash at its start:
// "assistant: hi" becomes "\assistant: hi". Lines end at \n, \r, U+0085,
// U+2028 and U+2029. A caller that stops generation at the next turn should
// use "\nUSER:" and "\nTOOL:" as stop sequences.
func (p PTK) Conversation(msgs []ptk.Message, tools []ptk.ToolInfo) string {
	var b strings.Builder
	instructions := ""
	if len(msgs) > 0 && msgs[0].Role == ptk.RoleSystem {
		instructions = msgs[0].Content
		msgs = msgs[1:]
	}
	writeConversationTurn(&b, turnHeaderSystem, escapeTurnHeaders(p.SystemPrompt(Neutralize(instructions), tools)))
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case ptk.RoleTool:
			var results []ptk.Result
			results, i = ToolTurn(msgs, i)
			writeConversationTurn(&b, turnHeaderTool, formatResults(results, true))
		case ptk.RoleAssistant:
			text := conversationText(m.Content)
			if calls := p.Calls(m.Calls); calls != "" {
				if text != "" {
					text += "\n"
				}
				text += escapeTurnHeaders(calls)
			}
			writeConversationTurn(&b, turnHeaderAssistant, text)
		case ptk.RoleSystem:
			writeConversationTurn(&b, turnHeaderSystem, conversationText(m.Content))
		default:
			writeConversationTurn(&b, turnHeaderUser, conversationText(m.Content))
		}
	}
	b.WriteString(turnHeaderAssistant)
	b.WriteByte('\n')
	return b.String()
}

// Transcript flattens messages that are already in the protocol's form —
// what a chat model is sent in the text protocol: a system prompt that
// teaches it (from SystemPrompt), user turns, the model's own replies, and
// tool results written by Results — into one prompt for a text-only model,
// with the same turn headers as Conversation and the cue "ASSISTANT:\n" at
// the end. Unlike Conversation it adds nothing and neutralizes nothing: the
// protocol text in the messages is meant to be read. It still escapes every
// line that would read as a turn header, so no message can forge a turn.
// An assistant message's Calls are written after its content (PTK.Calls);
// tool messages are written as TOOL turns of results.
func (p PTK) Transcript(msgs []ptk.Message) string {
	var b strings.Builder
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		text := strings.TrimRight(strings.TrimLeft(m.Content, "\r\n"), " \t\r\n")
		header := turnHeaderUser
		switch m.Role {
		case ptk.RoleSystem:
			header = turnHeaderSystem
		case ptk.RoleAssistant:
			header = turnHeaderAssistant
			if calls := p.Calls(m.Calls); calls != "" {
				text = strings.TrimSpace(text + "\n" + calls)
			}
		case ptk.RoleTool:
			var results []ptk.Result
			results, i = ToolTurn(msgs, i)
			header, text = turnHeaderTool, p.Results(results)
		}
		writeConversationTurn(&b, header, escapeTurnHeaders(text))
	}
	b.WriteString(turnHeaderAssistant)
	b.WriteByte('\n')
	return b.String()
}

// ToolTurn returns the results of the run of tool messages that starts at
// msgs[i], in order, and the index of the last of them: the results of one
// turn's calls, which the protocol sends back as one message
// ([PTK.Results]).
func ToolTurn(msgs []ptk.Message, i int) ([]ptk.Result, int) {
	var results []ptk.Result
	for ; i < len(msgs) && msgs[i].Role == ptk.RoleTool; i++ {
		t := msgs[i]
		results = append(results, ptk.Result{CallID: t.CallID, Tool: t.Tool, Content: t.Content, IsError: t.IsError})
	}
	return results, i - 1
}

// conversationText is a message's content as a flattened turn holds it.
func conversationText(s string) string {
	s = strings.TrimLeft(s, "\r\n")
	s = strings.TrimRight(s, " \t\r\n")
	return escapeTurnHeaders(Neutralize(s))
}

func writeConversationTurn(b *strings.Builder, header, text string) {
	b.WriteString(header)
	b.WriteByte('\n')
	if text != "" {
		b.WriteString(text)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}

// escapeTurnHeaders puts a backslash at the start of every line of s that
// could read as a turn header (see [PTK.Conversation]). It returns s itself
// when no line needs it.
func escapeTurnHeaders(s string) string {
	var b strings.Builder
	last := 0 // s[:last] has been written to b
	for start := 0; ; {
		if turnHeaderAt(s, start) {
			if b.Cap() == 0 {
				b.Grow(len(s) + 8)
			}
			b.WriteString(s[last:start])
			b.WriteByte('\\')
			last = start
		}
		k := strings.IndexAny(s[start:], "\n\r\u0085\u2028\u2029")
		if k < 0 {
			break
		}
		_, size := utf8.DecodeRuneInString(s[start+k:])
		start += k + size
	}
	if b.Cap() == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// turnHeaderAt reports whether the line starting at s[i] starts, after spaces
// or tabs, with a role name in any letter case, optional spaces or tabs, and a
// colon.
func turnHeaderAt(s string, i int) bool {
	i = turnSkipBlank(s, i)
	for _, role := range [...]string{"system", "user", "assistant", "tool"} {
		if n := foldPrefixLen(s[i:], role); n > 0 {
			j := turnSkipBlank(s, i+n)
			return j < len(s) && s[j] == ':'
		}
	}
	return false
}

func turnSkipBlank(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// Neutralize makes the protocol tags inside data inert, so that text from a
// file, a web page or a user can never read as a call or a result. It writes
// &lt; for the "<" of every tag-like sequence: "<", optional ASCII white space,
// an optional "/", optional ASCII white space, then "ptk_" or "tool_call" in
// any letter case (the Kelvin sign counts as a k). That covers <PTK_CALL>,
// <PTK_BATCH>, <PTK_RESULT id="…">, </PTK_ERROR>, < /ptk_result >, any
// future PTK_ tag and the legacy <TOOL_CALL> (and Hermes <tool_call>).
// Nothing else changes: other "<" stay as they are.
//
// Neutralize runs in linear time, is idempotent, and returns s itself, without
// allocating, when there is nothing to change.
func Neutralize(s string) string {
	return neutralizeWith(s, "&lt;")
}

// neutralizeWith replaces the "<" of every live tag in s by lt.
func neutralizeWith(s, lt string) string {
	i := liveTagIndex(s, 0)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*len(lt))
	last := 0
	for i >= 0 {
		b.WriteString(s[last:i])
		b.WriteString(lt)
		last = i + 1
		i = liveTagIndex(s, last)
	}
	b.WriteString(s[last:])
	return b.String()
}

// liveTagIndex returns the index of the "<" of the first live tag in s at or
// after from, or -1. Every byte is looked at a bounded number of times: the
// white space scanned after a "<" holds no other "<".
func liveTagIndex(s string, from int) int {
	for {
		k := strings.IndexByte(s[from:], '<')
		if k < 0 {
			return -1
		}
		i := from + k
		j := tagSkipSpace(s, i+1)
		if j < len(s) && s[j] == '/' {
			j = tagSkipSpace(s, j+1)
		}
		if foldPrefixLen(s[j:], "ptk_") > 0 || foldPrefixLen(s[j:], "tool_call") > 0 {
			return i
		}
		from = i + 1
	}
}

func tagSkipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			i++
		default:
			return i
		}
	}
	return i
}

// foldPrefixLen returns the length of the prefix of s that equals lower (ASCII
// lower case letters, digits and _) in any letter case, or 0. The Kelvin sign
// U+212A matches k, as it does under Unicode case folding.
func foldPrefixLen(s, lower string) int {
	j := 0
	for k := 0; k < len(lower); k++ {
		c := lower[k]
		switch {
		case j < len(s) && (s[j] == c || 'a' <= c && c <= 'z' && s[j] == c-('a'-'A')):
			j++
		case c == 'k' && strings.HasPrefix(s[j:], "\u212a"):
			j += len("\u212a")
		default:
			return 0
		}
	}
	return j
}

// formatQuote appends s as a JSON string. It leaves "<", ">" and "&" as they
// are and escapes the line separators U+2028 and U+2029; invalid UTF-8 becomes
// U+FFFD.
func formatQuote(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, `\n`...)
			case c == '\r':
				dst = append(dst, `\r`...)
			case c == '\t':
				dst = append(dst, `\t`...)
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028':
			dst = append(dst, `\u2028`...)
		case r == '\u2029':
			dst = append(dst, `\u2029`...)
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// Tool definitions.

// defMaxDepth bounds the nesting of the parameter lists and of the type
// expressions written for a schema; defMaxDecodeDepth bounds the nesting kept
// when a schema is decoded.
const (
	defMaxDepth       = 6
	defMaxTypeDepth   = 4
	defMaxDecodeDepth = 64
	defMaxRefHops     = 8
	defMaxExample     = 4 // top-level arguments in the example call
	// defMaxSteps bounds the work spent on one tool's schema (parameter lines
	// and type expressions), which $ref could otherwise make exponential.
	defMaxSteps = 5000
)

type defKind uint8

const (
	defNull defKind = iota
	defBool
	defNumber
	defString
	defArray
	defObject
	defElided // a value nested deeper than defMaxDecodeDepth
)

// defNode is a decoded JSON value that keeps the order of object members,
// which encoding/json's maps lose.
type defNode struct {
	kind    defKind
	text    string // string value, or number literal
	bool    bool
	members []defMember // object members, in order
	elems   []*defNode  // array elements
}

type defMember struct {
	key string
	val *defNode
}

// get returns the value of the last member named key of an object, or nil.
func (n *defNode) get(key string) *defNode {
	if n == nil || n.kind != defObject {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

func (n *defNode) list(key string) []*defNode {
	if v := n.get(key); v != nil && v.kind == defArray {
		return v.elems
	}
	return nil
}

var errDefTrailing = errors.New("data after the schema")

// decodeDef decodes one JSON value, keeping the order of object members. Empty
// input decodes as null.
func decodeDef(data []byte) (*defNode, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &defNode{kind: defNull}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeDefValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errDefTrailing
	}
	return n, nil
}

func decodeDefValue(dec *json.Decoder, depth int) (*defNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &defNode{kind: defNull}, nil
	case bool:
		return &defNode{kind: defBool, bool: t}, nil
	case json.Number:
		return &defNode{kind: defNumber, text: string(t)}, nil
	case string:
		return &defNode{kind: defString, text: t}, nil
	}
	open := tok.(json.Delim)
	if depth >= defMaxDecodeDepth {
		// Skip the value without recursing.
		for level := 1; level > 0; {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				level++
			case json.Delim('}'), json.Delim(']'):
				level--
			}
		}
		return &defNode{kind: defElided}, nil
	}
	if open == '[' {
		n := &defNode{kind: defArray}
		for dec.More() {
			e, err := decodeDefValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, e)
		}
		_, err := dec.Token() // ]
		return n, err
	}
	n := &defNode{kind: defObject}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		v, err := decodeDefValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, defMember{key: key, val: v})
	}
	_, err = dec.Token() // }
	return n, err
}

// appendDefJSON appends n as compact JSON with a space after each comma and
// colon.
func appendDefJSON(dst []byte, n *defNode) []byte {
	switch n.kind {
	case defNull:
		return append(dst, "null"...)
	case defBool:
		if n.bool {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case defNumber:
		return append(dst, n.text...)
	case defString:
		return formatQuote(dst, n.text)
	case defArray:
		dst = append(dst, '[')
		for i, e := range n.elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendDefJSON(dst, e)
		}
		return append(dst, ']')
	case defObject:
		dst = append(dst, '{')
		for i, m := range n.members {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = formatQuote(dst, m.key)
			dst = append(dst, ": "...)
			dst = appendDefJSON(dst, m.val)
		}
		return append(dst, '}')
	}
	return append(dst, "…"...)
}

func defJSON(n *defNode) string { return string(appendDefJSON(nil, n)) }

// defRenderer writes the parameters of one tool's schema.
type defRenderer struct {
	b     *strings.Builder
	root  *defNode
	path  []*defNode // the schemas whose fields are being listed, outermost first
	steps int        // parameter lines and type expressions written so far
}

func writeToolDef(b *strings.Builder, t ptk.ToolInfo) {
	b.WriteString("## ")
	b.WriteString(defOneLine(t.Name))
	b.WriteByte('\n')
	if d := strings.TrimSpace(t.Description); d != "" {
		b.WriteString(d)
		b.WriteByte('\n')
	}
	root, err := decodeDef(t.Parameters)
	if err != nil || root.kind != defObject && root.kind != defNull {
		b.WriteString("(parameters schema unreadable)\n")
		return
	}
	r := defRenderer{b: b, root: root}
	if r.fields(root, 0) {
		return
	}
	if r.view(root) != nil {
		// A schema that is not an object's.
		if typ := r.typeOf(root, 0); typ != "any" && !defIsObjectType(strings.ToLower(typ)) {
			b.WriteString("Arguments: " + typ + "\n")
			return
		}
	}
	b.WriteString("No arguments.\n")
}

// view returns the schema n stands for: $ref followed, allOf merged. It returns
// nil when n is not a schema object or its reference cannot be followed.
func (r *defRenderer) view(n *defNode) *defNode {
	for hops := 0; n != nil && n.kind == defObject; hops++ {
		ref := n.get("$ref")
		if ref == nil || ref.kind != defString {
			break
		}
		if hops == defMaxRefHops {
			return nil
		}
		n = r.lookup(ref.text)
	}
	if n == nil || n.kind != defObject {
		return nil
	}
	if all := n.list("allOf"); len(all) > 0 {
		return r.mergeAllOf(n, all)
	}
	return n
}

// lookup resolves a local reference ("#", "#/$defs/Name", any JSON Pointer).
func (r *defRenderer) lookup(ref string) *defNode {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	n := r.root
	if ptr == "" {
		return n
	}
	if ptr[0] != '/' {
		return nil
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n.kind {
		case defObject:
			n = n.get(tok)
		case defArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.elems) {
				return nil
			}
			n = n.elems[i]
		default:
			n = nil
		}
		if n == nil {
			return nil
		}
	}
	return n
}

// mergeAllOf returns n with the members of its allOf schemas: n's own members
// first, properties and required lists concatenated.
func (r *defRenderer) mergeAllOf(n *defNode, all []*defNode) *defNode {
	merged := &defNode{kind: defObject}
	props := &defNode{kind: defObject}
	req := &defNode{kind: defArray}
	seen := map[string]bool{"allOf": true, "properties": true, "required": true}
	add := func(s *defNode) {
		if s == nil {
			return
		}
		if p := s.get("properties"); p != nil && p.kind == defObject {
			props.members = append(props.members, p.members...)
		}
		req.elems = append(req.elems, s.list("required")...)
		for _, m := range s.members {
			if !seen[m.key] {
				seen[m.key] = true
				merged.members = append(merged.members, m)
			}
		}
	}
	add(n)
	for _, s := range all {
		if s != n {
			add(r.viewNoAllOf(s))
		}
	}
	if len(props.members) > 0 {
		merged.members = append(merged.members, defMember{"properties", props})
	}
	if len(req.elems) > 0 {
		merged.members = append(merged.members, defMember{"required", req})
	}
	return merged
}

// viewNoAllOf follows the $ref of n without merging allOf, which bounds the
// work of nested allOf.
func (r *defRenderer) viewNoAllOf(n *defNode) *defNode {
	for hops := 0; n != nil && n.kind == defObject && hops < defMaxRefHops; hops++ {
		ref := n.get("$ref")
		if ref == nil || ref.kind != defString {
			return n
		}
		n = r.lookup(ref.text)
	}
	if n == nil || n.kind != defObject {
		return nil
	}
	return n
}

func (r *defRenderer) onPath(n *defNode) bool { return slices.Contains(r.path, n) }

// fields writes the fields of schema n (an object's properties, an array's
// item fields, the fields of anyOf/oneOf object variants) as a list at depth,
// and reports whether it wrote anything.
func (r *defRenderer) fields(n *defNode, depth int) bool {
	v := r.view(n)
	if v == nil || r.onPath(v) {
		return false
	}
	if depth >= defMaxDepth {
		if r.hasFields(v) {
			r.indent(depth)
			r.b.WriteString("- …\n")
			return true
		}
		return false
	}
	r.path = append(r.path, v)
	defer func() { r.path = r.path[:len(r.path)-1] }()

	if props := v.get("properties"); props != nil && props.kind == defObject && len(props.members) > 0 {
		required := v.list("required")
		for _, m := range props.members {
			if r.steps >= defMaxSteps {
				r.indent(depth)
				r.b.WriteString("- …\n")
				break
			}
			r.field(m.key, m.val, defRequired(m.key, m.val, required), depth)
		}
		return true
	}
	if items := v.get("items"); items != nil && items.kind == defObject {
		return r.fields(items, depth)
	}
	// The variants with fields, each once: "X | array of X" lists X's fields
	// once.
	var variants, targets []*defNode
	for _, alt := range defAlternatives(v) {
		target := r.view(alt)
		if !r.hasFields(target) {
			continue
		}
		if items := r.view(target.get("items")); target.get("properties") == nil && items != nil {
			target = items
		}
		if !slices.Contains(targets, target) {
			variants = append(variants, alt)
			targets = append(targets, target)
		}
	}
	switch len(variants) {
	case 0:
		return false
	case 1:
		return r.fields(variants[0], depth)
	}
	for k, alt := range variants {
		r.indent(depth)
		r.b.WriteString("- variant ")
		r.b.WriteString(strconv.Itoa(k + 1))
		r.b.WriteString(":\n")
		r.fields(alt, depth+1)
	}
	return true
}

// hasFields reports whether fields would write something for schema v,
// looking one level down.
func (r *defRenderer) hasFields(v *defNode) bool {
	if v == nil {
		return false
	}
	if props := v.get("properties"); props != nil && props.kind == defObject && len(props.members) > 0 {
		return true
	}
	if items := r.view(v.get("items")); items != nil {
		if props := items.get("properties"); props != nil && props.kind == defObject && len(props.members) > 0 {
			return true
		}
	}
	for _, alt := range defAlternatives(v) {
		if alt := r.view(alt); alt != nil {
			if props := alt.get("properties"); props != nil && props.kind == defObject && len(props.members) > 0 {
				return true
			}
		}
	}
	return false
}

func defAlternatives(v *defNode) []*defNode {
	if alts := v.list("anyOf"); len(alts) > 0 {
		return alts
	}
	return v.list("oneOf")
}

func (r *defRenderer) indent(depth int) {
	for range depth {
		r.b.WriteString("  ")
	}
}

// field writes one parameter line and the fields nested in it.
func (r *defRenderer) field(name string, n *defNode, required bool, depth int) {
	r.steps++
	v := r.view(n)
	keyword := func(key string) *defNode {
		if a := n.get(key); a != nil {
			return a
		}
		return v.get(key)
	}
	r.indent(depth)
	r.b.WriteString("- ")
	r.b.WriteString(defOneLine(name))
	r.b.WriteString(" (")
	r.b.WriteString(r.typeOf(n, 0))
	if required {
		r.b.WriteString(", required")
	} else {
		r.b.WriteString(", optional")
	}
	if d := keyword("default"); d != nil {
		r.b.WriteString(", default ")
		r.b.WriteString(defJSON(d))
	}
	if f := keyword("format"); f != nil && f.kind == defString && f.text != "" {
		r.b.WriteString(", format ")
		r.b.WriteString(defOneLine(f.text))
	}
	writeBound := func(key, op, unit string) {
		if a := keyword(key); a != nil && a.kind == defNumber {
			r.b.WriteString(", ")
			r.b.WriteString(op)
			r.b.WriteString(a.text)
			r.b.WriteString(unit)
		}
	}
	if a := keyword("exclusiveMinimum"); a != nil && a.kind == defBool && a.bool {
		writeBound("minimum", "> ", "")
	} else {
		writeBound("minimum", ">= ", "")
		writeBound("exclusiveMinimum", "> ", "")
	}
	if a := keyword("exclusiveMaximum"); a != nil && a.kind == defBool && a.bool {
		writeBound("maximum", "< ", "")
	} else {
		writeBound("maximum", "<= ", "")
		writeBound("exclusiveMaximum", "< ", "")
	}
	writeBound("minLength", ">= ", " chars")
	writeBound("maxLength", "<= ", " chars")
	writeBound("minItems", ">= ", " items")
	writeBound("maxItems", "<= ", " items")
	if p := keyword("pattern"); p != nil && p.kind == defString {
		r.b.WriteString(", pattern ")
		r.b.WriteString(defOneLine(p.text))
	}
	r.b.WriteByte(')')
	desc := defDescription(keyword("description"))
	if desc == "" {
		desc = defDescription(keyword("title"))
	}
	if items := v.get("items"); items != nil && items.kind == defObject {
		if d := defDescription(items.get("description")); d != "" {
			if desc != "" {
				desc += " "
			}
			desc += "Items: " + d
		}
	}
	if desc != "" {
		r.b.WriteString(": ")
		r.b.WriteString(desc)
	}
	r.b.WriteByte('\n')
	r.fields(n, depth+1)
}

// defDescription returns a description as one line.
func defDescription(d *defNode) string {
	if d == nil || d.kind != defString {
		return ""
	}
	return strings.Join(strings.Fields(d.text), " ")
}

// defRequired reports whether a property is required: listed in its object's
// required list or marked "required": true (draft 3), and not marked
// "optional": true (as some BFCL schemas do).
func defRequired(name string, prop *defNode, required []*defNode) bool {
	req := false
	for _, r := range required {
		if r.kind == defString && r.text == name {
			req = true
			break
		}
	}
	if r := prop.get("required"); r != nil && r.kind == defBool && r.bool {
		req = true
	}
	if defTruthy(prop.get("optional")) {
		req = false
	}
	return req
}

func defTruthy(n *defNode) bool {
	if n == nil {
		return false
	}
	switch n.kind {
	case defBool:
		return n.bool
	case defString:
		switch strings.ToLower(n.text) {
		case "true", "yes", "1":
			return true
		}
	}
	return false
}

// typeOf returns the type expression of schema n.
func (r *defRenderer) typeOf(n *defNode, depth int) string {
	r.steps++
	if depth > defMaxTypeDepth || r.steps > defMaxSteps {
		return "…"
	}
	v := r.view(n)
	if v == nil {
		if ref := n.get("$ref"); ref != nil && ref.kind == defString {
			return defRefName(ref.text)
		}
		return "any"
	}
	if r.onPath(v) {
		if ref := n.get("$ref"); ref != nil && ref.kind == defString {
			return defRefName(ref.text)
		}
	}
	nullable := defTruthy(v.get("nullable"))
	withNull := func(s string) string {
		if nullable && s != "null" && !strings.HasSuffix(s, " | null") {
			return s + " | null"
		}
		return s
	}
	if c := v.get("const"); c != nil {
		return withNull(defJSON(c))
	}
	if e := v.list("enum"); len(e) > 0 {
		vals := make([]string, len(e))
		for i, x := range e {
			vals[i] = defJSON(x)
		}
		return withNull(strings.Join(vals, " | "))
	}
	if alts := defAlternatives(v); len(alts) > 0 {
		var parts []string
		for _, alt := range alts {
			parts = defAppendUnique(parts, r.typeOf(alt, depth+1))
		}
		return withNull(strings.Join(parts, " | "))
	}
	var names []string
	switch t := v.get("type"); {
	case t == nil:
	case t.kind == defString:
		names = []string{t.text}
	case t.kind == defArray:
		for _, e := range t.elems {
			if e.kind == defString {
				names = append(names, e.text)
			}
		}
	}
	if len(names) == 0 {
		switch {
		case v.get("properties") != nil:
			names = []string{"object"}
		case v.get("items") != nil:
			names = []string{"array"}
		default:
			names = []string{"any"}
		}
	}
	var parts []string
	for _, name := range names {
		parts = defAppendUnique(parts, r.typeName(v, name, depth))
	}
	return withNull(strings.Join(parts, " | "))
}

// typeName returns the type expression of schema v for one of its type names.
func (r *defRenderer) typeName(v *defNode, name string, depth int) string {
	shown := name
	switch name {
	case "dict":
		shown = "object"
	case "float":
		shown = "number"
	case "tuple":
		shown = "array"
	case "":
		shown = "any"
	}
	shown = defOneLine(shown)
	switch lower := strings.ToLower(name); {
	case defIsArrayType(lower):
		items := v.get("items")
		if tuple := v.list("prefixItems"); len(tuple) > 0 {
			items = &defNode{kind: defArray, elems: tuple}
		}
		switch {
		case items == nil:
		case items.kind == defArray:
			elems := make([]string, len(items.elems))
			for i, e := range items.elems {
				elems[i] = r.typeOf(e, depth+1)
			}
			shown += " [" + strings.Join(elems, ", ") + "]"
		case items.kind == defObject:
			shown += " of " + defParen(r.typeOf(items, depth+1))
		}
	case defIsObjectType(lower):
		if props := v.get("properties"); props == nil || props.kind != defObject || len(props.members) == 0 {
			if ap := v.get("additionalProperties"); ap != nil && ap.kind == defObject {
				shown += " of " + defParen(r.typeOf(ap, depth+1))
			}
		}
	}
	return shown
}

func defIsArrayType(lower string) bool {
	switch lower {
	case "array", "tuple", "list", "arraylist":
		return true
	}
	return false
}

func defIsObjectType(lower string) bool {
	switch lower {
	case "object", "dict", "map", "hashmap":
		return true
	}
	return false
}

func defParen(t string) string {
	if strings.Contains(t, " | ") || strings.Contains(t, " of ") {
		return "(" + t + ")"
	}
	return t
}

func defAppendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// defRefName returns the last segment of a reference: "#/$defs/Address" gives
// "Address".
func defRefName(ref string) string {
	if i := strings.LastIndexAny(ref, "/#"); i >= 0 && i < len(ref)-1 {
		ref = ref[i+1:]
	}
	return defOneLine(ref)
}

// defOneLine returns s with its line breaks replaced by spaces.
func defOneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\u0085\u2028\u2029") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			return ' '
		}
		return r
	}, s)
}

// The example call.

// defExampleCall returns the example call of the system prompt, made for the
// first tool: its real name and arguments built from its schema (the required
// parameters, or the first one, with placeholder values by type).
func defExampleCall(tools []ptk.ToolInfo) string {
	if len(tools) == 0 {
		return `{"tool": "tool_name", "args": {"parameter": "value"}, "reasoning": "why this call"}`
	}
	t := tools[0]
	return exampleCalls.get(t.Name+"\x00"+string(t.Parameters), func() string { return exampleCall(t) })
}

// exampleCall makes the example call of t.
func exampleCall(t ptk.ToolInfo) string {
	var dst []byte
	dst = append(dst, `{"tool": `...)
	dst = formatQuote(dst, t.Name)
	dst = append(dst, `, "args": `...)
	root, err := decodeDef(t.Parameters)
	if err != nil {
		root = nil
	}
	r := defRenderer{root: root}
	dst = r.exampleArgs(dst, r.view(root), 0)
	dst = append(dst, `, "reasoning": "why this call"}`...)
	return neutralizeWith(string(dst), `\u003c`)
}

// exampleArgs appends an example object for object schema v: its required
// properties (at most defMaxExample, 2 in nested objects), or else its first
// one.
func (r *defRenderer) exampleArgs(dst []byte, v *defNode, depth int) []byte {
	dst = append(dst, '{')
	if props := v.get("properties"); props != nil && props.kind == defObject && depth < 3 && !r.onPath(v) {
		r.path = append(r.path, v)
		required := v.list("required")
		limit := defMaxExample
		if depth > 0 {
			limit = 2
		}
		var chosen []defMember
		for _, m := range props.members {
			if defRequired(m.key, m.val, required) && len(chosen) < limit {
				chosen = append(chosen, m)
			}
		}
		if len(chosen) == 0 && len(props.members) > 0 {
			chosen = props.members[:1]
		}
		for i, m := range chosen {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = formatQuote(dst, m.key)
			dst = append(dst, ": "...)
			dst = r.exampleValue(dst, m.val, depth+1)
		}
		r.path = r.path[:len(r.path)-1]
	}
	return append(dst, '}')
}

// exampleValue appends a plausible value for schema n: its first example,
// const, first enum value or default, else a placeholder of its type.
func (r *defRenderer) exampleValue(dst []byte, n *defNode, depth int) []byte {
	v := r.view(n)
	if v == nil {
		return append(dst, `"..."`...)
	}
	if ex := v.list("examples"); len(ex) > 0 {
		return appendDefJSON(dst, ex[0])
	}
	if c := v.get("const"); c != nil {
		return appendDefJSON(dst, c)
	}
	if e := v.list("enum"); len(e) > 0 {
		return appendDefJSON(dst, e[0])
	}
	if d := v.get("default"); d != nil {
		return appendDefJSON(dst, d)
	}
	if alts := defAlternatives(v); len(alts) > 0 && depth < 3 {
		return r.exampleValue(dst, alts[0], depth+1)
	}
	name := ""
	switch t := v.get("type"); {
	case t == nil:
	case t.kind == defString:
		name = t.text
	case t.kind == defArray:
		for _, e := range t.elems {
			if e.kind == defString && e.text != "null" {
				name = e.text
				break
			}
		}
	}
	if name == "" {
		switch {
		case v.get("properties") != nil:
			name = "object"
		case v.get("items") != nil:
			name = "array"
		}
	}
	switch lower := strings.ToLower(name); {
	case defIsObjectType(lower):
		return r.exampleArgs(dst, v, depth)
	case defIsArrayType(lower):
		if items := v.get("items"); items != nil && items.kind == defObject && depth < 3 {
			dst = append(dst, '[')
			dst = r.exampleValue(dst, items, depth+1)
			return append(dst, ']')
		}
		return append(dst, "[]"...)
	case lower == "integer" || lower == "int" || lower == "long" || lower == "short":
		return append(dst, '1')
	case lower == "number" || lower == "float" || lower == "double":
		return append(dst, "1.5"...)
	case lower == "boolean" || lower == "bool":
		return append(dst, "true"...)
	}
	return append(dst, `"..."`...)
}
