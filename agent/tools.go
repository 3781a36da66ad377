package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/turn"
)

// job is one call of a reply to run: the ToolRun a Runtime fills in, and
// where the call is in the reply.
type job struct {
	ToolRun
	idx int
	key string
}

// answer answers the calls of a reply: bad calls, duplicates and calls past
// the limit with an error for the model, cached calls from the cache, and
// the rest by running their tools, in parallel. The results go into the
// history in call order.
func (r *runner) answer(ctx context.Context, rep *turn.Reply) error {
	o := &r.opts
	it := r.res.Iterations
	results := make([]ptk.Result, len(rep.Attempts))
	cached := make([]bool, len(rep.Attempts))
	var jobs []*job
	answered := 0 // calls of this reply run or answered from the cache
	limitHit := false
	for i, a := range rep.Attempts {
		// Until answered, a call's result is an error without a message
		// (closeTurn says why it was not run).
		results[i] = ptk.Result{CallID: a.Call.ID, Tool: a.Call.Tool, IsError: true}
	}
	for i, a := range rep.Attempts {
		c := a.Call
		if a.Err != nil {
			results[i].Content = a.Err.Message
			if i > 0 && a.Err.Code == ptk.DuplicateToolCall && rep.Attempts[i-1].Err != nil && rep.Attempts[i-1].Err.Message == a.Err.Message {
				// A repetition loop's calls: the first result says why.
				results[i].Content = "Not run: part of the same repetition loop."
			}
			r.res.Invalid = append(r.res.Invalid, InvalidCall{Call: c, Iteration: it, Err: a.Err})
			if o.Strict {
				r.closeTurn(results, "the run ended at a bad call")
				return a.Err
			}
			continue
		}
		t := r.tools[c.Tool]
		info := t.Info()
		key := callKey(c)
		if reason, ok := r.denied[key]; ok {
			// The same call, denied a moment ago: asking again would not
			// change the answer. It counts as a repeat.
			r.warned++
			why := "Not run: this call was denied already, and asking again will not change that (" + reason +
				"). Do something else, or answer with what you have."
			results[i].Content = why
			r.res.Denied = append(r.res.Denied, DeniedCall{Call: c, Iteration: it, Reason: why})
			r.event(Event{Kind: EventDenied, Iteration: it, Index: i, Call: &c, Text: why})
			if o.MaxRepeats > 0 && r.warned > o.MaxRepeats {
				r.closeTurn(results, "the run ended: the model kept asking for a denied call")
				perr := ptk.NewError(ptk.ToolCallDenied, fmt.Sprintf("the model kept asking for calls that were denied (%d repeats, MaxRepeats %d); the last was %s %s, denied because: %s",
					r.warned, o.MaxRepeats, c.Tool, string(c.Args), reason), nil)
				perr.Tool = c.Tool
				return perr
			}
			continue
		}
		if why := r.repeats(key, info); why != "" {
			r.warned++
			if o.MaxRepeats == 0 || r.warned <= o.MaxRepeats {
				results[i].Content = why
				r.event(Event{Kind: EventDuplicate, Iteration: it, Index: i, Call: &c, Text: why})
				continue
			}
			goOn, err := r.approveRepeat(ctx, c)
			if ctx.Err() != nil {
				r.closeTurn(results, "the run was stopped")
				return ctxError(ctx, "while waiting for approval")
			}
			if err != nil || !goOn {
				msg := fmt.Sprintf("the model kept repeating calls it had just made (%d times, MaxRepeats %d); the last was %s %s", r.warned, o.MaxRepeats, c.Tool, string(c.Args))
				if err != nil {
					msg += " (asking whether to go on failed: " + err.Error() + ")"
				}
				results[i].Content = "Not run: " + why
				r.closeTurn(results, "the run ended in a loop")
				perr := ptk.NewError(ptk.DuplicateToolCall, msg, err)
				perr.Tool = c.Tool
				return perr
			}
			r.warned = 0
		}
		if len(r.res.ToolCalls)+answered >= o.MaxToolCalls {
			limitHit = true
			results[i].Content = fmt.Sprintf("Not run: the run reached its limit of %d tool calls.", o.MaxToolCalls)
			continue
		}
		if !info.ReadOnly && o.Approver != nil {
			v, err := o.Approver.Approve(ctx, c, info)
			if ctx.Err() != nil {
				r.closeTurn(results, "the run was stopped")
				return ctxError(ctx, "while waiting for approval")
			}
			if err != nil {
				v = tool.Verdict{Reason: "the approval failed: " + err.Error()}
			}
			if !v.Allow {
				reason := v.Reason
				if reason == "" {
					reason = "the call was not approved"
				}
				results[i].Content = "Denied: " + reason
				r.res.Denied = append(r.res.Denied, DeniedCall{Call: c, Iteration: it, Reason: reason})
				if r.denied == nil {
					r.denied = map[string]string{}
				}
				r.denied[key] = reason
				r.event(Event{Kind: EventDenied, Iteration: it, Index: i, Call: &c, Text: reason})
				continue
			}
		}
		if res, ok := r.cache[key]; ok && info.Cacheable {
			res.CallID, res.Tool = c.ID, c.Tool
			results[i], cached[i] = res, true
		} else {
			jobs = append(jobs, &job{ToolRun: ToolRun{Call: c, Tool: t}, idx: i, key: key})
		}
		answered++
		if info.ReadOnly {
			r.remember(key)
		} else {
			// What was read may have changed.
			r.recent, r.cache = r.recent[:0], nil
			r.lastChange = key
		}
	}

	for _, j := range jobs {
		r.event(Event{Kind: EventToolStart, Iteration: it, Index: j.idx, Call: &j.Call})
	}
	r.runJobs(ctx, jobs)
	stopped := ctx.Err() != nil

	var fatal error
	next := 0
	for i := range rep.Attempts {
		c := rep.Attempts[i].Call
		if next < len(jobs) && jobs[next].idx == i {
			j := jobs[next]
			next++
			res := j.Result
			switch {
			case j.Err != nil && stopped:
				res = ptk.Result{Content: "Stopped: the run ended while the tool was running.", IsError: true}
			case j.Err != nil:
				perr := ptk.NewError(ptk.ToolExecutionFailed, "tool "+strconv.Quote(c.Tool)+" failed: "+j.Err.Error(), j.Err)
				perr.Tool = c.Tool
				if o.Strict && fatal == nil {
					fatal = perr
				}
				res = ptk.Result{Content: perr.Message, IsError: true}
			}
			res.CallID, res.Tool = c.ID, c.Tool
			if res.IsError && res.Content == "" {
				res.Content = "The tool failed without saying why."
			}
			results[i] = res
			if j.Err == nil && !res.IsError && j.Tool.Info().Cacheable {
				if r.cache == nil {
					r.cache = map[string]ptk.Result{}
				}
				r.cache[j.key] = res
			}
			r.res.ToolCalls = append(r.res.ToolCalls, ToolCall{Call: c, Result: res, Iteration: it, Duration: j.Duration, Tries: j.Tries})
			r.reportResult(i, c, res, j.Duration, false)
			continue
		}
		if cached[i] {
			r.res.ToolCalls = append(r.res.ToolCalls, ToolCall{Call: c, Result: results[i], Iteration: it, Cached: true})
			r.reportResult(i, c, results[i], 0, true)
		}
	}
	r.closeTurn(results, "the run was stopped")
	if stopped {
		return ctxError(ctx, "while tools were running")
	}
	if fatal != nil {
		return fatal
	}
	if limitHit {
		return r.atLimit(ctx, ptk.MaxToolCallsReached,
			fmt.Sprintf("the model asked for more than %d tool calls (MaxToolCalls)", o.MaxToolCalls))
	}
	return nil
}

