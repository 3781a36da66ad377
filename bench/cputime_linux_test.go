package bench

import (
	"syscall"
	"unsafe"
)

// cpuTime is the CPU time the process has used, in nanoseconds
// (CLOCK_PROCESS_CPUTIME_ID): every thread's, the collector's included.
func cpuTime() int64 {
	const processCPUTime = 2 // CLOCK_PROCESS_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, processCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return ts.Nano()
}
