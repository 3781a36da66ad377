// Package record records runs into a trace store by observing them: a
// subscriber on the stream a caller already ranges over, or hooks on a
// run's options, never a part of the loop. Given a trace.Writer (a Live
// sink) a run is seen as it happens: its row is written when it begins,
// with status running, and each call, whole, as it finishes; when the run
// is done, its row again and the calls not written yet (each call is
// written once). Every call has a parent span, so that a ReAct action's
// ptool call and that call's model calls (its attempts) hang under the
// action, and a workflow step's attempts under the step.
//
// The recorders, one for each kind of run:
//
//	rec := record.NewAgent(w, trace.Run{Model: name, Mode: string(opts.Mode), Input: prompt})
//	for e, err := range agent.Stream(ctx, history, opts) {
//		rec.Event(e, err)
//		...
//	}
//
//	opts = record.ReAct(w).Options(opts)            // react.Run(ctx, goal, opts)
//	rec := record.NewWorkflow(w, t)                  // rec.Event on each workflow.Stream event
//	p := ptool.New[In, Out](name, doc, record.Ptool(w)) // each call, a run of kind ptool
//	req := record.NewRequest(w)                      // a gateway request; req.Agent, req.End
//	d := record.NewDistill(w, trace.Run{Name: ptool, Model: name}) // a distill run, live:
//	rep, err := distill.Run(ctx, t, splits, distill.Options{Model: m, Observe: d.Observe})
//	d.Done(rep, err)                                 // (record.Distill: its record at once)
package record

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/trace"
)

// ModeCompact is the mode of the model calls that wrote a compaction's
// notes (agent.EventCompact): the record keeps them among the run's model
// calls, with the notes message as their text.
const ModeCompact = "compact"

// Sink takes finished records; *trace.Writer is one. RecordFunc takes a
// function that finishes the record off the caller's path.
type Sink interface {
	RecordFunc(build func() *trace.Record)
}

var _ Sink = (*trace.Writer)(nil)

// Agent records one agent run from its events. It is used by the one
// goroutine that ranges over the run's stream.
type Agent struct {
	sink      Sink
	now       func() time.Time
	rec       *trace.Record
	start     time.Time
	callStart time.Time
	mode      string
	open      bool // a model call began and has not ended
	done      bool
	span      *span // when the sink is Live

	// When live, each model call is recorded whole as it ends, its
	// request's hash from the conversation hashed so far: hashed messages
	// of it into h.
	h      hash.Hash
	hashed int
	buf    []byte
}

// NewAgent records a run into sink. run says what the caller knows
// before the run: Name (a conversation, say), Model, Mode (the configured
// one: auto, ptk or native), Input (the prompt), ParentID; Kind defaults to
// agent.
func NewAgent(sink Sink, run trace.Run) *Agent {
	return NewAgentClock(sink, run, time.Now)
}

// NewAgentClock is NewAgent with a clock of its own: a durable-execution
// engine's, whose time a replayed run reads again (package
// github.com/ptkit/ptk/temporal).
func NewAgentClock(sink Sink, run trace.Run, now func() time.Time) *Agent {
	if run.Kind == "" {
		run.Kind = trace.KindAgent
	}
	if run.ID == "" {
		run.ID = trace.NewID()
	}
	run.StartedAt = now()
	a := &Agent{sink: sink, now: now, rec: &trace.Record{Run: run, ModelCalls: []trace.ModelCall{}, ToolCalls: []trace.ToolCall{}}, start: run.StartedAt}
	a.mode = run.Mode
	if a.mode == string(agent.ModeAuto) || a.mode == "" {
		a.mode = string(agent.ModeNative)
	}
	a.span = newSpan(sink, run)
	return a
}

// ID is the run's id in the store.
func (a *Agent) ID() string { return a.rec.ID }

