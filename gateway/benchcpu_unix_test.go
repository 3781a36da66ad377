//go:build unix

package gateway_test

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// benchGatewayPID is the gateway's process while the benchmark runs it in
// one of its own (PTK_BENCH_GATEWAY=process), else 0.
var benchGatewayPID atomic.Int64

// benchProcessCPU is the user and system time of the process so far
// (getrusage, which Linux counts to the microsecond), and of the gateway's
// own process when it runs in one (from /proc, in clock ticks of 10 ms).
func benchProcessCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	d := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if pid := benchGatewayPID.Load(); pid != 0 {
		child, ok := benchProcCPU(pid)
		if !ok {
			return 0, false
		}
		d += child
	}
	return d, true
}

// benchProcCPU reads a process's user and system time from
// /proc/PID/stat (fields 14 and 15, after the command's closing paren).
func benchProcCPU(pid int64) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.FormatInt(pid, 10) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const tick = 10 * time.Millisecond // USER_HZ, 100 on Linux
	return time.Duration(utime+stime) * tick, true
}
