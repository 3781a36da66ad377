package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/ptool"
)

// Version is the version of the trace format this package writes. A trace
// of an earlier version reads unchanged; fields a later version adds are
// ignored by an earlier one.
const Version = 1

// Status is where a step is.
type Status string

// The statuses of a step.
const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	// StatusSkipped: the step never ran, because a step it needs did not
	// complete, the run stopped at a failure, or it was canceled.
	StatusSkipped Status = "skipped"
)

// Trace is a workflow: a goal and the steps that reach it. Run returns it
// filled in; as JSON it round-trips exactly.
type Trace struct {
	// Version is the format's version (Version when written by this package).
	Version int `json:"version,omitempty"`
	// ID names the trace; Run gives one to a trace that has none.
	ID string `json:"id,omitempty"`
	// Goal is what the workflow is for.
	Goal string `json:"goal"`
	// Steps run in dependency order; a step refers only to earlier ones.
	Steps []Step `json:"steps"`
	// Start and Duration are the run's, once run.
	Start    time.Time     `json:"start,omitzero"`
	Duration time.Duration `json:"duration_ns,omitempty"`
}

// Step is one ptool call of a trace.
type Step struct {
	// ID is how references name the step; empty means "step_N", N its
	// position from 0 (see Trace.StepID).
	ID string `json:"id,omitempty"`
	// PTool is the name of what the step calls in the registry: a ptool,
	// or a plain tool registered with ptool.FromTool.
	PTool string `json:"ptool"`
	// Args is the input, a JSON object; a value {"$ref": "step_N"} or
	// {"$ref": "step_N", "path": "/pointer"} stands for an earlier step's
	// output, or the value at path in it.
	Args json.RawMessage `json:"args"`
	// Expects is the JSON Schema of the output (the ptool's output schema),
	// for a reader of the trace; Check fills it in where empty.
	Expects json.RawMessage `json:"expects,omitempty"`
	// Goal says why this step is here.
	Goal string `json:"goal,omitempty"`

	// Status, Result (the output as JSON) and Error are what the step did.
	Status Status          `json:"status,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Input is the input the ptool was called with, references resolved.
	Input json.RawMessage `json:"input,omitempty"`
	// Attempts counts the model calls the ptool made (its own retries).
	Attempts int           `json:"attempts,omitempty"`
	Usage    ptk.Usage     `json:"usage,omitzero"`
	Cost     float64       `json:"cost,omitempty"`
	Duration time.Duration `json:"duration_ns,omitempty"`
	// Record is the ptool's record of the call, when the ptool keeps one.
	Record *ptool.Record `json:"record,omitempty"`
}

// StepID returns the id of step i: its ID, or "step_i".
func (t *Trace) StepID(i int) string {
	if id := t.Steps[i].ID; id != "" {
		return id
	}
	return "step_" + strconv.Itoa(i)
}

// Index returns the position of the step with id, or -1.
func (t *Trace) Index(id string) int {
	for i := range t.Steps {
		if t.StepID(i) == id {
			return i
		}
	}
	return -1
}

// Clone returns a deep copy of t, which a run may fill in.
func (t *Trace) Clone() *Trace {
	c := *t
	c.Steps = make([]Step, len(t.Steps))
	for i, s := range t.Steps {
		s.Args, s.Expects, s.Result, s.Input = cloneRaw(s.Args), cloneRaw(s.Expects), cloneRaw(s.Result), cloneRaw(s.Input)
		if s.Record != nil {
			r := *s.Record
			r.Input, r.Output = cloneRaw(r.Input), cloneRaw(r.Output)
			r.Attempts = slices.Clone(r.Attempts)
			s.Record = &r
		}
		c.Steps[i] = s
	}
	return &c
}

// Reset returns a copy of t to run afresh: each step as it was planned
// (ptool, arguments, expected output, goal), without what a run did.
func (t *Trace) Reset() *Trace {
	c := t.Clone()
	c.Start, c.Duration = time.Time{}, 0
	for i, s := range c.Steps {
		c.Steps[i] = Step{ID: s.ID, PTool: s.PTool, Args: s.Args, Expects: s.Expects, Goal: s.Goal}
	}
	return c
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return slices.Clone(b)
}

// Parse reads a trace from JSON; fields it does not know are ignored, so a
// trace written by a later version reads too.
func Parse(data []byte) (*Trace, error) {
	var t Trace
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("workflow: the trace: %w", err)
	}
	return &t, nil
}

// Reference is an argument that stands for an earlier step's output: the
// whole output, or the value at Path, a JSON Pointer (RFC 6901) into it.
// As JSON it is {"$ref": "step_0", "path": "/items/0"}.
type Reference struct {
	Step string `json:"$ref"`
	Path string `json:"path,omitempty"`
}

// Ref returns a reference to step's output, or to the value at path in it.
func Ref(step string, path ...string) Reference {
	return Reference{Step: step, Path: strings.Join(path, "")}
}

func (r Reference) String() string {
	if r.Path == "" {
		return r.Step
	}
	return r.Step + r.Path
}

// Args marshals v (a struct or a map, which may hold References) as a
// step's arguments; it panics if v is not JSON.
func Args(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("workflow.Args: %v", err))
	}
	return b
}

// refAt is a reference found in a step's arguments, with where it is.
type refAt struct {
	Reference
	At string // the JSON Pointer of the argument in Args
}

// decodeArgs reads a step's arguments, keeping numbers as written.
func decodeArgs(raw json.RawMessage) (any, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the arguments")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("the arguments are %s, not an object", kindOf(v))
	}
	return v, nil
}

// asRef reports whether v is a reference (an object with "$ref"), and
// says what is wrong with a malformed one (not {"$ref": string, "path"?:
// string}).
func asRef(v any) (Reference, bool, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return Reference{}, false, ""
	}
	raw, ok := m["$ref"]
	if !ok {
		return Reference{}, false, ""
	}
	step, ok := raw.(string)
	if !ok || step == "" {
		return Reference{}, true, `"$ref" must name a step, as a string`
	}
	r := Reference{Step: step}
	for k, x := range m {
		switch k {
		case "$ref":
		case "path":
			p, ok := x.(string)
			if !ok || (p != "" && p[0] != '/') {
				return r, true, `"path" must be a JSON Pointer, such as "/items/0"`
			}
			r.Path = p
		default:
			return r, true, fmt.Sprintf("a reference has only \"$ref\" and \"path\", not %q", k)
		}
	}
	return r, true, ""
}

// walkRefs calls f for each reference in v, with its pointer, and bad for
// each malformed one; it does not look inside references.
func walkRefs(v any, at string, f func(refAt), bad func(at, msg string)) {
	if r, isRef, msg := asRef(v); isRef {
		if msg != "" {
			bad(at, msg)
		} else {
			f(refAt{r, at})
		}
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			walkRefs(e, at+"/"+escape(k), f, bad)
		}
	case []any:
		for i, e := range x {
			walkRefs(e, at+"/"+strconv.Itoa(i), f, bad)
		}
	}
}

// substitute returns v with each reference replaced by what value returns
// for it.
func substitute(v any, value func(Reference) (any, error)) (any, error) {
	if r, isRef, msg := asRef(v); isRef {
		if msg != "" {
			return nil, errors.New(msg)
		}
		return value(r)
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) { // in order: value may count
			e := x[k]
			s, err := substitute(e, value)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			s, err := substitute(e, value)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	return v, nil
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// tokens splits a JSON Pointer into its reference tokens.
func tokens(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := strings.Split(ptr[1:], "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts
}

// pointerGet returns the value at ptr in v.
func pointerGet(v any, ptr string) (any, error) {
	for _, tok := range tokens(ptr) {
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[tok]
			if !ok {
				return nil, fmt.Errorf("no %q", tok)
			}
			v = e
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("no item %s of %d", tok, len(x))
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("%s has no %q", kindOf(v), tok)
		}
	}
	return v, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
