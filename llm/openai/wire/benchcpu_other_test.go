//go:build !unix

package wire_test

import "time"

// benchProcessCPU reports nothing where there is no getrusage.
func benchProcessCPU() (time.Duration, bool) { return 0, false }