func (r *runner) reportResult(i int, c ptk.Call, res ptk.Result, d time.Duration, cached bool) {
	r.event(Event{Kind: EventToolResult, Iteration: r.res.Iterations, Index: i, Call: &c, ToolResult: &res, Duration: d, Cached: cached})
}

// repeats says why a call repeats what the model just did, "" when it does
// not: a read-only call that repeats one of the last DuplicateWindow
// read-only calls, or a call that may change something and repeats the
// latest such call with nothing changed since (re-running the tests after
// an edit is not a repeat; running them twice in a row is).
func (r *runner) repeats(key string, info ptk.ToolInfo) string {
	o := &r.opts
	switch {
	case o.AllowDuplicates:
	case info.ReadOnly && slices.Contains(r.recent, key):
		return fmt.Sprintf("Not run: this call repeats one of your last %d calls with the same arguments, and its result is above. Use that result, or call with different arguments.", o.DuplicateWindow)
	case !info.ReadOnly && key == r.lastChange:
		return "Not run: this call repeats your previous call of this tool with the same arguments, and nothing has changed since: its result is above and would be the same. Change something first, call with different arguments, or give your answer."
	}
	return ""
}

// approveRepeat asks the approver, when it can be asked, whether a run whose
// model keeps repeating itself may go on with call.
func (r *runner) approveRepeat(ctx context.Context, c ptk.Call) (bool, error) {
	ra, ok := r.opts.Approver.(RepeatApprover)
	if !ok {
		return false, nil
	}
	return ra.ApproveRepeat(ctx, c, r.warned)
}

