package react

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/workflow"
)

// Trajectory is what a run did, as the ReAct paper and the seed describe
// it: the goal, each step's thought, action and observation, the final
// answer and whether the run succeeded. As JSON it round-trips exactly.
type Trajectory struct {
	ID          string `json:"id,omitempty"`
	Goal        string `json:"goal"`
	Steps       []Step `json:"steps"`
	FinalAnswer string `json:"final_answer,omitempty"`
	Success     bool   `json:"success"`
	// Stopped says why a run without an answer ended: "max_steps",
	// "canceled" or "error: …".
	Stopped string `json:"stopped,omitempty"`
	// Code is the class of what stopped a run without an answer (a
	// ptk.Code): MAX_ITERATIONS_REACHED at the step limit, LLM_CALL_FAILED
	// when the provider failed, CANCELED or TIMEOUT, INVALID_CONFIG when it
	// could not start.
	Code ptk.Code `json:"code,omitempty"`
	// Model, Usage, Cost, Start and Duration are the run's; Usage and Cost
	// count the ptool actions' model calls too.
	Model    string        `json:"model,omitempty"`
	Usage    ptk.Usage     `json:"usage,omitzero"`
	Cost     float64       `json:"cost,omitempty"`
	Start    time.Time     `json:"start,omitzero"`
	Duration time.Duration `json:"duration_ns,omitempty"`
}

// Step is one thought, the action it led to, and what the action returned.
// A final step has a thought (the answer's reasoning) and no action; so
// does a step whose reply had neither an action nor an answer (the model
// was asked for one, and the run went on).
type Step struct {
	Thought     Thought      `json:"thought"`
	Action      *Action      `json:"action,omitempty"`
	Observation *Observation `json:"observation,omitempty"`
	// Record is the ptool's record of a ptool action: its model calls,
	// with their usage and cost, which the trajectory's sums include.
	Record *ptool.Record `json:"record,omitempty"`
	// Call is the model call that wrote the thought, on the first step of
	// each call.
	Call *ModelCall `json:"call,omitempty"`
}

// ModelCall is one model call of a run: its usage, cost (US dollars),
// when it began and how long it took.
type ModelCall struct {
	Usage   ptk.Usage     `json:"usage,omitzero"`
	Cost    float64       `json:"cost,omitempty"`
	Start   time.Time     `json:"start,omitzero"`
	Latency time.Duration `json:"latency_ns,omitempty"`
}

// Thought is what the model wrote before acting; Step counts from 1.
type Thought struct {
	Content string `json:"content"`
	Step    int    `json:"step"`
}

// Action is a call of a ptool or a tool, with its arguments as written
// (after the parser's repairs).
type Action struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	// PTool reports that Name is a ptool (a typed function a model runs).
	PTool bool `json:"ptool,omitempty"`
}

// Observation is what an action returned, as the model read it, and whether
// it succeeded (a call that could not run, or a result marked as an error,
// did not).
type Observation struct {
	Result  string `json:"result"`
	Success bool   `json:"success"`
	// Code is the class of a failed action's error (a ptk.Code): the
	// model's mistake (INVALID_TOOL_CALL, TOOL_NOT_FOUND, PARSE_ERROR), a
	// denial (TOOL_CALL_DENIED) or the tool's failure
	// (TOOL_EXECUTION_FAILED).
	Code ptk.Code `json:"code,omitempty"`
}

