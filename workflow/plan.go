package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
)

// DefaultPlanRounds is how many plans Plan asks for at most when
// PlanOptions says 0.
const DefaultPlanRounds = 3

// PlanOptions configure Plan.
type PlanOptions struct {
	// Model writes the plan (structured output where the provider has it).
	Model llm.Model
	// Rounds bounds the plans asked for: a plan that fails Check is asked
	// again with its problems (DefaultPlanRounds when 0).
	Rounds int
	// Options are added to the planning ptool's (WithObserver to record
	// each call, WithMode, WithMaxAttempts...).
	Options []ptool.Option
}

const planDoc = `Write a workflow that reaches the goal by calling the ptools listed, one call per step, in order.

A step is {"ptool": NAME, "args": {ARGUMENT: VALUE, ...}, "goal": WHY}. A value is a literal (JSON), or the output of an earlier step: {"$ref": "step_N"} for the whole output of step N (steps count from 0), {"$ref": "step_N", "path": "/field/0"} for a value inside it, at a JSON Pointer. A step may use only earlier steps' outputs, and each value must have the type the argument takes.

Use only the ptools listed, with the arguments their signatures take. When the problems of an earlier plan are given, write the whole plan again with every problem fixed.`

var planInput = json.RawMessage(`{"type": "object", "properties": {
  "goal": {"type": "string", "description": "what the workflow is for"},
  "ptools": {"type": "string", "description": "the ptools that may be called: signature, then doc"},
  "earlier_plan": {"type": "string", "description": "a plan that did not pass the check"},
  "problems": {"type": "array", "items": {"type": "string"}, "description": "what was wrong with the earlier plan"}},
 "required": ["goal", "ptools"]}`)

// planOutput is the plan's schema; the ptools' names are its enum.
func planOutput(names []string) json.RawMessage {
	enum, _ := json.Marshal(names)
	return json.RawMessage(`{"type": "object", "properties": {"steps": {"type": "array", "minItems": 1, "items": {
  "type": "object", "properties": {
    "ptool": {"type": "string", "enum": ` + string(enum) + `},
    "args": {"type": "object"},
    "goal": {"type": "string"}},
  "required": ["ptool", "args", "goal"]}}}, "required": ["steps"]}`)
}

type planIn struct {
	Goal     string   `json:"goal"`
	PTools   string   `json:"ptools"`
	Earlier  string   `json:"earlier_plan,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

type planOut struct {
	Steps []struct {
		PTool string          `json:"ptool"`
		Args  json.RawMessage `json:"args"`
		Goal  string          `json:"goal"`
	} `json:"steps"`
}

// Plan asks a model for a trace that reaches goal with reg's ptools, given
// their signatures and docs, and checks it; a plan with problems is asked
// again with them, up to Rounds. It returns the first plan that passes
// Check, or the last one with a *CheckError. No ptool of reg is called.
func Plan(ctx context.Context, goal string, reg *ptool.Registry, opts PlanOptions) (*Trace, error) {
	var names []string
	for _, s := range reg.List() {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return nil, errors.New("workflow: no ptools to plan with")
	}
	popts := append([]ptool.Option{ptool.WithModel(opts.Model)}, opts.Options...)
	planner, err := ptool.Def{Name: "plan_workflow", Doc: planDoc, Input: planInput, Output: planOutput(names)}.New(popts...)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	rounds := opts.Rounds
	if rounds <= 0 {
		rounds = DefaultPlanRounds
	}
	in := planIn{Goal: goal, PTools: reg.Describe()}
	var tr *Trace
	var cerr error
	for range rounds {
		raw, _, err := planner.CallJSON(ctx, Args(in))
		if err != nil {
			return tr, fmt.Errorf("workflow: planning: %w", err)
		}
		var out planOut
		if err := json.Unmarshal(raw, &out); err != nil {
			return tr, fmt.Errorf("workflow: the plan: %w", err)
		}
		tr = &Trace{Version: Version, ID: NewID(), Goal: goal, Steps: []Step{}}
		for _, s := range out.Steps {
			tr.Steps = append(tr.Steps, Step{PTool: s.PTool, Args: s.Args, Goal: s.Goal})
		}
		probs := Check(tr, reg)
		if probs == nil {
			return tr, nil
		}
		cerr = &CheckError{probs}
		in.Earlier = string(raw)
		in.Problems = in.Problems[:0]
		for _, p := range probs {
			in.Problems = append(in.Problems, p.String())
		}
	}
	return tr, cerr
}
