package main

import (
	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace/record"
)

// ptoolRecorder records each call of 'ptk ptool call' in the trace store as
// a run of kind ptool holding its ptool call, which is what 'ptk distill'
// learns from. A store that cannot be opened is said once and nothing is
// recorded; done waits for the record to be written.
func ptoolRecorder(cmd *cobra.Command, f traceFlags) (opt ptool.Option, done func(), err error) {
	rec, err := startRecording(cmd, f, nil)
	if err != nil || rec == nil || rec.sink == nil {
		return ptool.WithObserver(nil), func() {}, err
	}
	return record.Ptool(rec.sink), func() { rec.close(cmd.ErrOrStderr()) }, nil
}
