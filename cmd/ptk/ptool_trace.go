package main

import (
	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace"
)

// ptoolRecorder records each call of 'ptk ptool call' in the trace store as
// a run of kind ptool holding its ptool call, which is what 'ptk distill'
// learns from. A store that cannot be opened is said once and nothing is
// recorded; done waits for the record to be written.
func ptoolRecorder(cmd *cobra.Command, f traceFlags) (opt ptool.Option, done func(), err error) {
	rec, err := startRecording(cmd, f, nil)
	if err != nil || rec == nil || rec.writer == nil {
		return ptool.WithObserver(nil), func() {}, err
	}
	w := rec.writer
	return ptool.WithObserver(func(r *ptool.Record) { w.RecordFunc(func() *trace.Record { return ptoolTrace(r) }) }),
		func() { rec.close(cmd.ErrOrStderr()) }, nil
}

// ptoolTrace is a ptool call's Record as a trace record.
func ptoolTrace(r *ptool.Record) *trace.Record {
	pc := trace.PtoolCall{Ptool: r.PTool, Input: r.Input, Output: r.Output, Source: string(r.Source),
		Fallback: r.FellBack, IsError: r.Err != "", Duration: trace.Millis(r.Latency), Usage: r.Usage, Cost: r.Cost}
	for _, a := range r.Attempts {
		pc.Attempts = append(pc.Attempts, trace.Attempt{Output: a.Raw, Problems: a.Problems})
		pc.Repairs = append(pc.Repairs, a.Repairs...)
	}
	status := trace.StatusOK
	if r.Err != "" {
		status = trace.StatusError
	}
	return &trace.Record{Run: trace.Run{ID: trace.NewID(), Kind: trace.KindPtool, Name: r.PTool, Model: r.Model,
		Mode: string(r.Mode), StartedAt: r.Start, Duration: trace.Millis(r.Latency), Status: status,
		ErrorMessage: r.Err, Usage: r.Usage, Cost: r.Cost, Iterations: len(r.Attempts),
		Input: string(r.Input), Output: string(r.Output)}, PtoolCalls: []trace.PtoolCall{pc}}
}
