package workflow

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/ptkit/ptk/ptool"
)

// DefaultConcurrency is how many steps run at once when Options says 0.
const DefaultConcurrency = 4

// Options configure a run.
type Options struct {
	// Registry holds the ptools the steps name.
	Registry *ptool.Registry
	// Concurrency bounds the steps running at once (DefaultConcurrency
	// when 0; 1 runs them one by one, in order).
	Concurrency int
	// ContinueOnError runs the steps that do not need a failed step after
	// a failure; by default a failure stops the run: running steps finish,
	// the others are skipped.
	ContinueOnError bool
	// Observer, when set, is given the finished trace (for a trace store);
	// the caller owns it.
	Observer func(*Trace)
	// Runtime is where the steps' calls run and the time is told; nil is
	// the run's own process (a goroutine per running step, the system
	// clock). A Runtime serves one run at a time.
	Runtime Runtime
}

// Runtime is where a run's steps run and where its time is told. By default
// that is the run's own process. A durable-execution engine gives a Runtime
// of its own, so that the scheduler is deterministic and replays the same:
// package github.com/ptkit/ptk/temporal runs each step's call as a
// Temporal activity (with RunStep) and tells the time from the workflow's
// history.
type Runtime interface {
	// Now tells the time.
	Now() time.Time
	// Start begins the call of step i, whose Input is resolved; RunStep
	// is what runs it.
	Start(ctx context.Context, i int, s Step)
	// Next waits for a started call to end, and returns its step with
	// what the call did. It is called only while a call runs.
	Next(ctx context.Context) (int, Step)
}

// local is the Runtime of a run in its own process.
type local struct {
	reg     *ptool.Registry
	results chan done
}

func (local) Now() time.Time { return time.Now() }

func (l *local) Start(ctx context.Context, i int, s Step) {
	go func() {
		RunStep(ctx, l.reg, &s)
		l.results <- done{i, s}
	}()
}

func (l *local) Next(context.Context) (int, Step) {
	d := <-l.results
	return d.i, d.step
}

// EventKind says what an Event reports.
type EventKind uint8

// The kinds of events.
const (
	// EventStepStart: a step's call begins (Step.Input is set).
	EventStepStart EventKind = iota + 1
	// EventStepEnd: a step completed, failed or was skipped.
	EventStepEnd
	// EventDone: the run is over; Trace is the finished trace.
	EventDone
)

// Event is one step of a run. Step is a copy of the step as it is then.
type Event struct {
	Kind  EventKind
	Index int
	Step  *Step
	Trace *Trace
}

// ErrStepFailed is what a run that had a failed step returns (wrapped, with
// the step).
var ErrStepFailed = errors.New("workflow: a step failed")

// JSONCaller is ptool.JSONCaller: a step whose ptool is one keeps its
// Record; a Func that is not one is run as a tool, without a record.
type JSONCaller = ptool.JSONCaller

// Run checks t against the registry and runs it: a trace with problems
// fails with a *CheckError before any call. It returns the finished trace
// (t is not changed) and, when a step failed or ctx was canceled, an error;
// the trace is filled in either way.
func Run(ctx context.Context, t *Trace, opts Options) (*Trace, error) {
	var out *Trace
	var err error
	for e, e2 := range Stream(ctx, t, opts) {
		if e.Kind == EventDone {
			out, err = e.Trace, e2
		}
	}
	return out, err
}

// Stream runs t like Run and reports each step's start and end as an
// Event, then EventDone with the trace, paired with the run's error.
// Breaking out of the loop cancels the run.
func Stream(ctx context.Context, t *Trace, opts Options) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		tr := t.Clone()
		if tr.ID == "" {
			tr.ID = NewID()
		}
		tr.Version = Version
		if opts.Registry == nil {
			opts.Registry = ptool.DefaultRegistry
		}
		if probs := Check(tr, opts.Registry); probs != nil {
			yield(Event{Kind: EventDone, Trace: tr}, &CheckError{probs})
			return
		}
		stopped := false
		emit := func(e Event) {
			if !stopped && !yield(e, nil) {
				stopped = true
				cancel()
			}
		}
		err := run(ctx, tr, opts, emit)
		if opts.Observer != nil {
			opts.Observer(tr.Clone())
		}
		if !stopped {
			yield(Event{Kind: EventDone, Trace: tr}, err)
		}
	}
}

// NewID returns a random trace id.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "wf_" + hex.EncodeToString(b[:])
}

type done struct {
	i    int
	step Step
}

