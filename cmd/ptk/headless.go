package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
)

// Output formats of ptk run (--output-format).
const (
	formatText       = "text"
	formatJSON       = "json"
	formatStreamJSON = "stream-json"
)

// streamVersion is the version of the stream-json events' schema
// (docs/headless.schema.json): it changes when a field changes meaning or
// goes; new fields and new event types may come without it changing.
const streamVersion = 1

// Exit statuses of ptk run, documented in docs/headless.md.
const (
	exitAnswered    = 0
	exitRunFailed   = 1
	exitUsageError  = 2
	exitLimit       = 3
	exitInterrupted = 130
)

// exitError is a failure with an exit status other than 1.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// limitCodes are the codes of a run stopped by one of its limits: exit
// status 3. TOOL_CALL_DENIED ends a run only through the repeat guard (the
// model kept asking for a call that was denied).
var limitCodes = []ptk.Code{ptk.MaxIterationsReached, ptk.MaxToolCallsReached, ptk.BudgetExceeded,
	ptk.Timeout, ptk.ContextFull, ptk.DuplicateToolCall, ptk.ToolCallDenied}

// runExitCode is the exit status of a run that ended with err (nil:
// answered).
func runExitCode(err error) int {
	switch code := ptk.CodeOf(err); {
	case err == nil:
		return exitAnswered
	case code == ptk.Canceled:
		return exitInterrupted
	case code == ptk.InvalidConfig:
		return exitUsageError
	default:
		for _, c := range limitCodes {
			if code == c {
				return exitLimit
			}
		}
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsageError
	}
	return exitRunFailed
}

// streamWriter writes a run's events as JSON lines (--output-format
// stream-json), each flushed as it comes.
type streamWriter struct {
	enc *json.Encoder
	err error
}

func newStreamWriter(w io.Writer) *streamWriter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &streamWriter{enc: enc}
}

// write writes one event; after a failed write (stdout closed) it writes
// nothing more.
func (s *streamWriter) write(v any) {
	if s.err == nil {
		s.err = s.enc.Encode(v)
	}
}

type jsonUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

func usageOf(u ptk.Usage) jsonUsage { return jsonUsage{u.PromptTokens, u.CompletionTokens} }

type jsonError struct {
	Code    ptk.Code `json:"code"`
	Message string   `json:"message"`
}

// init is the first event: what the run is.
type streamInit struct {
	Type      string   `json:"type"`
	Version   int      `json:"version"`
	Model     string   `json:"model"`
	Mode      string   `json:"mode"`
	Workspace string   `json:"workspace"`
	Tools     []string `json:"tools"`
	// ContextWindow is the window given with --context, or null: the run
	// finds it (see the context events).
	ContextWindow *int `json:"context_window"`
}

// event writes one agent event, when it is one the stream has.
func (s *streamWriter) event(e agent.Event) {
	it := e.Iteration
	switch e.Kind {
	case agent.EventIteration:
		s.write(map[string]any{"type": "model_call", "iteration": it})
	case agent.EventText, agent.EventReasoning:
		if e.Text == "" {
			return
		}
		kind := "text"
		if e.Kind == agent.EventReasoning {
			kind = "reasoning"
		}
		s.write(map[string]any{"type": kind, "iteration": it, "text": e.Text})
	case agent.EventCallEnd:
		if e.Call == nil {
			return
		}
		ev := map[string]any{"type": "tool_call", "iteration": it, "index": e.Index, "id": e.Call.ID, "tool": e.Call.Tool, "args": jsonArgs(e.Call.Args)}
		if e.Err != nil {
			ev["error"] = jsonError{e.Err.Code, e.Err.Message}
		}
		s.write(ev)
	case agent.EventToolResult:
		if e.Call == nil || e.ToolResult == nil {
			return
		}
		s.write(map[string]any{"type": "tool_result", "iteration": it, "index": e.Index, "id": e.Call.ID, "tool": e.Call.Tool,
			"content": e.ToolResult.Content, "is_error": e.ToolResult.IsError, "cached": e.Cached, "duration_ms": millis(e.Duration.Seconds())})
	case agent.EventDenied:
		s.approval("denied", it, e.Index, e.Call, e.Text)
	case agent.EventDuplicate:
		if e.Call != nil {
			s.write(map[string]any{"type": "duplicate", "iteration": it, "index": e.Index, "id": e.Call.ID, "tool": e.Call.Tool, "text": e.Text})
		}
	case agent.EventModeSwitch:
		s.write(map[string]any{"type": "mode_switch", "iteration": it, "text": e.Text})
	case agent.EventModelDone:
		s.write(map[string]any{"type": "model_done", "iteration": it, "usage": usageOf(e.Usage), "cost": e.Cost})
	case agent.EventContext:
		if f := e.Fill; f != nil {
			s.write(map[string]any{"type": "context", "iteration": it, "tokens": f.Tokens, "window": f.Window, "percent": f.Percent(), "measured": f.Measured})
		}
	case agent.EventCompact:
		if c := e.Compaction; c != nil {
			s.write(map[string]any{"type": "compaction", "iteration": it, "reason": c.Reason, "replaced": c.Replaced, "kept": c.Kept,
				"tokens_before": c.Before, "tokens_after": c.After, "window": c.Window, "calls": c.Calls, "usage": usageOf(c.Usage), "cost": c.Cost})
		}
	}
}

