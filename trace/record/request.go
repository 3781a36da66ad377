package record

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/ptkit/ptk/trace"
)

// Request records one request to a gateway (ptk serve) as a run of kind
// request, whose Detail is a trace.Request: when the request runs an agent
// (the gateway's own tools), that run is a run of its own under the
// request (its ParentID), and the request's row is written when the run
// begins, so that the run is never seen without it; otherwise the request's
// one model call is a span under it. It is used by the request's one
// goroutine.
//
//	rec := record.NewRequest(w)
//	obs := rec.Agent(trace.Run{Model: name}).Event // the agent run, if any
//	...
//	rec.End(trace.Run{Model: name, Usage: u}, trace.Request{API: "chat", Status: 200, …})
type Request struct {
	sink  Sink
	now   func() time.Time
	id    string
	start time.Time
	span  *span
	agent bool
	done  bool
}

// NewRequest begins recording a request that starts now.
func NewRequest(sink Sink) *Request {
	return &Request{sink: sink, now: time.Now, id: trace.NewID(), start: time.Now()}
}

// ID is the request's run id.
func (r *Request) ID() string { return r.id }

// Agent begins the request's agent run, described by run (its Model,
// Provider, Input), under the request, and returns its recorder.
func (r *Request) Agent(run trace.Run) *Agent {
	if !r.agent {
		r.agent = true
		r.span = newSpan(r.sink, trace.Run{ID: r.id, Kind: trace.KindRequest, Name: "serve", Model: run.Model, Provider: run.Provider,
			StartedAt: r.start})
	}
	run.ParentID = r.id
	return NewAgent(r.sink, run)
}

// End records the request as it ended: run says its Model (the one that
// served it), Provider, Usage, Cost and Input; q the request.
func (r *Request) End(run trace.Run, q trace.Request) {
	if r.done {
		return
	}
	r.done = true
	end := r.now()
	run.ID, run.Kind, run.ParentID, run.StartedAt = r.id, trace.KindRequest, "", r.start
	run.Duration = trace.Millis(end.Sub(r.start))
	run.Name = q.Route
	if run.Mode == "" {
		run.Mode = q.Mode
	}
	run.Status = trace.StatusOK
	if q.Status >= 400 || q.Error != "" {
		run.Status = trace.StatusError
		run.ErrorCode, run.ErrorMessage = "HTTP_"+strconv.Itoa(q.Status), q.Error
	}
	rec := &trace.Record{Run: run, ModelCalls: []trace.ModelCall{}, ToolCalls: []trace.ToolCall{}}
	if run.Iterations == 0 && !r.agent && q.Mode != "" {
		// the request's one exchange with its model, under it
		mc := trace.ModelCall{Mode: q.Mode, Usage: run.Usage, Cost: run.Cost, Latency: run.Duration, Span: trace.Span{Start: r.start}}
		if q.Error != "" {
			mc.Error = q.Error
		}
		rec.ModelCalls = append(rec.ModelCalls, mc)
		rec.Iterations = 1
	}
	finish(r.sink, r.span, func() *trace.Record {
		rec.Detail, _ = json.Marshal(q)
		return rec
	})
}
