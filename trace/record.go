package trace

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ptkit/ptk"
)

// Kind says what made a run.
type Kind string

// The kinds of runs.
const (
	KindAgent    Kind = "agent"
	KindPtool    Kind = "ptool"
	KindWorkflow Kind = "workflow"
	KindReAct    Kind = "react"
	// KindDistill is a run of ptk distill: its rounds and each candidate's
	// checks are Steps, the model calls that wrote a candidate under its
	// round.
	KindDistill Kind = "distill"
	// KindRequest is a request to ptk serve: its Detail is a Request, its
	// model call (or its agent run, a run whose ParentID is the request's)
	// under it.
	KindRequest Kind = "request"
)

// Status says how a run ended, or that it has not.
type Status string

// The statuses of runs.
const (
	StatusOK    Status = "ok"
	StatusError Status = "error"
	// StatusRunning is a run that has begun and not ended: its row is
	// written when it starts (Writer.Begin) and its calls as they finish.
	StatusRunning Status = "running"
	// StatusInterrupted is a run whose process ended (killed, crashed)
	// before the run did: Open marks it so, and List shows a running run
	// whose writer stopped answering so.
	StatusInterrupted Status = "interrupted"
)

// The kinds of spans under a run: each of its calls is a span, named by
// its kind and its seq in the run ("tool/3"), and has a parent span (""
// for the run itself).
const (
	SpanModel = "model"
	SpanTool  = "tool"
	SpanPtool = "ptool"
	SpanStep  = "step"
)

// SpanID names a run's call of that kind (SpanModel, SpanTool, SpanPtool,
// SpanStep)
// and seq (its index in the record's list), as a call's Parent names it.
func SpanID(kind string, seq int) string { return kind + "/" + strconv.Itoa(seq) }

// Outcomes of a tool call (ToolCall.Outcome).
const (
	OutcomeRan       = "ran"       // the tool ran
	OutcomeCached    = "cached"    // answered from the run's cache
	OutcomeDenied    = "denied"    // not approved
	OutcomeDuplicate = "duplicate" // not run: it repeats a recent call
	OutcomeInvalid   = "invalid"   // not run: the call cannot run (Result says why)
)

// MaxResultBytes caps the text of a tool result and of a model call's reply
// that a record keeps; longer text is cut at a UTF-8 boundary and marked
// Truncated.
const MaxResultBytes = 64 << 10

// Millis is a duration that reads as milliseconds in JSON (a float, so that
// a tool call of 300µs is 0.3, not 0).
type Millis time.Duration

// MarshalJSON writes the duration in milliseconds.
func (m Millis) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(m)/float64(time.Millisecond), 'f', -1, 64), nil
}

// UnmarshalJSON reads a duration in milliseconds.
func (m *Millis) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*m = Millis(f * float64(time.Millisecond))
	return nil
}

// Run is one run's summary, as List returns it.
type Run struct {
	ID string `json:"id"`
	// ParentID is the run this one is a step of (a workflow's ptool call).
	ParentID string `json:"parent_id,omitempty"`
	Kind     Kind   `json:"kind"`
	Name     string `json:"name"`
	Model    string `json:"model"`
	// Provider is who serves Model, as the OpenTelemetry GenAI conventions
	// name it (gen_ai.provider.name: "openai", "anthropic", "gcp.gemini",
	// "ollama"); "" when not known (llm.ProviderOf).
	Provider  string    `json:"provider,omitempty"`
	Mode      string    `json:"mode"`
	StartedAt time.Time `json:"started_at"`
	Duration  Millis    `json:"duration_ms"`
	Status    Status    `json:"status"`
	// ErrorCode and ErrorMessage say why a failed run failed (a ptk.Code).
	ErrorCode    string    `json:"error_code,omitempty"`
	ErrorMessage string    `json:"error_message,omitempty"`
	Usage        ptk.Usage `json:"usage"`
	Cost         float64   `json:"cost"`
	Iterations   int       `json:"iterations"`
	// NumToolCalls counts the tool calls recorded (Record.ToolCalls).
	NumToolCalls int `json:"tool_calls"`
	// Input is what the run was asked (the user's prompt, a ptool's
	// inputs); Output what it answered.
	Input  string `json:"input,omitempty"`
	Output string `json:"output,omitempty"`
}

// Record is a run with everything it did, as Write takes it and Get and
// Export give it back.
type Record struct {
	Run
	// Detail holds a workflow's trace or a ReAct trajectory whole, as JSON.
	Detail     json.RawMessage `json:"detail,omitempty"`
	ModelCalls []ModelCall     `json:"model_calls"`
	ToolCalls  []ToolCall      `json:"tool_calls"`
	PtoolCalls []PtoolCall     `json:"ptool_calls,omitempty"`
	// Steps are the run's other spans: a distill run's rounds and checks.
	Steps []Step `json:"steps,omitempty"`
	// Labels are the feedback on the run and its calls (SetLabel).
	Labels []Label `json:"labels,omitempty"`
}

