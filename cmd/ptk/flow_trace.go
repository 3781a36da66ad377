package main

import (
	"encoding/json"
	"errors"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/react"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/workflow"
)

// workflowTrace is a finished workflow run as a trace record: a run of kind
// workflow whose detail is the whole trace, with each step's ptool call.
func workflowTrace(t *workflow.Trace, runErr error) *trace.Record {
	rec := &trace.Record{Run: trace.Run{ID: trace.NewID(), Kind: trace.KindWorkflow, Name: t.ID, Input: t.Goal,
		StartedAt: t.Start, Duration: trace.Millis(t.Duration), Status: trace.StatusOK}}
	if rec.Name == "" {
		rec.Name = t.Goal
	}
	for _, s := range t.Steps {
		rec.Usage = rec.Usage.Add(s.Usage)
		rec.Cost += s.Cost
		if s.Record != nil {
			rec.PtoolCalls = append(rec.PtoolCalls, ptoolTrace(s.Record).PtoolCalls...)
		}
	}
	if n := len(t.Steps); n > 0 && runErr == nil {
		rec.Output = string(t.Steps[n-1].Result)
	}
	rec.Iterations = len(t.Steps)
	failed(&rec.Run, runErr)
	rec.Detail, _ = json.Marshal(t)
	return rec
}

// reactTrace is a ReAct run as a trace record: a run of kind react whose
// detail is the trajectory, with each action as a tool call and each ptool
// action's call as a ptool call.
func reactTrace(t *react.Trajectory, runErr error) *trace.Record {
	rec := &trace.Record{Run: trace.Run{ID: trace.NewID(), Kind: trace.KindReAct, Name: t.Goal, Model: t.Model,
		Input: t.Goal, Output: t.FinalAnswer, StartedAt: t.Start, Duration: trace.Millis(t.Duration),
		Usage: t.Usage, Cost: t.Cost, Iterations: len(t.Steps), Status: trace.StatusOK}}
	for i, s := range t.Steps {
		if s.Action == nil {
			continue
		}
		tc := trace.ToolCall{Iteration: i + 1, Tool: s.Action.Name, Args: s.Action.Args, Outcome: "ran"}
		if s.Observation != nil {
			tc.Result, tc.Truncated = trace.Cap(s.Observation.Result, trace.MaxResultBytes)
			tc.IsError = !s.Observation.Success
		}
		rec.ToolCalls = append(rec.ToolCalls, tc)
		if s.Record != nil {
			// the ptool action's own call, which distillation learns from
			rec.PtoolCalls = append(rec.PtoolCalls, ptoolTrace(s.Record).PtoolCalls...)
		}
	}
	rec.NumToolCalls = len(rec.ToolCalls)
	if runErr == nil && !t.Success {
		runErr = errors.New("no answer: " + t.Stopped)
	}
	failed(&rec.Run, runErr)
	// The trajectory with its Program Trace Prompting text, which the
	// dashboard shows as it is.
	rec.Detail, _ = json.Marshal(struct {
		*react.Trajectory
		PTP string `json:"ptp"`
	}{t, t.PTP()})
	return rec
}

// failed marks a run that ended with err.
func failed(r *trace.Run, err error) {
	if err == nil {
		return
	}
	r.Status, r.ErrorMessage = trace.StatusError, err.Error()
	r.ErrorCode = string(ptk.CodeOf(err))
}
