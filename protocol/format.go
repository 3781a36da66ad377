package protocol

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"github.com/ptkit/ptk/dialect"
	"github.com/ptkit/ptk/lenient"
	"github.com/ptkit/ptk/schema"
	"strings"
	"sync"
	"text/template"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/transcript"
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
// Parameters follow the order of the schema's properties. The schema shown
// is the one the parser checks calls against (see [schema.Normalize]): type
// names in any case or alias (dict, float, tuple, String, HashMap, long, set,
// ...) are shown as their JSON Schema type, an unknown type name as "any";
// an enum or const shows its values, anyOf/oneOf and a list of types show
// "a | b", an array "array of <item type>", a map "object of <value type>". A
// property is required when its object lists it in "required" (or it says
// "required": true) and it does not say "optional": true. $ref is followed
// inside the schema (a cycle shows the referenced name), allOf is merged.
// Nesting deeper than six levels is shown as "- …". A tool whose schema is
// not JSON, or nests deeper than the JSON reader's limit (which the parser
// refuses too), is shown with "(parameters schema unreadable)". The text is
// [Neutralize]d.
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
		schema.WriteToolDef(&b, t)
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
		obj = lenient.AppendQuoted(obj, c.Tool)
		obj = append(obj, `, "args": `...)
		obj = appendCallArgs(obj, c.Args)
		if c.Reasoning != "" {
			obj = append(obj, `, "reasoning": `...)
			obj = lenient.AppendQuoted(obj, c.Reasoning)
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
			content = transcript.EscapeHeaders(content)
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
	transcript.WriteTurn(&b, transcript.System, transcript.EscapeHeaders(p.SystemPrompt(Neutralize(instructions), tools)))
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case ptk.RoleTool:
			var results []ptk.Result
			results, i = ToolTurn(msgs, i)
			transcript.WriteTurn(&b, transcript.Tool, formatResults(results, true))
		case ptk.RoleAssistant:
			text := conversationText(m.Content)
			if calls := p.Calls(m.Calls); calls != "" {
				if text != "" {
					text += "\n"
				}
				text += transcript.EscapeHeaders(calls)
			}
			transcript.WriteTurn(&b, transcript.Assistant, text)
		case ptk.RoleSystem:
			transcript.WriteTurn(&b, transcript.System, conversationText(m.Content))
		default:
			transcript.WriteTurn(&b, transcript.User, conversationText(m.Content))
		}
	}
	b.WriteString(transcript.Assistant)
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
		text := transcript.Trim(m.Content)
		header := transcript.User
		switch m.Role {
		case ptk.RoleSystem:
			header = transcript.System
		case ptk.RoleAssistant:
			header = transcript.Assistant
			if calls := p.Calls(m.Calls); calls != "" {
				text = strings.TrimSpace(text + "\n" + calls)
			}
		case ptk.RoleTool:
			var results []ptk.Result
			results, i = ToolTurn(msgs, i)
			header, text = transcript.Tool, p.Results(results)
		}
		transcript.WriteTurn(&b, header, transcript.EscapeHeaders(text))
	}
	b.WriteString(transcript.Assistant)
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
	return transcript.EscapeHeaders(Neutralize(transcript.Trim(s)))
}

// Neutralize makes data inert, so that text from a file, a web page, a tool
// or a user can never read as protocol: not as a PTK result or error that
// ends early, and not as a call in any dialect the parser reads, wherever a
// model repeats it in its reply. It is [Parser.Neutralize] for a parser
// without tools; text for a model that has tools should go through its
// parser's, which also knows the forms that are calls only when they name a
// declared tool (name(...) on a line, <read_file><path>…).
//
// Two things change:
//   - the "<" of every PTK tag is written &lt;: "<", optional ASCII white
//     space, an optional "/", optional ASCII white space, then "ptk_" or
//     "tool_call" in any letter case (the Kelvin sign counts as a k). That
//     covers <PTK_CALL>, <PTK_BATCH>, <PTK_RESULT id="…">, </PTK_ERROR>,
//     < /ptk_result >, any future PTK_ tag and the legacy <TOOL_CALL>;
//   - the byte that starts anything the parser would read as a call
//     (dialect.Neutralize): [TOOL_CALLS], <|python_tag|>, <|tool_call_begin|>,
//     <function=…>, a JSON object shaped like a call, [f(a=1)] and the rest,
//     is written as its HTML character reference (&lt; &gt; &#91; &#123;
//     &#40; &#96;).
//
// Nothing else changes: other "<", "{" and "[" stay as they are, so code and
// JSON read as they were. Neutralize is idempotent, runs in linear time,
// and returns s itself when there is nothing to change.
func Neutralize(s string) string {
	return dialect.Neutralize(neutralizeWith(s, "&lt;"), &plainParser().cfg)
}

// Neutralize makes data inert for p (see the package's Neutralize): no part
// of the result, written anywhere in a reply, reads as a call to p or to a
// parser without tools. Only a model's own writing can still make one from
// it: a declared tool's name it writes just before the data's "(", a wrapper
// or a ```tool_code fence it opens around the data.
func (p *Parser) Neutralize(s string) string {
	return dialect.Neutralize(neutralizeWith(s, "&lt;"), &plainParser().cfg, &p.cfg)
}

// plainParser is a parser without tools.
var plainParser = sync.OnceValue(func() *Parser {
	p, _ := NewParser(nil)
	return p
})

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

// defExampleCall returns the example call of the system prompt, made for the
// first tool: its real name and arguments built from its schema (the required
// parameters, or the first one, with placeholder values by type).
func defExampleCall(tools []ptk.ToolInfo) string {
	if len(tools) == 0 {
		return `{"tool": "tool_name", "args": {"parameter": "value"}, "reasoning": "why this call"}`
	}
	t := tools[0]
	return exampleCalls.get(t.Name+"\x00"+string(t.Parameters), func() string { return neutralizeWith(schema.ExampleCall(t), `\u003c`) })
}