// RepeatApprover is an Approver that is also asked when the model keeps
// repeating itself past Options.MaxRepeats, whether the run may go on, the
// way opencode asks its user about a "doom loop". Allowing runs the call and
// starts the count again; refusing ends the run with ptk.DuplicateToolCall.
type RepeatApprover interface {
	tool.Approver
	// ApproveRepeat is asked with the call that repeats, and the number of
	// duplicates and repeats in the run so far.
	ApproveRepeat(ctx context.Context, call ptk.Call, repeats int) (bool, error)
}

// closeTurn adds the turn's results to the history, in call order, so that
// every call has its answer even when the run ends early: a call left
// without a result says why it was not run.
func (r *runner) closeTurn(results []ptk.Result, why string) {
	msgs := make([]ptk.Message, len(results))
	for i, res := range results {
		if res.Content == "" && res.IsError {
			res.Content = "Not run: " + why + "."
		}
		msgs[i] = ptk.Message{Role: ptk.RoleTool, Content: res.Content, CallID: res.CallID, Tool: res.Tool, IsError: res.IsError}
	}
	r.history.Append(msgs...)
}

func (r *runner) remember(key string) {
	r.recent = append(r.recent, key)
	if n := len(r.recent) - r.opts.DuplicateWindow; n > 0 {
		r.recent = append(r.recent[:0], r.recent[n:]...)
	}
}

// callKey identifies a call by its tool and arguments, whatever the order of
// the arguments' keys and their spacing.
func callKey(c ptk.Call) string {
	d := json.NewDecoder(bytes.NewReader(c.Args))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			return c.Tool + "\x00" + string(b)
		}
	}
	return c.Tool + "\x00" + string(c.Args)
}

// runJobs runs the jobs in call order, where order can matter: a run of
// calls to read-only tools runs in parallel (at most MaxParallel at a time),
// and a call to a tool that changes something runs alone, after the calls
// before it and before the calls after it — a model that edits a file and
// then runs the tests in one reply means it in that order.
func (r *runner) runJobs(ctx context.Context, jobs []*job) {
	for len(jobs) > 0 {
		n := 1
		if jobs[0].Tool.Info().ReadOnly {
			for n < len(jobs) && jobs[n].Tool.Info().ReadOnly {
				n++
			}
		}
		runs := make([]*ToolRun, n)
		for i, j := range jobs[:n] {
			runs[i] = &j.ToolRun
		}
		r.rt.RunTools(ctx, runs)
		jobs = jobs[n:]
	}
}