// PTP renders the trajectory as Program Trace Prompting text, the form the
// PTP paper and the seed use for demonstrations: the goal, then for each
// action "Calling name(k=v, …)..." and "...name returned value" (or
// "...name failed: why"), then the final answer. Values are JSON; the
// arguments keep the order the model wrote them in.
func (t *Trajectory) PTP() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\n", oneLine(t.Goal))
	for _, s := range t.Steps {
		a := s.Action
		if a == nil {
			continue
		}
		fmt.Fprintf(&b, "Calling %s(%s)...\n", a.Name, callArgs(a.Args))
		if o := s.Observation; o != nil {
			if o.Success {
				fmt.Fprintf(&b, "...%s returned %s\n", a.Name, value(o.Result))
			} else {
				fmt.Fprintf(&b, "...%s failed: %s\n", a.Name, oneLine(o.Result))
			}
		}
	}
	if t.Success {
		fmt.Fprintf(&b, "Final answer: %s\n", oneLine(t.FinalAnswer))
	} else {
		fmt.Fprintf(&b, "No answer (%s)\n", t.Stopped)
	}
	return b.String()
}

// callArgs writes a JSON object's members as k=v, in their order.
func callArgs(args json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return compact(args)
	}
	var parts []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return compact(args)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return compact(args)
		}
		parts = append(parts, fmt.Sprintf("%v=%s", k, compact(v)))
	}
	return strings.Join(parts, ", ")
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return oneLine(string(raw))
	}
	return b.String()
}

// value writes a result: JSON compacted, other text quoted as a string.
func value(s string) string {
	if json.Valid([]byte(s)) {
		return compact([]byte(s))
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Trace turns the trajectory's successful actions into a workflow trace of
// the same calls, in order, each step completed with its result and the
// thought that led to it as its goal. An argument whose value is an earlier
// kept step's whole result, or a member or item of it, becomes a reference
// to it, so that the trace runs again on new data as a fixed workflow.
// Failed actions, the exploration's mistakes, are left out.
func (t *Trajectory) Trace() *workflow.Trace {
	tr := &workflow.Trace{Version: workflow.Version, ID: t.ID, Goal: t.Goal, Steps: []workflow.Step{}}
	// refs maps a value, as canonical JSON, to the reference an argument
	// equal to it becomes: each argument is looked up once, whatever the
	// length of the trajectory (a trajectory may come from anyone).
	refs := map[string]workflow.Reference{}
	for _, s := range t.Steps {
		a, o := s.Action, s.Observation
		if a == nil || o == nil || !o.Success {
			continue
		}
		id := fmt.Sprintf("step_%d", len(tr.Steps))
		result := json.RawMessage(value(o.Result))
		args := a.Args
		var m map[string]any
		if json.Unmarshal(a.Args, &m) == nil && m != nil {
			changed := false
			for k, v := range m {
				if !distinctive(v) {
					continue
				}
				if r, ok := refs[canonical(v)]; ok {
					m[k] = r
					changed = true
				}
			}
			if changed {
				args = workflow.Args(m)
			}
		}
		tr.Steps = append(tr.Steps, workflow.Step{PTool: a.Name, Args: args, Goal: s.Thought.Content,
			Status: workflow.StatusCompleted, Result: result})
		var v any
		if json.Unmarshal(result, &v) == nil {
			index(refs, id, v)
		}
	}
	return tr
}

// index adds the output of step id to refs: the whole of it, then each
// member (by name) or item (in order), the first of this step's values
// equal to another winning; a later step's replace an earlier one's, so
// that an argument refers to the latest step that returned its value.
func index(refs map[string]workflow.Reference, id string, out any) {
	mine := map[string]bool{}
	put := func(v any, r workflow.Reference) {
		if !distinctive(v) {
			return
		}
		key := canonical(v)
		if key == "" || mine[key] {
			return
		}
		mine[key] = true
		refs[key] = r
	}
	put(out, workflow.Ref(id))
	switch x := out.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			put(x[k], workflow.Ref(id, "/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")))
		}
	case []any:
		for i, e := range x {
			put(e, workflow.Ref(id, fmt.Sprintf("/%d", i)))
		}
	}
}

// canonical is a JSON value's text, its members in order: equal values
// have equal texts. It is "" for what cannot be written.
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func distinctive(v any) bool {
	switch x := v.(type) {
	case string:
		return len(x) >= 3
	case map[string]any, []any:
		return true
	}
	return false
}
