package distill

import (
	"fmt"
	"sync"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/ptool"
)

// What a distillation did when, for a trace recorder (ptk distill records
// each run as a span tree: the run, each round, each candidate's checks
// under its round, the model calls that wrote a candidate under its round).
// A check says its outcome in counts only: the held-out inputs are never
// in a check, a note or a figure.

// Check is one check of a candidate: "screen", "compile", "tests",
// "validation" or "sealed", with when it ran, how long it took, whether it
// passed, a short note ("12/14 held-out calls equal") and its figures.
type Check struct {
	Name     string         `json:"name"`
	Start    time.Time      `json:"start"`
	Duration time.Duration  `json:"duration_ns"`
	Passed   bool           `json:"passed"`
	Note     string         `json:"note,omitempty"`
	Figures  map[string]any `json:"figures,omitempty"`
}

// ModelCall is one call to the model: for the patterns, or for a
// candidate's code.
type ModelCall struct {
	Start   time.Time     `json:"start"`
	Latency time.Duration `json:"latency_ns"`
	Usage   ptk.Usage     `json:"usage"`
	Cost    float64       `json:"cost,omitempty"`
	// Error is why its answer was not used (the first problem found in
	// it), "" when it was.
	Error string `json:"error,omitempty"`
}

// callLog keeps the model calls of the generator's ptool calls, as their
// observer, until taken.
type callLog struct {
	mu   sync.Mutex
	list []ModelCall
}

func (c *callLog) observe(r *ptool.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := r.Start
	for _, a := range r.Attempts {
		mc := ModelCall{Start: at, Latency: a.Latency, Usage: a.Usage, Cost: a.Cost}
		if len(a.Problems) > 0 {
			mc.Error = a.Problems[0]
		}
		c.list = append(c.list, mc)
		if !at.IsZero() {
			at = at.Add(a.Latency)
		}
	}
	if len(r.Attempts) == 0 && r.Err != "" {
		c.list = append(c.list, ModelCall{Start: r.Start, Latency: r.Latency, Error: r.Err})
	}
}

// take returns the calls kept since the last take.
func (c *callLog) take() []ModelCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.list
	c.list = nil
	return out
}

// The kinds of Event.
const (
	// EventCall: model calls ended (Calls): in round Round, writing its
	// candidate, or, Round 0, describing the patterns.
	EventCall = "call"
	// EventRound: round Round began at Start.
	EventRound = "round"
	// EventCheck: a check of round Round's candidate ended (Check).
	EventCheck = "check"
	// EventRoundEnd: round Round ended after Duration, Accepted or
	// Rejected (why, in a few words).
	EventRoundEnd = "round_end"
)

// Event is what a distillation did, told as it happens to
// Options.Observe (ptk distill records each run live from them: its
// rounds, checks and model calls). Like a Check, it says outcomes in
// counts only: no event holds a held-out input, answer or error.
type Event struct {
	Kind     string        `json:"kind"`
	Round    int           `json:"round"`
	Start    time.Time     `json:"start,omitzero"`
	Duration time.Duration `json:"duration_ns,omitempty"`
	Calls    []ModelCall   `json:"calls,omitempty"`
	Check    *Check        `json:"check,omitempty"`
	Accepted bool          `json:"accepted,omitempty"`
	Rejected string        `json:"rejected,omitempty"`
}

// tell hands e to the observer, if any.
func (o *Options) tell(e Event) {
	if o.Observe != nil {
		o.Observe(e)
	}
}

// calls tells the model calls of round n (0: the patterns) and returns
// them.
func (o *Options) calls(n int, cs []ModelCall) []ModelCall {
	if len(cs) > 0 {
		o.tell(Event{Kind: EventCall, Round: n, Calls: cs})
	}
	return cs
}

// ended ends round r: its time, its verdict, and the observer told.
func (o *Options) ended(r *Round, began time.Time) {
	r.Duration = time.Since(began)
	o.tell(Event{Kind: EventRoundEnd, Round: r.N, Duration: r.Duration, Accepted: r.Accepted, Rejected: r.Rejected})
}

// timed times one check of a round: done records it with its verdict and
// tells the observer.
func (j *judge) timed(r *Round, name string) func(passed bool, note string, figures map[string]any) {
	start := time.Now()
	return func(passed bool, note string, figures map[string]any) {
		c := Check{Name: name, Start: start, Duration: time.Since(start), Passed: passed, Note: note, Figures: figures}
		r.Checks = append(r.Checks, c)
		j.o.tell(Event{Kind: EventCheck, Round: r.N, Check: &c})
	}
}

// scoreCheck is a score's note and figures: counts, never the inputs.
func scoreCheck(split string, s *Score) (string, map[string]any) {
	note := fmt.Sprintf("%d/%d %s calls equal, %d wrong, %d left to the model", s.Correct, s.Total, split, s.Wrong, s.Abstained)
	return note, map[string]any{"total": s.Total, "correct": s.Correct, "wrong": s.Wrong, "abstained": s.Abstained,
		"coverage": s.Coverage, "wrong_rate": s.WrongRate}
}
