package temporal

import (
	"encoding/json"
	"errors"

	"go.temporal.io/sdk/workflow"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/internal/durable"
)

// The states of a run, in Progress.State.
const (
	StateRunning  = "running"
	StateWaiting  = "waiting" // for an approval
	StateDone     = "done"
	StateFailed   = "failed"
	StateCanceled = "canceled"
)

// Progress is what ProgressQuery returns: where a run is, the calls that
// wait for approval, and its events from the one the caller asked for.
type Progress struct {
	State     string    `json:"state"`
	Iteration int       `json:"iteration"`
	ToolCalls int       `json:"tool_calls"`
	Waiting   []Pending `json:"waiting,omitempty"`
	Events    []Event   `json:"events,omitempty"`
	NextEvent int       `json:"next_event"`
	Answer    string    `json:"answer,omitempty"`
	Error     string    `json:"error,omitempty"`
	ErrorCode ptk.Code  `json:"error_code,omitempty"`
}

// Pending is a call that waits for approval.
type Pending struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
}

// Event is one step of a run, as a follower shows it (the shape ptk and
// ptk-temporal share: internal/durable).
type Event = durable.Event

// maxEventText caps the text of an event in the run's state.
const maxEventText = 2000

// state is a run's progress, kept in the workflow for the query.
type state struct {
	p Progress
	// events are all the run's events; a query returns those asked for.
	events []Event
}

func newState(workflow.Context) *state { return &state{p: Progress{State: StateRunning}} }

func (s *state) progress(from int) (Progress, error) {
	p := s.p
	p.Waiting = append([]Pending(nil), s.p.Waiting...)
	if from < 0 {
		from = 0
	}
	if from < len(s.events) {
		p.Events = append([]Event(nil), s.events[from:]...)
	}
	p.NextEvent = len(s.events)
	return p, nil
}

func (s *state) add(e Event) {
	if len(e.Text) > maxEventText {
		e.Text = e.Text[:maxEventText] + "…"
	}
	s.events = append(s.events, e)
}

func (s *state) event(e agent.Event) {
	switch e.Kind {
	case agent.EventIteration:
		s.p.Iteration = e.Iteration
		s.add(Event{Kind: "model", Iteration: e.Iteration})
	case agent.EventModelDone:
		u := e.Usage
		s.add(Event{Kind: durable.KindModelDone, Iteration: e.Iteration, Usage: &u, Cost: e.Cost})
	case agent.EventToolStart:
		s.add(Event{Kind: "tool", Iteration: e.Iteration, Call: e.Call})
	case agent.EventToolResult:
		s.p.ToolCalls++
		ev := Event{Kind: "result", Iteration: e.Iteration, Call: e.Call}
		if e.ToolResult != nil {
			ev.Text, ev.IsError = e.ToolResult.Content, e.ToolResult.IsError
		}
		s.add(ev)
	case agent.EventText:
		s.add(Event{Kind: durable.KindText, Iteration: e.Iteration, Text: e.Text})
	case agent.EventCallEnd:
		if e.Err != nil {
			s.add(Event{Kind: "result", Iteration: e.Iteration, Call: e.Call, Text: e.Err.Message, IsError: true, Code: e.Err.Code})
		} else if e.Call != nil {
			s.add(Event{Kind: durable.KindCall, Iteration: e.Iteration, Call: e.Call})
		}
	case agent.EventDenied:
		s.add(Event{Kind: "denied", Iteration: e.Iteration, Call: e.Call, Text: e.Text, IsError: true})
	case agent.EventDuplicate:
		s.add(Event{Kind: "duplicate", Iteration: e.Iteration, Call: e.Call, Text: e.Text})
	case agent.EventModeSwitch:
		s.add(Event{Kind: "switch", Iteration: e.Iteration, Text: e.Text})
	case agent.EventFinal:
		s.add(Event{Kind: "answer", Iteration: e.Iteration, Text: e.Text})
	}
}

func (s *state) wait(c ptk.Call) {
	s.p.State = StateWaiting
	s.p.Waiting = append(s.p.Waiting, Pending{CallID: c.ID, Tool: c.Tool, Args: c.Args})
	cc := c
	s.add(Event{Kind: "waiting", Call: &cc})
}

func (s *state) done(callID string) {
	for i, p := range s.p.Waiting {
		if p.CallID == callID {
			s.p.Waiting = append(s.p.Waiting[:i:i], s.p.Waiting[i+1:]...)
			break
		}
	}
	if len(s.p.Waiting) == 0 && s.p.State == StateWaiting {
		s.p.State = StateRunning
	}
}

func (s *state) finish(answer string, err error) {
	s.p.Answer = answer
	switch {
	case err == nil:
		s.p.State = StateDone
	case errors.Is(err, ptk.Canceled):
		s.p.State = StateCanceled
	default:
		s.p.State = StateFailed
	}
	if err != nil {
		s.p.Error, s.p.ErrorCode = err.Error(), ptk.CodeOf(err)
	}
	s.p.Waiting = nil
}
