package agent

import (
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// Result is what a run did. A failed run fills it in as far as it got.
type Result struct {
	// Success reports that the model gave a final answer.
	Success bool
	// Content is the final answer.
	Content string
	// Iterations counts the model calls made.
	Iterations int
	// Messages is the conversation: the earlier history of the
	// conversation, if any, then this run's user prompt, the model's turns
	// and the tool results. The system prompt is not in it.
	Messages []ptk.Message
	// ToolCalls are the calls answered, in order: run, or answered from the
	// cache. Duplicates and invalid calls are not in it.
	ToolCalls []ToolCall
	// TotalToolCalls is len(ToolCalls), the number MaxToolCalls caps.
	TotalToolCalls int
	// Denied are the calls the Approver did not allow, in order, with the
	// reason the model was given; a call that repeats one denied before is
	// in it again, its reason saying so.
	Denied []DeniedCall
	// Invalid are the calls that could not run as the model wrote them (an
	// unknown tool, arguments that do not fit the schema, a call that cannot
	// be read or was cut off), in order, with the error the model was given.
	Invalid []InvalidCall
	// Error says why a failed run failed; nil on success.
	Error *ptk.Error
	// Limit is set when AnswerAtLimit made the model answer at a limit:
	// ptk.MaxIterationsReached or ptk.MaxToolCallsReached.
	Limit ptk.Code
	// Usage sums the token usage of every model call.
	Usage ptk.Usage
	// Cost is the run's cost in USD, where prices are known (0 otherwise).
	Cost float64
	// Duration is how long the run took.
	Duration time.Duration
	// Mode is the mode the run ended in (ModePTK or ModeNative).
	Mode Mode
	// Window is the model's context window as the run knew it (Tokens 0:
	// unknown).
	Window llm.Window
	// Compactions are the run's compactions of its conversation, in order.
	Compactions []Compaction
}

// ToolCall is one call answered during a run.
type ToolCall struct {
	Call   ptk.Call
	Result ptk.Result
	// Iteration is the model call that made it, from 1.
	Iteration int
	// Duration is how long the tool ran (retries included).
	Duration time.Duration
	// Tries counts the times the tool ran: 1, more when retried, 0 when
	// answered from the cache.
	Tries int
	// Cached reports that the result came from the run's cache.
	Cached bool
}

// DeniedCall is a call the Approver did not allow.
type DeniedCall struct {
	Call ptk.Call
	// Iteration is the model call that made it, from 1.
	Iteration int
	// Reason is what the model was told, how to allow it included.
	Reason string
}

// InvalidCall is a call that could not run as written.
type InvalidCall struct {
	Call ptk.Call
	// Iteration is the model call that made it, from 1.
	Iteration int
	// Err is the error the model was given.
	Err *ptk.Error
}

// EventKind says what an Event reports.
type EventKind uint8

// The kinds of events, in the order a run reports them.
const (
	// EventIteration: a model call begins (Iteration).
	EventIteration EventKind = iota + 1
	// EventText: the next piece of the model's text for the user (Text).
	EventText
	// EventReasoning: the next piece of the model's reasoning (Text).
	EventReasoning
	// EventCallStart: the model begins a call (Index; Call with the tool
	// name when it is known).
	EventCallStart
	// EventCallDelta: the next piece of a call's arguments as the model
	// writes them (Index, Text).
	EventCallDelta
	// EventCallEnd: a call is complete (Index, Call as ptk read it; Err when
	// it cannot run).
	EventCallEnd
	// EventModelDone: the model call ended (Usage and Cost of this call;
	// Request the conversation it was sent, Reply the turn it added).
	EventModelDone
	// EventToolStart: a call's tool starts running (Index, Call), in call
	// order; calls to read-only tools may then run at the same time.
	EventToolStart
	// EventToolResult: a call was answered (Index, Call, ToolResult,
	// Duration, Cached), in call order.
	EventToolResult
	// EventDuplicate: a call was not run because it repeats a recent one
	// (Index, Call, Text what the model is told).
	EventDuplicate
	// EventDenied: a call was not approved (Index, Call, Text the reason).
	EventDenied
	// EventModeSwitch: ModeAuto switched to the text protocol (Text says why).
	EventModeSwitch
	// EventContext: how full the model's context window is (Fill): before
	// each model call, estimated; after it, as the provider counted.
	EventContext
	// EventCompact: the conversation was compacted before a model call
	// (Compaction; Usage and Cost of the calls that wrote its notes).
	EventCompact
	// EventFinal: the model's final answer (Text).
	EventFinal
	// EventDone: the run is over (Run; the Seq2's error is set when it
	// failed).
	EventDone
)

// Event is one step of a run.
type Event struct {
	Kind      EventKind
	Iteration int
	// Index is the call's position in the model's reply, from 0.
	Index      int
	Text       string
	Call       *ptk.Call
	ToolResult *ptk.Result
	// Err is the error of a call that cannot run.
	Err   *ptk.Error
	Usage ptk.Usage
	// Cost is the model call's cost in USD, on EventModelDone, where prices
	// are known.
	Cost     float64
	Duration time.Duration
	Cached   bool
	// Run is the run's result, on EventDone.
	Run *Result
	// Fill is the context window's fill, on EventContext.
	Fill *Fill
	// Request is the conversation the model was sent, as the run's history
	// holds it, and Reply the assistant turn the model's answer adds to it,
	// on EventModelDone: a recorder keeps the call whole as it ends. Both
	// are the run's: read them, never change them.
	Request []ptk.Message
	Reply   *ptk.Message
	// Compaction is what was compacted, on EventCompact.
	Compaction *Compaction
}