// Event takes the run's next event and the stream's error with it. On
// EventDone it hands the record to the sink.
func (a *Agent) Event(e agent.Event, err error) {
	if a.done {
		return
	}
	switch e.Kind {
	case agent.EventIteration:
		a.callStart, a.open = a.now(), true
	case agent.EventModelDone:
		mc := trace.ModelCall{Mode: a.mode, Usage: e.Usage, Cost: e.Cost, Latency: trace.Millis(a.now().Sub(a.callStart)), Span: trace.Span{Start: a.callStart}}
		if a.span != nil && e.Reply != nil {
			a.reply(&mc, e.Request, e.Reply)
		}
		a.rec.ModelCalls = append(a.rec.ModelCalls, mc)
		a.open = false
		a.span.add(last(a.rec.ModelCalls), nil, nil)
	case agent.EventModeSwitch:
		a.mode = string(agent.ModePTK)
	case agent.EventCompact:
		// The calls that wrote a compaction's notes: one model call of
		// mode "compact" whose text is the notes message.
		c := e.Compaction
		mc := trace.ModelCall{Mode: ModeCompact, Usage: e.Usage, Cost: e.Cost, Latency: trace.Millis(time.Since(a.callStart)), Span: trace.Span{Start: a.callStart}}
		if c != nil {
			mc.Text, _ = trace.Cap(c.Message, trace.MaxResultBytes)
		}
		a.rec.ModelCalls = append(a.rec.ModelCalls, mc)
		a.span.add(last(a.rec.ModelCalls), nil, nil)
		a.callStart = time.Now()
		a.hashed = 0 // the conversation was rewritten: hash it anew
		if a.h != nil {
			a.h.Reset()
		}
	case agent.EventCallEnd:
		if e.Err != nil {
			a.tool(e, trace.OutcomeInvalid, e.Err.Message, true, 0)
		}
	case agent.EventDuplicate:
		a.tool(e, trace.OutcomeDuplicate, e.Text, false, 0)
	case agent.EventDenied:
		a.tool(e, trace.OutcomeDenied, e.Text, true, 0)
	case agent.EventToolResult:
		outcome := trace.OutcomeRan
		if e.Cached {
			outcome = trace.OutcomeCached
		}
		var content string
		var isErr bool
		if e.ToolResult != nil {
			content, isErr = e.ToolResult.Content, e.ToolResult.IsError
		}
		a.tool(e, outcome, content, isErr, e.Duration)
	case agent.EventDone:
		a.finish(e.Run, err)
	}
}

func (a *Agent) tool(e agent.Event, outcome, result string, isErr bool, d time.Duration) {
	tc := trace.ToolCall{Iteration: e.Iteration, Outcome: outcome, IsError: isErr, Duration: trace.Millis(d), Span: trace.Span{Start: time.Now().Add(-d)}}
	tc.Result, tc.Truncated = trace.Cap(result, trace.MaxResultBytes)
	if c := e.Call; c != nil {
		tc.CallID, tc.Tool, tc.Args, tc.Repairs = c.ID, c.Tool, c.Args, c.Repairs
	}
	if tc.Tool == "" && e.Err != nil {
		tc.Tool = e.Err.Tool
	}
	// the class of a failed call's error, as a ReAct run's records keep it
	switch {
	case e.Err != nil:
		tc.ErrorCode = string(e.Err.Code)
	case outcome == trace.OutcomeDenied:
		tc.ErrorCode = string(ptk.ToolCallDenied)
	case isErr:
		tc.ErrorCode = string(ptk.ToolExecutionFailed)
	}
	a.rec.ToolCalls = append(a.rec.ToolCalls, tc)
	a.span.add(nil, last(a.rec.ToolCalls), nil)
}

// last is the last element of s as a slice of its own, which appending to
// s never changes: the record's calls are appended as they are, not
// copied. Once appended, a call is not changed (the Writer reads it on its
// goroutine).
func last[T any](s []T) []T { return s[len(s)-1 : len(s) : len(s)] }

// reply fills in a model call as it ends: what the model wrote, the calls
// ptk read in it, and the hash of the conversation it was sent, hashing
// only the messages added since the last call.
func (a *Agent) reply(mc *trace.ModelCall, request []ptk.Message, reply *ptk.Message) {
	if a.h == nil {
		a.h = sha256.New()
	}
	if a.hashed > len(request) {
		a.h.Reset()
		a.hashed = 0
	}
	for _, m := range request[a.hashed:] {
		a.buf = hashMessage(a.h, a.buf, m)
	}
	a.hashed = len(request)
	var sum [sha256.Size]byte
	mc.RequestHash = hex.EncodeToString(a.h.Sum(sum[:0]))
	text := reply.Raw
	if text == "" {
		text = reply.Content
	}
	mc.Text, _ = trace.Cap(text, trace.MaxResultBytes)
	mc.Calls = reply.Calls
}

