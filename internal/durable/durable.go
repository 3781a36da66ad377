// Package durable is what ptk and ptk-temporal (module
// github.com/ptkit/ptk/temporal) say to each other about a durable agent
// run: the shapes of its events and its result, which package temporal
// exports as Event and AgentOutput, and the line protocol of
// 'ptk-temporal run --machine', through which ptk runs a turn durably
// without linking the Temporal SDK (ptk run --temporal's JSON output, ptk
// chat --temporal, ptk acp --temporal).
//
// The protocol, one JSON value a line:
//
//   - ptk writes a Start first, then Commands: a decision about a call that
//     waits for approval, or a cancel;
//   - ptk-temporal writes a Line of type "run" (the run's id), then one of
//     type "event" for each of the run's events, and last one of type
//     "result" (the run's Output) or "error" (the run could not be started
//     or followed).
//
// Everything in it is from outside the reader (a model's text, a tool's
// result, a worker): readers bound a line's length (MaxLine) and pass text
// to a terminal only through internal/term.
package durable

import (
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
)

// Event is one step of a durable run, as a follower shows it.
type Event struct {
	// Kind is model (a model call begins), text (the model's text),
	// call (the model made a call), model_done (the model call ended), tool (a call's tool runs),
	// result, denied, duplicate, waiting (for approval), switch (to the
	// text protocol), answer, or step (a ReAct or workflow step).
	Kind      string    `json:"kind"`
	Iteration int       `json:"iteration,omitempty"`
	Call      *ptk.Call `json:"call,omitempty"`
	Text      string    `json:"text,omitempty"`
	IsError   bool      `json:"is_error,omitempty"`
	// Code is the error's code of a call that could not run as written (a
	// result that is an error, with no tool event before it).
	Code ptk.Code `json:"code,omitempty"`
	// Usage and Cost are a model call's, on model_done.
	Usage *ptk.Usage `json:"usage,omitempty"`
	Cost  float64    `json:"cost,omitempty"`
}

// The kinds of Event.
const (
	KindModel     = "model"
	KindModelDone = "model_done"
	KindText      = "text"
	KindCall      = "call"
	KindTool      = "tool"
	KindResult    = "result"
	KindDenied    = "denied"
	KindDuplicate = "duplicate"
	KindWaiting   = "waiting"
	KindSwitch    = "switch"
	KindAnswer    = "answer"
	KindStep      = "step"
)

// Output is what an agent run did: agent.Result, as JSON.
type Output struct {
	Success    bool          `json:"success"`
	Content    string        `json:"content"`
	Iterations int           `json:"iterations"`
	Messages   []ptk.Message `json:"messages"`
	ToolCalls  []ToolCall    `json:"tool_calls"`
	// TotalToolCalls is the number of calls answered, which MaxToolCalls
	// caps.
	TotalToolCalls int `json:"total_tool_calls"`
	// Denied are the calls that were not allowed, with the reason the
	// model was given; Invalid the calls that could not run as written.
	Denied  []DeniedCall  `json:"denied,omitempty"`
	Invalid []InvalidCall `json:"invalid,omitempty"`
	// Compactions are the run's compactions of its conversation.
	Compactions []agent.Compaction `json:"compactions,omitempty"`
	// Error says why a failed run failed.
	Error    *RunError     `json:"error,omitempty"`
	Limit    ptk.Code      `json:"limit,omitempty"`
	Usage    ptk.Usage     `json:"usage"`
	Cost     float64       `json:"cost"`
	Duration time.Duration `json:"duration_ns"`
	Mode     agent.Mode    `json:"mode"`
}

// ToolCall is one call answered in a run.
type ToolCall struct {
	Call      ptk.Call      `json:"call"`
	Result    ptk.Result    `json:"result"`
	Iteration int           `json:"iteration"`
	Duration  time.Duration `json:"duration_ns"`
	Tries     int           `json:"tries"`
	Cached    bool          `json:"cached,omitempty"`
}

// DeniedCall is a call that was not allowed.
type DeniedCall struct {
	Call      ptk.Call `json:"call"`
	Iteration int      `json:"iteration"`
	Reason    string   `json:"reason"`
}

