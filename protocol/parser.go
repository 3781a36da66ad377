package protocol

import (
	"bytes"
	"github.com/ptkit/ptk/lenient"
	"io"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/ptkit/ptk"
)

// Parser reads tool calls out of what a model wrote. It is configured with
// the declared tools and never changes afterwards: one Parser may be shared by
// any number of goroutines.
//
// Parse reads a whole reply; NewStream reads one chunk by chunk and reports
// what it finds as it goes. Both give exactly the same Parsed for the same
// text, however it is split.
type Parser struct {
	tools   []*toolSpec
	byName  map[string]*toolSpec
	prefix  string
	inThink bool
}

// Option configures a Parser.
type Option func(*Parser)

// WithIDPrefix sets the prefix of the call ids the parser assigns: prefix1,
// prefix2, ... in the order the calls appear. The default is "call_".
func WithIDPrefix(prefix string) Option { return func(p *Parser) { p.prefix = prefix } }

// StartInThink tells the parser that the reply begins inside a reasoning
// block, as with models whose prompt template opens <think> itself: text up
// to the first </think> is reasoning, and no call in it is run.
func StartInThink() Option { return func(p *Parser) { p.inThink = true } }

// NewParser returns a Parser for the given tools. With no tools, calls are
// read by shape alone and not validated. An error reports a tool whose
// definition cannot be used (a duplicate name, a schema that does not
// compile).
func NewParser(tools []ptk.ToolInfo, opts ...Option) (*Parser, error) {
	p := &Parser{prefix: "call_", byName: make(map[string]*toolSpec, len(tools))}
	for _, o := range opts {
		o(p)
	}
	for _, t := range tools {
		if _, dup := p.byName[t.Name]; dup {
			return nil, &ToolError{Tool: t.Name, Msg: "declared twice"}
		}
		ts, err := compileTool(t)
		if err != nil {
			return nil, err
		}
		p.tools = append(p.tools, ts)
		p.byName[t.Name] = ts
	}
	return p, nil
}

// ToolError reports a tool definition the parser cannot use.
type ToolError struct {
	Tool string
	Msg  string
}

func (e *ToolError) Error() string { return "tool " + strconv.Quote(e.Tool) + ": " + e.Msg }

// Parsed is what a model's reply means.
type Parsed struct {
	// Text is the prose for the user: the reply without calls, protocol
	// tokens or reasoning, trimmed of surrounding white space.
	Text string
	// Reasoning is the text of <think> blocks and analysis channels.
	Reasoning string
	// Calls are the valid calls, in order: what should run.
	Calls []ptk.Call
	// Attempts are all the calls the model tried to make, in order, valid or
	// not; each invalid one carries the error to send back to the model.
	Attempts []Attempt
	// Diagnostics say what was wrong or repaired, in the order found.
	Diagnostics []Diagnostic
}

// Attempt is one call the model tried to make.
type Attempt struct {
	Call ptk.Call
	// Err is nil for a valid call. Otherwise its Code is ToolNotFound,
	// InvalidToolCall or ParseError and its Message is what the model should
	// read to correct the call.
	Err *ptk.Error
	// Offset is the byte offset of the call in the reply.
	Offset int
}

// DiagKind names a kind of diagnostic.
type DiagKind string

