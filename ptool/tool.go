package ptool

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/ptkit/ptk"
)

// Func is what a Registry holds: any ptool, typed (*PTool), distilled
// (*Distilled) or declarative (Load), as a ptk.Tool with its Spec.
type Func interface {
	ptk.Tool
	Spec() *Spec
}

// JSONCaller is a ptool called with its input as JSON that gives its output
// as JSON and keeps a Record of the call: *PTool, *Distilled and the
// declarative ptools of Load are. A workflow step or a ReAct action that
// calls one keeps its record; a Func that is not one runs as a tool.
type JSONCaller interface {
	CallJSON(ctx context.Context, input json.RawMessage) (json.RawMessage, *Record, error)
}

var (
	_ Func       = (*PTool[struct{}, string])(nil)
	_ Func       = (*Distilled[struct{}, string])(nil)
	_ JSONCaller = (*PTool[struct{}, string])(nil)
	_ JSONCaller = (*Distilled[struct{}, string])(nil)
)

// A RecordRunner is a Func that runs somewhere else (a durable worker's
// activity) and brings back the Record of the call with its result, which
// RunRecord then gives.
type RecordRunner interface {
	RunRecord(ctx context.Context, args json.RawMessage) (ptk.Result, *Record, error)
}

// RunRecord runs f as a tool, as f.Run does, and returns the Record of the
// call when f keeps one (a JSONCaller or a RecordRunner), else nil: what
// an agent that calls ptools as tools records of them.
func RunRecord(ctx context.Context, f Func, args json.RawMessage) (ptk.Result, *Record, error) {
	if rr, ok := f.(RecordRunner); ok {
		return rr.RunRecord(ctx, args)
	}
	jc, ok := f.(JSONCaller)
	if !ok {
		r, err := f.Run(ctx, args)
		return r, nil, err
	}
	var rec *Record
	r, err := runTool(ctx, f.Spec(), args, func(ctx context.Context, args json.RawMessage) (any, error) {
		out, rc, err := jc.CallJSON(ctx, args)
		rec = rc
		return out, err
	})
	return r, rec, err
}

// Info describes the ptool as a tool an agent's model may call: its name,
// its doc with the type of what it returns, and its input schema.
func (p *PTool[In, Out]) Info() ptk.ToolInfo { return p.fn.spec.info() }

// Run calls the ptool with args, the input as JSON, as a tool does: input
// that does not fit the schema, an abstention and answers that never fit
// are results marked IsError, for the calling model to read; a provider's
// failure or a canceled context is the error.
func (p *PTool[In, Out]) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	return runTool(ctx, p.fn.spec, args, func(ctx context.Context, args json.RawMessage) (any, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		return p.Call(ctx, in)
	})
}

func (s *Spec) info() ptk.ToolInfo {
	return ptk.ToolInfo{Name: s.Name, Description: s.Doc + "\nReturns " + s.outputType + ".", Parameters: s.Input, ReadOnly: true}
}

func runTool(ctx context.Context, s *Spec, args json.RawMessage, call func(context.Context, json.RawMessage) (any, error)) (ptk.Result, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if err := s.in.Validate(args); err != nil {
		return ptk.Result{Content: "invalid input: " + err.Error(), IsError: true}, nil
	}
	out, err := call(ctx, args)
	switch {
	case errors.Is(err, ErrAbstained), errors.Is(err, ErrAttempts), errors.Is(err, ErrBudget):
		return ptk.Result{Content: err.Error(), IsError: true}, nil
	case err != nil:
		return ptk.Result{}, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return ptk.Result{}, err
	}
	return ptk.Result{Content: string(b)}, nil
}
