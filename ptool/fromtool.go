package ptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ptkit/ptk"
)

// anyOutput is the output schema of a plain tool: any JSON value.
var anyOutput = json.RawMessage(`{"description": "the tool's result: its JSON, or its text as a string"}`)

// ToolFunc is a plain tool held in a Registry, so that a workflow step can
// call it by name as it calls a ptool: its input is the tool's
// parameters, its output the tool's result, read as JSON when it is JSON
// and as a string otherwise. A result marked as an error fails the call.
type ToolFunc struct {
	tool ptk.Tool
	spec *Spec
}

var (
	_ Func       = (*ToolFunc)(nil)
	_ JSONCaller = (*ToolFunc)(nil)
)

// FromTool makes t a Func for a Registry. Its name must be one a ptool may
// have, and its parameters a JSON Schema object.
func FromTool(t ptk.Tool) (*ToolFunc, error) {
	info := t.Info()
	params := info.Parameters
	if len(params) == 0 {
		params = json.RawMessage(`{"type": "object", "properties": {}}`)
	}
	s, err := newSpec(info.Name, info.Description, params, anyOutput, nil, "")
	if err != nil {
		return nil, fmt.Errorf("the tool %q: %w", info.Name, err)
	}
	return &ToolFunc{tool: t, spec: s}, nil
}

// Spec describes the tool as a function: its name, description, input
// schema, and an output of any type.
func (f *ToolFunc) Spec() *Spec { return f.spec }

// Info is the tool's own.
func (f *ToolFunc) Info() ptk.ToolInfo { return f.tool.Info() }

// Run runs the tool.
func (f *ToolFunc) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	return f.tool.Run(ctx, args)
}

// Unwrap returns the tool.
func (f *ToolFunc) Unwrap() ptk.Tool { return f.tool }

// CallJSON runs the tool with input and returns its result as JSON: the
// result's text when it is JSON, else the text as a JSON string. A result
// marked as an error is an error; there is no Record (nil).
func (f *ToolFunc) CallJSON(ctx context.Context, input json.RawMessage) (json.RawMessage, *Record, error) {
	if err := f.spec.in.Validate(input); err != nil {
		return nil, nil, fmt.Errorf("%s: invalid input: %w", f.spec.Name, err)
	}
	r, err := f.tool.Run(ctx, input)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.spec.Name, err)
	}
	if r.IsError {
		return nil, nil, errors.New(f.spec.Name + ": " + r.Content)
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(r.Content)) == nil {
		return b.Bytes(), nil, nil
	}
	text, err := json.Marshal(r.Content)
	return text, nil, err
}
