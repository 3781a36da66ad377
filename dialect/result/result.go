// Package result holds what a parse of a model's reply returns: the Parsed
// reply (text, reasoning, calls, attempts, diagnostics) and the Events of a
// streamed parse. The dialect scanner produces them; protocol re-exports
// them as its own.
package result

import "github.com/ptkit/ptk"

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
	// A call's argument is itself a call, f(x=g(y=1)): the outer call is
	// read and not run (its argument would be the inner call's text, not
	// its result), and the inner call is named in the message.
	DiagNestedCall DiagKind = "nested_call"
	// The reply goes on past the end of its turn: after what it wrote, a
	// new message's header (<|im_start|>user, <|start_header_id|>assistant
	// <|end_header_id|>) starts a conversation the model made up. What
	// follows the header is not read: no text, no calls.
	DiagPastTurn DiagKind = "past_end_of_turn"
	// The reply is a repetition loop: the model wrote calls until the
	// token limit cut it off (at least 8 complete calls, or 3 identical ones
	// in a row, before a call cut off at the end), or it ends in 10
	// identical calls in a row. None of its calls runs: each attempt's
	// error (ptk.DuplicateToolCall) says why.
	DiagRepetitionLoop DiagKind = "repetition_loop"
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