// The kinds of diagnostics.
const (
	// A call names a tool that is not declared. The call is not run.
	DiagUnknownTool DiagKind = "unknown_tool"
	// A required argument is missing. The call is not run.
	DiagMissingArgument DiagKind = "missing_argument"
	// An argument has the wrong type and could not be coerced. The call is not run.
	DiagWrongType DiagKind = "wrong_type"
	// An argument breaks another rule of the schema (enum, range, pattern...). The call is not run.
	DiagInvalidArgument DiagKind = "invalid_argument"
	// An argument the schema does not declare was dropped. The call still runs.
	DiagUnexpectedArgument DiagKind = "unexpected_argument"
	// An argument was converted to the type its schema asks for. The call still runs.
	DiagCoerced DiagKind = "coerced"
	// The tool name was corrected to a declared tool. The call still runs.
	DiagNameCorrected DiagKind = "name_corrected"
	// What the model wrote was repaired to read the call. The call still runs.
	DiagRepaired DiagKind = "repaired"
	// A call could not be read. It is not run.
	DiagMalformed DiagKind = "malformed_call"
	// A call was cut off at the end of the output. It is not run.
	DiagTruncated DiagKind = "truncated_call"
	// A reasoning block was never closed.
	DiagUnclosedThink DiagKind = "unclosed_think"
	// A reasoning block was closed but never opened: the model's template
	// opens it, and the reply should be parsed with StartInThink.
	DiagUnopenedThink DiagKind = "unopened_think"
	// JSON that looks like a call names a tool that is not declared, so it
	// was read as text.
	DiagNotACall DiagKind = "not_a_call"
	// Call syntax ptk does not run (for example Gemini's <call:...{}/>) was
	// read as text.
	DiagUnsupported DiagKind = "unsupported_call_syntax"
)

// Diagnostic says what was wrong with, or done to, what the model wrote.
type Diagnostic struct {
	Kind    DiagKind
	Message string
	// Offset is the byte offset in the reply the diagnostic is about.
	Offset int
	// CallID is the call the diagnostic is about, if any.
	CallID string
	// Tool is the tool named by that call, if any.
	Tool string
	// Pointer is the JSON Pointer of the argument concerned, if any.
	Pointer string
}

// EventKind says what an Event reports.
type EventKind uint8

// The kinds of streaming events.
const (
	// EventText: the next piece of the user-visible text (Event.Text).
	EventText EventKind = iota + 1
	// EventReasoning: the next piece of reasoning (Event.Text).
	EventReasoning
	// EventCallStart: a call begins (Event.Index; Event.Tool when the
	// format names the tool before its arguments).
	EventCallStart
	// EventCallDelta: the next piece of the call's raw text as the model
	// writes it (Event.Text), for showing progress. The call's arguments as
	// ptk reads them are in the EventCallEnd's Attempt.
	EventCallDelta
	// EventCallEnd: the call is complete (Event.Attempt, valid or not).
	EventCallEnd
)

// Event is one step of a streamed parse.
type Event struct {
	Kind    EventKind
	Text    string
	Index   int // the call's index in Parsed.Attempts
	Tool    string
	Attempt *Attempt
}

// Parse reads a whole reply.
func (p *Parser) Parse(text string) Parsed {
	m := newMachine(p, nil)
	// The machine never writes to its input: read the string in place.
	m.buf = unsafe.Slice(unsafe.StringData(text), len(text))
	m.text = make([]byte, 0, len(text))
	m.eof = true
	m.run()
	return m.result()
}

// Stream reads a reply chunk by chunk. Create one with NewStream, Write the
// chunks as they arrive, then call Finish. A Stream is for one reply and one
// goroutine.
type Stream struct {
	m        *machine
	finished bool
	// pend holds one-byte chunks taken in but not yet read (see maxDeferred).
	pend [maxDeferred]byte
	np   int
}

var (
	_ io.Writer       = (*Stream)(nil)
	_ io.StringWriter = (*Stream)(nil)
)

// NewStream starts reading a streamed reply. emit, if not nil, receives the
// events as they happen, from inside Write and Finish. The concatenated
// EventText texts are exactly the final Parsed.Text.
func (p *Parser) NewStream(emit func(Event)) *Stream {
	return &Stream{m: newMachine(p, emit)}
}

// Write feeds the next chunk. It fails only after Finish.
func (s *Stream) Write(b []byte) (int, error) {
	if len(b) == 1 && b[0] != '\n' && s.np < maxDeferred {
		s.pend[s.np&(maxDeferred-1)] = b[0]
		s.np++
		return 1, nil
	}
	return s.write(b, "")
}

