package acp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
)

// planToolName is the tool the model writes its plan with; the editor shows
// the plan as it changes.
const planToolName = "update_plan"

type planArgs struct {
	Entries []planEntry `json:"entries" jsonschema:"The whole plan, in order: every step, done or not."`
}

type planEntry struct {
	Content  string `json:"content" jsonschema:"What the step does, in a short sentence."`
	Status   string `json:"status" jsonschema:"pending, in_progress or completed." enum:"pending,in_progress,completed"`
	Priority string `json:"priority,omitempty" jsonschema:"high, medium or low; default medium." enum:"high,medium,low"`
}

// planTool shows the model's plan to the user. It changes nothing, so it
// needs no approval; the session sends the plan when the call is answered.
var planTool = tool.New(planToolName,
	"Write or update your plan for the task: the whole list of steps, each pending, in_progress or completed. "+
		"The user sees it beside the conversation. Call it when you start a task of several steps, and again as each step starts and ends.",
	func(_ context.Context, a planArgs) (ptk.Result, error) {
		if len(a.Entries) == 0 {
			return ptk.Result{Content: "the plan has no entries: give every step", IsError: true}, nil
		}
		done := 0
		for _, e := range a.Entries {
			if e.Status == "completed" {
				done++
			}
		}
		return ptk.Result{Content: fmt.Sprintf("The plan is updated: %d steps, %d done. The user sees it.", len(a.Entries), done)}, nil
	}, tool.ReadOnly())

// planEntries reads a plan call's arguments as ACP's plan entries.
func planEntries(args json.RawMessage) ([]sdk.PlanEntry, bool) {
	var a planArgs
	if json.Unmarshal(args, &a) != nil || len(a.Entries) == 0 {
		return nil, false
	}
	out := make([]sdk.PlanEntry, 0, len(a.Entries))
	for _, e := range a.Entries {
		p := sdk.PlanEntry{Content: oneLine(e.Content), Status: sdk.PlanEntryStatusPending, Priority: sdk.PlanEntryPriorityMedium}
		switch e.Status {
		case "in_progress":
			p.Status = sdk.PlanEntryStatusInProgress
		case "completed":
			p.Status = sdk.PlanEntryStatusCompleted
		}
		switch e.Priority {
		case "high":
			p.Priority = sdk.PlanEntryPriorityHigh
		case "low":
			p.Priority = sdk.PlanEntryPriorityLow
		}
		out = append(out, p)
	}
	return out, true
}