// run schedules the steps: the coordinator (this goroutine) alone writes
// tr; each call runs on its own goroutine and sends its step back.
func run(ctx context.Context, tr *Trace, opts Options, emit func(Event)) error {
	n := len(tr.Steps)
	limit := opts.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	deps := make([][]int, n)
	outputs := make([]any, n)
	for i := range tr.Steps {
		st := &tr.Steps[i]
		args, _ := decodeArgs(st.Args) // checked
		walkRefs(args, "", func(r refAt) { deps[i] = append(deps[i], tr.Index(r.Step)) }, func(string, string) {})
		if f, ok := opts.Registry.Lookup(st.PTool); ok && len(st.Expects) == 0 {
			st.Expects = f.Spec().Output
		}
		if st.Status == StatusCompleted && st.Result != nil {
			// a finished step of an earlier run is kept
			v, err := decodeValue(st.Result)
			if err == nil {
				outputs[i] = v
				continue
			}
		}
		*st = Step{ID: st.ID, PTool: st.PTool, Args: st.Args, Expects: st.Expects, Goal: st.Goal, Status: StatusPending}
	}
	rt := opts.Runtime
	if rt == nil {
		rt = &local{reg: opts.Registry, results: make(chan done)}
	}
	tr.Start = rt.Now()
	defer func() { tr.Duration = rt.Now().Sub(tr.Start) }()

	running := 0
	var failed error
	end := func(i int) {
		c := tr.Steps[i]
		emit(Event{Kind: EventStepEnd, Index: i, Step: &c})
	}
	for {
		stop := ctx.Err() != nil || failed != nil && !opts.ContinueOnError
		progress := false
		for i := range tr.Steps {
			st := &tr.Steps[i]
			if st.Status != StatusPending {
				continue
			}
			if stop {
				st.Status = StatusSkipped
				if err := ctx.Err(); err != nil {
					st.Error = "not run: " + err.Error()
				} else {
					st.Error = "not run: the run stopped at a failed step"
				}
				end(i)
				continue
			}
			ready := true
			for _, j := range deps[i] {
				switch tr.Steps[j].Status {
				case StatusCompleted:
				case StatusFailed, StatusSkipped:
					st.Status = StatusSkipped
					st.Error = "not run: " + tr.StepID(j) + " did not complete"
					end(i)
					progress = true
					ready = false
				default:
					ready = false
				}
				if !ready {
					break
				}
			}
			if !ready || st.Status != StatusPending || running >= limit {
				continue
			}
			input, err := resolve(st.Args, tr, outputs)
			st.Status = StatusRunning
			st.Input = input
			c := *st
			emit(Event{Kind: EventStepStart, Index: i, Step: &c})
			progress = true
			if err != nil {
				// not a call: it ends at once
				st.Status, st.Error = StatusFailed, err.Error()
				failed = stepFailed(failed, tr, i)
				end(i)
				continue
			}
			running++
			rt.Start(ctx, i, c)
		}
		if running == 0 {
			if progress {
				continue // skips may have made others decidable
			}
			break
		}
		i, step := rt.Next(ctx)
		running--
		tr.Steps[i] = step
		if step.Status == StatusCompleted {
			outputs[i], _ = decodeValue(step.Result)
		} else {
			failed = stepFailed(failed, tr, i)
		}
		end(i)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return failed
}

// stepFailed is the run's error once step i failed: the first failure's.
func stepFailed(failed error, tr *Trace, i int) error {
	if failed != nil {
		return failed
	}
	s := tr.Steps[i]
	return fmt.Errorf("%w: %s (%s): %s", ErrStepFailed, tr.StepID(i), s.PTool, s.Error)
}

// resolve returns a step's input: its arguments with each reference
// replaced by the value it names.
func resolve(raw json.RawMessage, tr *Trace, outputs []any) (json.RawMessage, error) {
	args, err := decodeArgs(raw)
	if err != nil {
		return nil, err
	}
	v, err := substitute(args, func(r Reference) (any, error) {
		j := tr.Index(r.Step)
		x, err := pointerGet(outputs[j], r.Path)
		if err != nil {
			return nil, fmt.Errorf("%s's output has no %s: %v", r.Step, r.Path, err)
		}
		return x, nil
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func decodeValue(raw json.RawMessage) (any, error) {
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

// RunStep calls the ptool of step s with its Input, and fills in what the
// call did: Status, Result or Error, and the ptool's Record, attempts, usage
// and cost. It is what a Runtime runs for each step; a ptool that panics is
// a failed step.
func RunStep(ctx context.Context, reg *ptool.Registry, s *Step) {
	start := time.Now()
	defer func() {
		s.Duration = time.Since(start)
		if r := recover(); r != nil {
			s.Status, s.Error = StatusFailed, fmt.Sprintf("the ptool panicked: %v", r)
		}
	}()
	f, ok := reg.Lookup(s.PTool)
	if !ok {
		s.Status, s.Error = StatusFailed, "no ptool "+strconv.Quote(s.PTool)+" is registered"
		return
	}
	if jc, ok := f.(JSONCaller); ok {
		out, rec, err := jc.CallJSON(ctx, s.Input)
		if rec != nil {
			s.Record = rec
			s.Attempts = len(rec.Attempts)
			s.Usage = rec.Usage
			s.Cost = rec.Cost
		}
		if err != nil {
			s.Status, s.Error = StatusFailed, err.Error()
			return
		}
		s.Status, s.Result = StatusCompleted, out
		return
	}
	res, err := f.Run(ctx, s.Input)
	switch {
	case err != nil:
		s.Status, s.Error = StatusFailed, err.Error()
	case res.IsError:
		s.Status, s.Error = StatusFailed, res.Content
	case !json.Valid([]byte(res.Content)):
		s.Status, s.Error = StatusFailed, "the ptool's result is not JSON"
	default:
		s.Status, s.Result = StatusCompleted, json.RawMessage(res.Content)
	}
}
