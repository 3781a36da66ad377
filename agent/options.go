package agent

import (
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/tool"
)

// Mode says how the model is asked to call tools.
type Mode string

// The modes.
const (
	// ModeAuto uses the provider's native tool calling, and switches to the
	// text protocol when the provider rejects tools (Ollama's 400 "does not
	// support tools", vLLM without a tool parser, llama.cpp without --jinja).
	// With Options.NativeTools the switch is remembered for that model, so
	// later runs teach it the protocol from their first call.
	ModeAuto Mode = "auto"
	// ModePTK teaches the model the PTK text protocol in the system prompt
	// and reads its calls from the text it writes.
	ModePTK Mode = "ptk"
	// ModeNative sends the tools as the provider's function definitions and
	// reads its native tool calls.
	ModeNative Mode = "native"
)

// Defaults for the zero values of Options.
const (
	DefaultMaxIterations   = 10
	DefaultMaxToolCalls    = 20
	DefaultDuplicateWindow = 3
	DefaultMaxToolRetries  = 2
	DefaultMaxParallel     = 4
	DefaultMaxResultBytes  = 50 << 10
	DefaultMaxResultLines  = 2000
	DefaultMaxRepeats      = 3
)

// Options configure a run. The zero value of every field means its default.
type Options struct {
	// Model answers the run's model calls. Required.
	Model llm.Model
	// ModelName names the model at the provider ("qwen3:8b", "gpt-4o-mini").
	ModelName string
	// Temperature, when not nil, sets the sampling temperature.
	Temperature *float64
	// MaxOutputTokens, when above zero, caps the tokens of each model answer.
	MaxOutputTokens int
	// StreamModel asks the model to stream its answers, when it can
	// (llm.Streamer): events then report text and calls as they are written.
	StreamModel bool

	// Instructions are the system prompt's own instructions. In ModePTK the
	// protocol and the tool definitions follow them. System messages in the
	// run's history add to them.
	Instructions string
	// Tools are the tools the model may call (pick them from a
	// tool.Registry with its Select method). Two tools of one name are a
	// configuration mistake.
	Tools []ptk.Tool

	// Mode is how the model calls tools; default ModeAuto.
	Mode Mode
	// NativeTools, in ModeAuto, remembers the models that rejected native
	// tools, across the runs that share it (the caller owns it: a CLI holds
	// one for its process, a server one for its life). Nil remembers
	// nothing beyond the run.
	NativeTools *llm.NativeTools
	// Formatter writes the protocol text in ModePTK; default protocol.PTK.
	Formatter protocol.Formatter
	// ParserOptions configure the parser that reads the model's replies (for
	// example protocol.StartInThink for models whose template opens <think>).
	ParserOptions []protocol.Option

	// MaxIterations caps the model calls of a run; default 10.
	MaxIterations int
	// MaxToolCalls caps the tool calls answered in a run (run, or answered
	// from the cache); default 20. A call past the cap is not run and ends
	// the run with ptk.MaxToolCallsReached.
	MaxToolCalls int
	// Timeout, when above zero, bounds the whole run (with a timer of the
	// process: a Runtime of a durable-execution engine bounds the run with
	// its own timers instead, and leaves this zero).
	Timeout time.Duration
	// ToolTimeout, when above zero, bounds each tool call.
	ToolTimeout time.Duration
	// MaxCost, when above zero, is the run's budget in US dollars, and
	// MaxTokens its budget in tokens (prompt and completion, summed over the
	// model calls). A run that has spent its budget ends with
	// ptk.BudgetExceeded before its next model call — also before a call
	// that would pass the budget when that is known: the next prompt is at
	// least as long as the last one, so when the last prompt's tokens (and,
	// with a known price, their cost) no longer fit, the call is not made.
	// A reply that passes the budget is still read: a final answer ends the
	// run with success, calls are not run.
	MaxCost   float64
	MaxTokens int
	// Price prices the model's calls when the model does not price them
	// itself (see llm.Priced); the run's cost is in Result.Cost.
	Price *llm.Price
	// AnswerAtLimit asks the model once more, without tools, to answer with
	// what it has when a limit (iterations or tool calls) is reached, instead
	// of ending the run without an answer. The run then succeeds, and
	// Result.Limit says which limit was reached.
	AnswerAtLimit bool
	// Strict ends the run at the first bad call (unknown tool, invalid
	// arguments, unreadable call, a tool that fails) with its code, instead
	// of telling the model and letting it correct the call.
	Strict bool

	// AllowDuplicates turns duplicate and repeat detection off. By default a
	// call to a read-only tool that repeats one of the last DuplicateWindow
	// such calls (same tool, same arguments in any key order) is not run
	// again: the model is told, and an EventDuplicate reports it. A call to
	// a tool that is not read-only clears the window, since what was read
	// may have changed. A call to a tool that is not read-only that repeats
	// the one just before it with nothing changed in between (no other such
	// call: six `go test` in a row) is a repeat, not run either; re-running
	// the tests after an edit is not a repeat.
	AllowDuplicates bool
	// DuplicateWindow is how many of the latest read-only calls a call is
	// compared with; default 3.
	DuplicateWindow int
	// MaxRepeats is how many duplicates and repeats the model is warned of
	// in a run; the next one is a loop: the Approver is asked whether the
	// run may go on when it implements RepeatApprover, and otherwise the run
	// ends with ptk.DuplicateToolCall. Default 3; negative for no limit.
	MaxRepeats int
	// MaxToolRetries is how many times a call whose tool returned an error
	// marked ptk.Retryable is made again; default 2, negative for none.
	MaxToolRetries int
	// ToolRetryDelay is the pause before the first retry, doubled before
	// each next one; default 200ms.
	ToolRetryDelay time.Duration
	// Approver decides whether a call to a tool that is not read-only may
	// run; it is asked one call at a time, in call order. A denied call goes
	// back to the model as an error result with the approver's reason. A call
	// identical to one denied earlier in the run (same tool, same arguments)
	// is not asked about again: the model is told it was denied already, it
	// counts as a repeat, and past MaxRepeats the run ends with
	// ptk.ToolCallDenied instead of spending its iterations on it. With no
	// Approver every call runs.
	Approver tool.Approver
	// MaxResultBytes and MaxResultLines cap every tool result (defaults 50
	// KB and 2,000 lines; negative for no cap): the rest is cut, with a note
	// that tells the model how to ask for less (tool.Limit).
	MaxResultBytes, MaxResultLines int
	// MaxParallel caps the calls of one reply that run at the same time;
	// default 4. Only calls to read-only tools run at the same time; a call
	// to a tool that changes something runs alone, in call order. The
	// results always go back in call order.
	MaxParallel int

	// Answer, when set, reads the model's final answer: the text it
	// returns is Result.Content, and an error goes back to the model as a
	// user message, which answers again (each try counts in
	// MaxIterations; after MaxAnswerRetries the run ends with
	// ptk.ParseError). ptk run --output-schema reads the answer as a JSON
	// value of a schema this way (ptool.AnswerReader).
	Answer func(text string) (string, error)
	// MaxAnswerRetries is how many answers Answer may refuse; default 2.
	MaxAnswerRetries int

	// ContextWindow is the model's context window in tokens. Zero asks the
	// model (llm.ContextWindowOf: a catalog entry's context_window, what an
	// Ollama, vLLM or llama.cpp server reports); negative means no window
	// is known, and nothing is counted against one.
	//
	// With a window, each request is counted before it is sent (estimated,
	// then corrected by the provider's usage) and the fill is reported as
	// an EventContext. Past CompactAt of the window the conversation is
	// compacted: its older messages are replaced, for the model, by notes
	// the model writes (Compaction), the system prompt, the tools and the
	// latest turns kept as they were. A provider's context-length error
	// compacts and retries once. What cannot fit even so ends the run with
	// ptk.ContextFull, never sent. With the default MaxResultBytes, a tool
	// result is capped at about a quarter of a small window.
	ContextWindow int
	// CompactAt is the fill of the window, above 0 and at most 1, past
	// which the conversation is compacted; default DefaultCompactAt (0.8).
	CompactAt float64
	// NoCompact never compacts the conversation: a request that would not
	// fit the window ends the run with ptk.ContextFull instead.
	NoCompact bool

	// ConversationID, when set, continues the conversation of that id in
	// Store: the run starts from its history, followed by the run's own
	// messages, and saves the history it ends with.
	ConversationID string
	// Store keeps conversations; required with ConversationID. The caller
	// owns it (MemoryStore keeps them in memory).
	Store Store

	// Runtime is where the run's tools run and its time is told; nil is the
	// run's own process. ToolTimeout, MaxToolRetries, ToolRetryDelay and
	// MaxParallel are the default Runtime's; another one reads them as it
	// sees fit (see Runtime).
	Runtime Runtime
}

func (o *Options) defaults() {
	if o.Mode == "" {
		o.Mode = ModeAuto
	}
	if o.Formatter == nil {
		o.Formatter = protocol.PTK{}
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxIterations, DefaultMaxIterations)
	def(&o.MaxToolCalls, DefaultMaxToolCalls)
	def(&o.DuplicateWindow, DefaultDuplicateWindow)
	def(&o.MaxParallel, DefaultMaxParallel)
	def(&o.MaxAnswerRetries, 2)
	if o.CompactAt == 0 {
		o.CompactAt = DefaultCompactAt
	}
	if o.MaxResultLines == 0 {
		o.MaxResultLines = DefaultMaxResultLines
	}
	switch {
	case o.MaxToolRetries == 0:
		o.MaxToolRetries = DefaultMaxToolRetries
	case o.MaxToolRetries < 0:
		o.MaxToolRetries = 0
	}
	if o.ToolRetryDelay <= 0 {
		o.ToolRetryDelay = 200 * time.Millisecond
	}
	switch {
	case o.MaxRepeats == 0:
		o.MaxRepeats = DefaultMaxRepeats
	case o.MaxRepeats < 0:
		o.MaxRepeats = 0
	}
}