// approval writes an approval event: "asked" when the user is asked,
// "denied" when the call was not allowed.
func (s *streamWriter) approval(decision string, iteration, index int, c *ptk.Call, reason string) {
	if c == nil {
		return
	}
	ev := map[string]any{"type": "approval", "decision": decision, "iteration": iteration, "id": c.ID, "tool": c.Tool, "args": jsonArgs(c.Args)}
	if index >= 0 {
		ev["index"] = index
	}
	if reason != "" {
		ev["reason"] = reason
	}
	s.write(ev)
}

// runJSON is the final object of a run: the one object of --output-format
// json, and the result event of stream-json.
type runJSON struct {
	Type           string          `json:"type,omitempty"`
	Success        bool            `json:"success"`
	Content        string          `json:"content"`
	Output         json.RawMessage `json:"output,omitempty"`
	Iterations     int             `json:"iterations"`
	ToolCalls      []runJSONTC     `json:"tool_calls"`
	TotalToolCalls int             `json:"total_tool_calls"`
	Denied         []runJSONTC     `json:"denied"`
	Invalid        []runJSONTC     `json:"invalid"`
	Error          *jsonError      `json:"error"`
	Usage          jsonUsage       `json:"usage"`
	Cost           float64         `json:"cost"`
	DurationMS     int64           `json:"duration_ms"`
	Compactions    *int            `json:"compactions,omitempty"`
	ExitCode       *int            `json:"exit_code,omitempty"`
}

// runJSONTC is a call: run, denied (with the reason the model was
// given), or invalid (with the error the model was given).
type runJSONTC struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Reason string          `json:"reason,omitempty"`
	Error  *jsonError      `json:"error,omitempty"`
}

// resultJSON is the final object for res, with the exit status and the
// compactions in stream-json's result event (stream).
func resultJSON(res *agent.Result, output json.RawMessage, exit int, stream bool) runJSON {
	out := runJSON{
		Success:        res.Success,
		Content:        res.Content,
		Output:         output,
		Iterations:     res.Iterations,
		ToolCalls:      []runJSONTC{},
		TotalToolCalls: res.TotalToolCalls,
		Denied:         []runJSONTC{},
		Invalid:        []runJSONTC{},
		Usage:          usageOf(res.Usage),
		Cost:           res.Cost,
		DurationMS:     res.Duration.Milliseconds(),
	}
	for _, tc := range res.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, runJSONTC{Tool: tc.Call.Tool, Args: jsonArgs(tc.Call.Args)})
	}
	for _, d := range res.Denied {
		out.Denied = append(out.Denied, runJSONTC{Tool: d.Call.Tool, Args: jsonArgs(d.Call.Args), Reason: d.Reason})
	}
	for _, c := range res.Invalid {
		out.Invalid = append(out.Invalid, runJSONTC{Tool: c.Call.Tool, Args: jsonArgs(c.Call.Args), Error: &jsonError{Code: c.Err.Code, Message: c.Err.Message}})
	}
	if res.Error != nil {
		out.Error = &jsonError{Code: res.Error.Code, Message: res.Error.Message}
	}
	if stream {
		n := len(res.Compactions)
		out.Type, out.Compactions, out.ExitCode = "result", &n, &exit
	}
	return out
}

func writeRunJSON(w io.Writer, res *agent.Result) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(resultJSON(res, nil, 0, false))
}

// jsonArgs is a call's arguments as compact JSON, or {} when the model
// wrote something that is not JSON.
func jsonArgs(args []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		return json.RawMessage("{}")
	}
	return b.Bytes()
}

func millis(seconds float64) float64 { return math.Round(seconds*1e6) / 1e3 }
