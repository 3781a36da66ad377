package protocol

import (
	"bytes"
	"strconv"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/dialect"
	"github.com/ptkit/ptk/dialect/result"
	"github.com/ptkit/ptk/lenient"
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
	cfg     dialect.Config
}

// Option configures a Parser.
type Option func(*Parser)

// WithIDPrefix sets the prefix of the call ids the parser assigns: prefix1,
// prefix2, ... in the order the calls appear. The default is "call_".
func WithIDPrefix(prefix string) Option { return func(p *Parser) { p.prefix = prefix } }

// StartInThink tells the parser that the reply begins inside a reasoning
// block, as with models whose prompt template opens <think> itself: text up
// to the first </think> is reasoning, and no call in it is run. Reasoning
// that is never closed ends where a call starts in it, if the reply ends
// with the calls (the model forgot the closer); a call followed by more
// reasoning stays reasoning.
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
	p.tools = make([]*toolSpec, 0, len(tools))
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
	p.cfg = dialect.Config{Declared: len(p.tools) > 0, Lookup: p.lookup, Finish: p.finish, InThink: p.inThink, IDPrefix: p.prefix}
	return p, nil
}

// lookup tells the scanner whether name is a declared tool, and whether its
// schema requires arguments.
func (p *Parser) lookup(name string, exact bool) (found, requiresArgs bool) {
	var t *toolSpec
	if exact {
		t = p.resolveExact(name)
	} else {
		t, _ = p.resolve(name)
	}
	if t == nil {
		return false, false
	}
	return true, t.schema.RequiresArguments()
}

// Parse reads a whole reply.
func (p *Parser) Parse(text string) Parsed { return dialect.Parse(&p.cfg, text) }

// ParseCut reads a whole reply that the model's token limit cut off, as
// its provider said (finish reason "length"): a reply whose calls then
// repeat is a repetition loop even when the cut fell between two calls
// (see the package documentation). A stream told [Stream.Cut] before
// Finish reads the same.
func (p *Parser) ParseCut(text string) Parsed { return dialect.ParseCut(&p.cfg, text) }

// NewStream starts reading a streamed reply. emit, if not nil, receives the
// events as they happen, from inside Write and Finish. The concatenated
// EventText texts are exactly the final Parsed.Text.
func (p *Parser) NewStream(emit func(Event)) *Stream { return dialect.NewStream(&p.cfg, emit) }

// ToolError reports a tool definition the parser cannot use.
type ToolError struct {
	Tool string
	Msg  string
}

func (e *ToolError) Error() string { return "tool " + strconv.Quote(e.Tool) + ": " + e.Msg }

// Check validates a call the model made by other means, such as a provider's
// native tool call, the way a call read from text is validated: the tool name
// is resolved (with a "did you mean" when it is unknown), the arguments are
// read leniently (they may also be a JSON string holding the object), coerced
// to the schema's types and validated. The call keeps its ID. Empty arguments
// read as {}.
func (p *Parser) Check(c ptk.Call) (Attempt, []Diagnostic) {
	rc := dialect.RawCall{Name: c.Tool, Reasoning: c.Reasoning, Src: c.Args}
	if len(bytes.TrimSpace(c.Args)) > 0 {
		n, rep, err := lenient.Parse(c.Args)
		if err != nil {
			rc.Err, rc.ErrMsg = DiagMalformed, "the arguments cannot be read as JSON: "+err.Error()
		} else {
			rc.Args, rc.Repairs = n, rep.Strings()
		}
	}
	if rc.Name == "" && rc.Err == "" {
		rc.Err, rc.ErrMsg = DiagMalformed, "the call has no tool name"
	}
	return p.finish(rc, c.ID)
}

// RepairJSON reads s as lenient JSON and returns it as valid JSON, with the
// repairs made; see [lenient.RepairJSON].
func RepairJSON(s []byte) (out []byte, repairs []string, err error) { return lenient.RepairJSON(s) }

// ErrNotJSON is RepairJSON's error for input with no JSON value in it.
var ErrNotJSON = lenient.ErrNotJSON

// SyntaxError is RepairJSON's error for JSON it cannot repair.
type SyntaxError = lenient.SyntaxError

// The parse's vocabulary, defined in dialect/result for the scanner that
// produces it.
type (
	// Parsed is what a model's reply means: see [result.Parsed].
	Parsed = result.Parsed
	// Attempt is one call the model tried to make: see [result.Attempt].
	Attempt = result.Attempt
	// Diagnostic says what was wrong with, or done to, what the model wrote.
	Diagnostic = result.Diagnostic
	// DiagKind names a kind of diagnostic.
	DiagKind = result.DiagKind
	// Event is one step of a streamed parse: see [result.Event].
	Event = result.Event
	// EventKind says what an Event reports.
	EventKind = result.EventKind
	// Stream reads a reply chunk by chunk: see [dialect.Stream].
	Stream = dialect.Stream
)

// The kinds of diagnostics: see [result.DiagUnknownTool] and the rest.
const (
	DiagUnknownTool        = result.DiagUnknownTool
	DiagMissingArgument    = result.DiagMissingArgument
	DiagWrongType          = result.DiagWrongType
	DiagInvalidArgument    = result.DiagInvalidArgument
	DiagUnexpectedArgument = result.DiagUnexpectedArgument
	DiagCoerced            = result.DiagCoerced
	DiagNameCorrected      = result.DiagNameCorrected
	DiagRepaired           = result.DiagRepaired
	DiagMalformed          = result.DiagMalformed
	DiagTruncated          = result.DiagTruncated
	DiagUnclosedThink      = result.DiagUnclosedThink
	DiagUnopenedThink      = result.DiagUnopenedThink
	DiagNotACall           = result.DiagNotACall
	DiagUnsupported        = result.DiagUnsupported
	DiagNestedCall         = result.DiagNestedCall
	DiagPastTurn           = result.DiagPastTurn
	DiagRepetitionLoop     = result.DiagRepetitionLoop
)

// The kinds of streaming events: see [result.EventText] and the rest.
const (
	EventText      = result.EventText
	EventReasoning = result.EventReasoning
	EventCallStart = result.EventCallStart
	EventCallDelta = result.EventCallDelta
	EventCallEnd   = result.EventCallEnd
)