// UnmarshalJSON reads a record as MarshalJSON writes it (an exported
// line), where "tool_calls" is the list of calls, not their number.
func (r *Record) UnmarshalJSON(b []byte) error {
	type plain Record
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	r.NumToolCalls = len(r.ToolCalls)
	return nil
}

// ModelCall is one call to the model.
type ModelCall struct {
	Mode    string    `json:"mode,omitempty"`
	Usage   ptk.Usage `json:"usage"`
	Latency Millis    `json:"latency_ms"`
	Cost    float64   `json:"cost"`
	// RequestHash is a SHA-256 of the conversation the model was sent
	// (hex), equal for equal requests.
	RequestHash string `json:"request_hash,omitempty"`
	// Text is the reply's text (capped at MaxResultBytes), Calls the calls
	// ptk read in it.
	Text  string     `json:"text"`
	Calls []ptk.Call `json:"calls,omitempty"`
	Error string     `json:"error,omitempty"`
	Span
}

// Span says where a call sits in its run: when it started and the span it
// is part of (SpanID; "" for the run itself).
type Span struct {
	Start  time.Time `json:"start,omitzero"`
	Parent string    `json:"parent,omitempty"`
}

// ToolCall is one call the model made to a tool.
type ToolCall struct {
	Iteration int             `json:"iteration"`
	CallID    string          `json:"call_id,omitempty"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	// Result is the text the model was given, capped at MaxResultBytes.
	Result    string `json:"result"`
	Truncated bool   `json:"truncated,omitempty"`
	IsError   bool   `json:"is_error"`
	// ErrorCode is the class of the error of a call that failed (a
	// ptk.Code): the model's mistake (INVALID_TOOL_CALL, TOOL_NOT_FOUND,
	// PARSE_ERROR), a denial (TOOL_CALL_DENIED), the tool's failure
	// (TOOL_EXECUTION_FAILED).
	ErrorCode string   `json:"error_code,omitempty"`
	Outcome   string   `json:"outcome"`
	Repairs   []string `json:"repairs,omitempty"`
	Duration  Millis   `json:"duration_ms"`
	Span
}

// PtoolCall is one call of a ptool: a typed function a model (or, for a
// distilled function, code) executes.
type PtoolCall struct {
	Ptool  string          `json:"ptool"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output,omitempty"`
	// Attempts lists each try with the problems found in its output.
	Attempts []Attempt `json:"attempts,omitempty"`
	Repairs  []string  `json:"repairs,omitempty"`
	// Source says what answered: "model" or "code" (a distilled function).
	Source string `json:"source,omitempty"`
	// Fallback reports that distilled code was unsure and the model answered.
	Fallback bool   `json:"fallback,omitempty"`
	IsError  bool   `json:"is_error"`
	Duration Millis `json:"duration_ms"`
	// Usage and Cost are the call's own model calls'.
	Usage ptk.Usage `json:"usage,omitzero"`
	Cost  float64   `json:"cost,omitempty"`
	Span
}

// Step is a span of a run that is neither a model, tool nor ptool call: a
// distill run's round, a candidate's check (compile, tests, the scores).
type Step struct {
	Name string `json:"name"`
	// Status is the step's verdict: StepOK, StepFailed, StepSkipped.
	Status string `json:"status,omitempty"`
	// Note says the outcome in a few words ("12/14 held-out calls equal"),
	// never the data it was reached on.
	Note string `json:"note,omitempty"`
	// Attrs are the step's figures and names (strings, numbers, booleans),
	// sent over OpenTelemetry as ptk.step.* attributes.
	Attrs    map[string]any `json:"attrs,omitempty"`
	Duration Millis         `json:"duration_ms"`
	Span
}

// The verdicts of a step (Step.Status).
const (
	StepOK      = "ok"
	StepFailed  = "failed"
	StepSkipped = "skipped"
)

// Request is what a gateway request's run (KindRequest) keeps as its
// Detail: which API and route, how it was answered, and the model the
// client named beside the one that served it.
type Request struct {
	// API is "chat" (Chat Completions), "messages" (Anthropic Messages)
	// or "responses".
	API    string `json:"api"`
	Method string `json:"method"`
	Route  string `json:"route"`
	// Status is the HTTP status the client got (499: it went away; a
	// stream that failed after it began keeps its 200, with Error).
	Status int `json:"status"`
	// Asked is the model the client named; Model the one that served it.
	Asked  string `json:"asked,omitempty"`
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	// Mode is how the gateway served it (ptk, native, passthrough, tools/…).
	Mode  string `json:"mode,omitempty"`
	Calls int    `json:"calls,omitempty"`
	Error string `json:"error,omitempty"`
}

// Attempt is one try of a ptool call.
type Attempt struct {
	Output   string   `json:"output,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// NewID returns a new run id: sortable by time (the first 13 hex digits are
// microseconds since the epoch), then 6 random hex digits.
func NewID() string {
	var b [3]byte
	rand.Read(b[:])
	us := time.Now().UnixMicro()
	s := strconv.FormatInt(us, 16)
	for len(s) < 13 {
		s = "0" + s
	}
	return s + hex.EncodeToString(b[:])
}

// Cap cuts s to at most n bytes at a UTF-8 boundary and reports whether it
// cut.
func Cap(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}
