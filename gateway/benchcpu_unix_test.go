//go:build unix

package gateway_test

import (
	"syscall"
	"time"
)

// benchProcessCPU is the user and system time of the process so far
// (getrusage, which Linux counts to the microsecond).
func benchProcessCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
