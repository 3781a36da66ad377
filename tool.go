package ptk

import (
	"context"
	"encoding/json"
	"fmt"
)

// ToolInfo describes a tool to a model: its name, what it does and the JSON
// Schema of its arguments. It is all the protocol needs to know of a tool.
type ToolInfo struct {
	// Name is what the model writes to call the tool.
	Name string `json:"name"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments object. Nil means the
	// arguments are not described and are not checked; a tool that takes no
	// arguments says so with {"type": "object", "properties": {}}.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// ReadOnly reports that the tool changes nothing outside itself; read-only
	// tools run without approval.
	ReadOnly bool `json:"-"`
}

// Tool is something a model can call: a description and a handler.
//
// Run receives the validated arguments as a JSON object. What the model should
// see and correct (bad input, a missing file, a denied action) is returned as
// a [Result] with IsError set; a non-nil error is for what must end the run.
type Tool interface {
	Info() ToolInfo
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// Handler is the function behind a [Tool].
type Handler func(ctx context.Context, args json.RawMessage) (Result, error)

// NewTool returns a [Tool] made of a description and a handler.
func NewTool(info ToolInfo, h Handler) Tool { return funcTool{info: info, h: h} }

type funcTool struct {
	info ToolInfo
	h    Handler
}

var _ Tool = funcTool{}

func (t funcTool) Info() ToolInfo { return t.info }

func (t funcTool) Run(ctx context.Context, args json.RawMessage) (res Result, err error) {
	if t.h == nil {
		return Result{}, fmt.Errorf("tool %q has no handler", t.info.Name)
	}
	return t.h(ctx, args)
}