// finish fills the record in from the run's result and hands it over.
func (a *Agent) finish(res *agent.Result, err error) {
	a.done = true
	r := a.rec
	r.Duration = trace.Millis(a.now().Sub(a.start))
	r.Status = trace.StatusOK
	if a.open {
		mc := trace.ModelCall{Mode: a.mode, Latency: trace.Millis(a.now().Sub(a.callStart))}
		if err != nil {
			mc.Error = err.Error()
		}
		r.ModelCalls = append(r.ModelCalls, mc)
	}
	if res == nil {
		r.Status = trace.StatusError
		if err != nil {
			r.ErrorMessage = err.Error()
		}
		finish(a.sink, a.span, func() *trace.Record { return r })
		return
	}
	if !res.Success || res.Error != nil || err != nil {
		r.Status = trace.StatusError
	}
	if res.Error != nil {
		r.ErrorCode, r.ErrorMessage = string(res.Error.Code), res.Error.Message
	} else if err != nil {
		r.ErrorMessage = err.Error()
	}
	if res.Duration > 0 {
		r.Duration = trace.Millis(res.Duration)
	}
	r.Usage, r.Cost, r.Iterations = res.Usage, res.Cost, res.Iterations
	r.Output, _ = trace.Cap(res.Content, trace.MaxResultBytes)
	if res.Mode != "" {
		r.Mode = string(res.Mode)
	}
	if a.span != nil {
		// Live: each model call was recorded whole as it ended.
		finish(a.sink, a.span, func() *trace.Record { return r })
		return
	}
	msgs := res.Messages
	finish(a.sink, a.span, func() *trace.Record {
		replies(r.ModelCalls, msgs) // hashing and encoding, on the sink's goroutine
		return r
	})
}

// replies fills in each completed model call's reply (what the model
// wrote, its calls) and the hash of the conversation it was sent, from the
// run's messages: each completed model call added one assistant turn, so
// the last assistant turns are the calls' replies, in order.
func replies(calls []trace.ModelCall, msgs []ptk.Message) {
	done := 0
	for _, mc := range calls {
		if mc.Error == "" && mc.Mode != ModeCompact {
			done++
		}
	}
	var at []int
	for i := len(msgs) - 1; i >= 0 && len(at) < done; i-- {
		if msgs[i].Role == ptk.RoleAssistant {
			at = append(at, i)
		}
	}
	if len(at) < done {
		return
	}
	// The calls that replied, in order: not the compactions'.
	replied := make([]*trace.ModelCall, 0, done)
	for i := range calls {
		if calls[i].Error == "" && calls[i].Mode != ModeCompact {
			replied = append(replied, &calls[i])
		}
	}
	h := sha256.New()
	var buf []byte
	next := len(at) - 1 // at is from the last turn back
	for i, m := range msgs {
		if next >= 0 && i == at[next] {
			mc := replied[len(at)-1-next]
			mc.RequestHash = hex.EncodeToString(h.Sum(nil))
			text := m.Raw
			if text == "" {
				text = m.Content
			}
			mc.Text, _ = trace.Cap(text, trace.MaxResultBytes)
			mc.Calls = m.Calls
			next--
		}
		buf = hashMessage(h, buf, m)
	}
}

// hashMessage writes what a message says into h, each field prefixed by
// its length so that no two messages write the same bytes; buf is reused.
func hashMessage(h hash.Hash, buf []byte, m ptk.Message) []byte {
	buf = buf[:0]
	field := func(s string) {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	field(string(m.Role))
	field(m.Content)
	field(m.Raw)
	field(m.CallID)
	field(m.Tool)
	if m.IsError {
		field("error")
	}
	for _, c := range m.Calls {
		field(c.ID)
		field(c.Tool)
		field(string(c.Args))
	}
	field("")
	h.Write(buf)
	return buf
}