// WriteString feeds the next chunk. It fails only after Finish.
func (s *Stream) WriteString(str string) (int, error) {
	if len(str) == 1 && str[0] != '\n' && s.np < maxDeferred {
		s.pend[s.np&(maxDeferred-1)] = str[0]
		s.np++
		return 1, nil
	}
	return s.write(nil, str)
}

func (s *Stream) write(b []byte, str string) (int, error) {
	if s.finished {
		return 0, errFinished
	}
	m := s.m
	m.buf = append(grow(m.buf, s.np+len(b)+len(str)), s.pend[:s.np]...)
	s.np = 0
	m.buf = append(m.buf, b...)
	m.buf = append(m.buf, str...)
	m.run()
	m.flushEvents()
	return len(b) + len(str), nil
}

// maxDeferred bounds how many one-byte chunks a stream takes in before it
// reads them.
const maxDeferred = 32

// A Stream takes one-byte chunks in without reading them at once, up to
// maxDeferred of them or a line break: reading later never changes what is
// read (a decision depends only on the bytes, never on where a chunk ended),
// and for a reply streamed byte by byte it saves a pass of the machine per
// byte. Events are delayed by at most maxDeferred bytes; a chunk of several
// bytes is read at once.

// Finish ends the reply and returns the Parsed reply, the same as Parse would
// give on the whole text.
func (s *Stream) Finish() Parsed {
	if !s.finished {
		s.m.buf = append(s.m.buf, s.pend[:s.np]...)
		s.finished = true
		s.np = maxDeferred // Write takes its slow path, which fails
		s.m.eof = true
		s.m.run()
		s.m.flushEvents()
	}
	return s.m.result()
}

type finishedError struct{}

func (finishedError) Error() string { return "protocol: write after Finish" }

var errFinished error = finishedError{}

// grow makes room for n more bytes in b, doubling its capacity: a reply
// streamed in tiny chunks is copied a bounded number of times.
func grow(b []byte, n int) []byte {
	if len(b)+n <= cap(b) {
		return b
	}
	nb := make([]byte, len(b), max(2*cap(b), len(b)+n, 4096))
	copy(nb, b)
	return nb
}

// validUTF8Prefix returns the length of b without a trailing incomplete rune.
func validUTF8Prefix(b []byte) int {
	n := len(b)
	for k := 1; k <= 3 && k <= n; k++ {
		c := b[n-k]
		if c < utf8.RuneSelf {
			return n
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[n-k:]) {
				return n - k
			}
			return n
		}
	}
	return n
}

// Check validates a call the model made by other means, such as a provider's
// native tool call, the way a call read from text is validated: the tool name
// is resolved (with a "did you mean" when it is unknown), the arguments are
// read leniently (they may also be a JSON string holding the object), coerced
// to the schema's types and validated. The call keeps its ID. Empty arguments
// read as {}.
func (p *Parser) Check(c ptk.Call) (Attempt, []Diagnostic) {
	rc := rawCall{name: c.Tool, reasoning: c.Reasoning, src: c.Args}
	if len(bytes.TrimSpace(c.Args)) > 0 {
		n, rep, err := lenient.Parse(c.Args)
		if err != nil {
			rc.err, rc.errMsg = DiagMalformed, "the arguments cannot be read as JSON: "+err.Error()
		} else {
			rc.args, rc.repairs = n, rep.Strings()
		}
	}
	if rc.name == "" && rc.err == "" {
		rc.err, rc.errMsg = DiagMalformed, "the call has no tool name"
	}
	return p.finish(rc, c.ID)
}

// RepairJSON reads s as lenient JSON and returns it as valid JSON, with the
// repairs made; see [lenient.RepairJSON].
func RepairJSON(s []byte) (out []byte, repairs []string, err error) { return lenient.RepairJSON(s) }
