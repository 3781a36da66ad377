package main

import (
	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
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
	return ptool.WithObserver(func(r *ptool.Record) { w.RecordFunc(func() *trace.Record { return record.PTool(r) }) }),
		func() { rec.close(cmd.ErrOrStderr()) }, nil
}