// InvalidCall is a call that could not run as written.
type InvalidCall struct {
	Call      ptk.Call  `json:"call"`
	Iteration int       `json:"iteration"`
	Error     *RunError `json:"error"`
}

// RunError is a ptk.Error as JSON.
type RunError struct {
	Code    ptk.Code `json:"code"`
	Message string   `json:"message"`
}

// Err returns the error as a *ptk.Error.
func (e *RunError) Err() *ptk.Error {
	if e == nil {
		return nil
	}
	return ptk.NewError(e.Code, e.Message, nil)
}

func runError(e *ptk.Error) *RunError {
	if e == nil {
		return nil
	}
	return &RunError{Code: e.Code, Message: e.Message}
}

// NewOutput is res as an Output.
func NewOutput(res *agent.Result) *Output {
	out := &Output{Success: res.Success, Content: res.Content, Iterations: res.Iterations, Messages: res.Messages,
		ToolCalls: []ToolCall{}, TotalToolCalls: res.TotalToolCalls, Compactions: res.Compactions,
		Limit: res.Limit, Usage: res.Usage, Cost: res.Cost, Duration: res.Duration, Mode: res.Mode, Error: runError(res.Error)}
	for _, tc := range res.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{Call: tc.Call, Result: tc.Result, Iteration: tc.Iteration,
			Duration: tc.Duration, Tries: tc.Tries, Cached: tc.Cached})
	}
	for _, d := range res.Denied {
		out.Denied = append(out.Denied, DeniedCall{Call: d.Call, Iteration: d.Iteration, Reason: d.Reason})
	}
	for _, c := range res.Invalid {
		out.Invalid = append(out.Invalid, InvalidCall{Call: c.Call, Iteration: c.Iteration, Error: runError(c.Err)})
	}
	return out
}

// Result is the Output as the agent.Result it was made from (its Window
// is not carried: the zero Window, unknown).
func (o *Output) Result() *agent.Result {
	res := &agent.Result{Success: o.Success, Content: o.Content, Iterations: o.Iterations, Messages: o.Messages,
		TotalToolCalls: o.TotalToolCalls, Compactions: o.Compactions, Error: o.Error.Err(),
		Limit: o.Limit, Usage: o.Usage, Cost: o.Cost, Duration: o.Duration, Mode: o.Mode}
	for _, tc := range o.ToolCalls {
		res.ToolCalls = append(res.ToolCalls, agent.ToolCall{Call: tc.Call, Result: tc.Result, Iteration: tc.Iteration,
			Duration: tc.Duration, Tries: tc.Tries, Cached: tc.Cached})
	}
	for _, d := range o.Denied {
		res.Denied = append(res.Denied, agent.DeniedCall{Call: d.Call, Iteration: d.Iteration, Reason: d.Reason})
	}
	for _, c := range o.Invalid {
		res.Invalid = append(res.Invalid, agent.InvalidCall{Call: c.Call, Iteration: c.Iteration, Err: c.Error.Err()})
	}
	return res
}

// Start is the first line ptk writes: the conversation the run answers
// (its last message the user's turn).
type Start struct {
	Messages []ptk.Message `json:"messages"`
}

// Command is a line ptk writes after the Start: a decision about the call
// CallID, which waits for approval, or Cancel, which cancels the run (its
// result still comes).
type Command struct {
	CallID string `json:"call_id,omitempty"`
	Allow  bool   `json:"allow,omitempty"`
	Reason string `json:"reason,omitempty"`
	Cancel bool   `json:"cancel,omitempty"`
}

// The types of Line.
const (
	LineRun    = "run"
	LineEvent  = "event"
	LineResult = "result"
	LineError  = "error"
)

// Line is a line ptk-temporal writes.
type Line struct {
	Type   string  `json:"type"`
	ID     string  `json:"id,omitempty"`
	Event  *Event  `json:"event,omitempty"`
	Output *Output `json:"output,omitempty"`
	// Error says why the run could not be started or followed (type
	// error), and Code its ptk.Code when it has one.
	Error string   `json:"error,omitempty"`
	Code  ptk.Code `json:"code,omitempty"`
}

// MaxLine is the longest line a reader of the protocol takes: a result
// carries the whole conversation.
const MaxLine = 64 << 20
