package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
)

// NewRunID returns a new id for a run: "ptk-" and 16 hex digits.
func NewRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ptk-" + hex.EncodeToString(b[:])
}

// StartOptions say where a run goes: its id (NewRunID when empty) and task
// queue (DefaultTaskQueue when empty).
type StartOptions struct {
	ID        string
	TaskQueue string
}

func (o StartOptions) workflow() client.StartWorkflowOptions {
	if o.ID == "" {
		o.ID = NewRunID()
	}
	if o.TaskQueue == "" {
		o.TaskQueue = DefaultTaskQueue
	}
	return client.StartWorkflowOptions{ID: o.ID, TaskQueue: o.TaskQueue}
}

// StartAgent starts an agent run and returns it; its Get waits for the
// AgentOutput.
func StartAgent(ctx context.Context, c client.Client, in AgentInput, o StartOptions) (client.WorkflowRun, error) {
	if len(in.Messages) == 0 {
		return nil, errors.New("an agent run needs a conversation: at least one message")
	}
	return c.ExecuteWorkflow(ctx, o.workflow(), AgentWorkflow, in)
}

// StartReAct starts a ReAct run; its Get waits for the ReActOutput.
func StartReAct(ctx context.Context, c client.Client, in ReActInput, o StartOptions) (client.WorkflowRun, error) {
	if in.Goal == "" {
		return nil, errors.New("a ReAct run needs a goal")
	}
	return c.ExecuteWorkflow(ctx, o.workflow(), ReActWorkflow, in)
}

// StartPlan starts a run of a workflow of ptools; its Get waits for the
// PlanOutput.
func StartPlan(ctx context.Context, c client.Client, in PlanInput, o StartOptions) (client.WorkflowRun, error) {
	if in.Trace == nil || len(in.Trace.Steps) == 0 {
		return nil, errors.New("a workflow run needs a trace with steps")
	}
	return c.ExecuteWorkflow(ctx, o.workflow(), PlanWorkflow, in)
}

// Status returns the progress of run id, with its events from the
// from-th on. A run that has ended answers too.
func Status(ctx context.Context, c client.Client, id string, from int) (*Progress, error) {
	v, err := c.QueryWorkflow(ctx, id, "", ProgressQuery, from)
	if err != nil {
		return nil, err
	}
	var p Progress
	if err := v.Get(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Approve sends run id the decision about one of its calls.
func Approve(ctx context.Context, c client.Client, id string, d Decision) error {
	if d.CallID == "" {
		return errors.New("a decision names the call it is about")
	}
	return c.SignalWorkflow(ctx, id, "", ApprovalSignal, d)
}

// Cancel asks run id to stop: the calls running are canceled, the run
// records what it did and ends canceled.
func Cancel(ctx context.Context, c client.Client, id string) error {
	return c.CancelWorkflow(ctx, id, "")
}

// Follow calls each with the run's events as they come, polling its
// progress every interval, until the run ends or ctx does; it returns the
// last progress.
func Follow(ctx context.Context, c client.Client, id string, every time.Duration, each func(Event, *Progress)) (*Progress, error) {
	next := 0
	for {
		p, err := Status(ctx, c, id, next)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		for _, e := range p.Events {
			each(e, p)
		}
		next = p.NextEvent
		switch p.State {
		case StateDone, StateFailed, StateCanceled:
			return p, nil
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return p, ctx.Err()
		case <-t.C:
		}
	}
}