// Runtime is where a run's tools run and where its time is told. By
// default (Options.Runtime nil) that is the run's own process: tools run on
// goroutines, with Options' timeout, retries and parallelism, and the clock
// is the system's. A durable-execution engine gives a Runtime of its own,
// so that the loop's code is deterministic and replays the same: package
// github.com/ptkit/ptk/temporal runs each tool call as a Temporal activity
// and tells the time from the workflow's history.
type Runtime interface {
	// Now tells the time.
	Now() time.Time
	// RunTools runs the calls and fills in what each did (Result, Err,
	// Tries, Duration). When there are several, they are all calls to
	// read-only tools, and may run at the same time; a call to a tool that
	// changes something comes alone. It returns when every call is
	// answered, or, once ctx is done, without waiting for the tools that do
	// not stop (their Err then says so).
	RunTools(ctx context.Context, calls []*ToolRun)
}

// ToolRun is one tool call for a Runtime to run, and what came of it.
type ToolRun struct {
	// Call is the call, checked against the tool's schema; Tool is the
	// tool, with the run's result limits (MaxResultBytes, MaxResultLines).
	Call ptk.Call
	Tool ptk.Tool

	// Result is the tool's result; Err the error it returned, after any
	// retries, which the model is told of as a failed call.
	Result ptk.Result
	Err    error
	// Tries counts the times the tool ran; Duration how long they took.
	Tries    int
	Duration time.Duration
}

// local is the Runtime of a run in its own process.
type local struct{ opts *Options }

var _ Runtime = local{}

func (local) Now() time.Time { return time.Now() }

// RunTools runs calls at the same time, at most MaxParallel at once.
func (l local) RunTools(ctx context.Context, calls []*ToolRun) {
	if len(calls) == 1 {
		l.exec(ctx, calls[0])
		return
	}
	sem := make(chan struct{}, l.opts.MaxParallel)
	var wg sync.WaitGroup
	for _, c := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			l.exec(ctx, c)
		})
	}
	wg.Wait()
}

// exec runs one call, retrying an error the tool marked retryable. It reads
// only the run's options, so calls may run at the same time.
func (l local) exec(ctx context.Context, c *ToolRun) {
	start := time.Now()
	defer func() { c.Duration = time.Since(start) }()
	delay := l.opts.ToolRetryDelay
	for {
		c.Tries++
		res, err := l.runTool(ctx, c)
		if err == nil {
			c.Result = res
			return
		}
		if ctx.Err() != nil || !ptk.IsRetryable(err) || c.Tries > l.opts.MaxToolRetries {
			c.Err = err
			return
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			c.Err = err
			return
		case <-t.C:
		}
		delay *= 2
	}
}

// runTool runs the tool once, with the tool timeout, turning a panic into an
// error. A tool that does not return when its context ends (a blocking
// system call, a tool that ignores ctx) is abandoned: the call is answered
// with the context's error at once, and the tool's goroutine is left to
// finish on its own.
func (l local) runTool(ctx context.Context, c *ToolRun) (ptk.Result, error) {
	if d := l.opts.ToolTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	type outcome struct {
		res ptk.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o.err = &PanicError{Value: p, Stack: debug.Stack()}
			}
			done <- o
		}()
		o.res, o.err = c.Tool.Run(ctx, c.Call.Args)
	}()
	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		select {
		case o = <-done: // it returned as the context ended
		case <-time.After(abandonGrace):
			o.err = fmt.Errorf("the tool did not stop when its context ended (%w); it was abandoned", context.Cause(ctx))
		}
	}
	if o.err != nil && ctx.Err() != nil && errors.Is(o.err, context.DeadlineExceeded) && l.opts.ToolTimeout > 0 {
		o.err = fmt.Errorf("timed out after %s", l.opts.ToolTimeout)
	}
	return o.res, o.err
}

// abandonGrace is how long a tool may take to return once its context has
// ended before the call is answered without it.
const abandonGrace = 100 * time.Millisecond

// PanicError is the error of a tool that panicked. The model reads only
// Error(); Stack is for OnError and logs.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("the tool panicked: %v", e.Value) }
