package main

import (
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The benchmarks report CPU time beside wall time: on a machine whose
// cores other work shares, the CPU a command spends moves far less than
// how long it waits for a core.

// processCPU is the user and system time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(processCPU()-since)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
}

// What every invocation of ptk pays before it does anything: the command
// tree, its groups, completions and argument checks.
func BenchmarkNewRoot(b *testing.B) {
	t0 := processCPU()
	for b.Loop() {
		newRoot(strings.NewReader(""), io.Discard, io.Discard)
	}
	reportCPU(b, t0)
}

// One press of TAB, in process: what the shell waits for, less starting
// the binary.
func BenchmarkComplete(b *testing.B) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"model", []string{"__complete", "run", "--model", ""}},
		{"tools", []string{"__complete", "run", "--tools", "read_file,"}},
		{"command", []string{"__complete", "r"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			t0 := processCPU()
			for b.Loop() {
				if code := run(tc.args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			reportCPU(b, t0)
		})
	}
}

// The built binary, started and ended: ptk --version, and one completion
// as a shell runs it; with the CPU the process spent.
func BenchmarkProcess(b *testing.B) {
	bin := ptkBinary(b)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"version", []string{"--version"}},
		{"complete-model", []string{"__complete", "run", "--model", ""}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(bin, tc.args...)
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "child-cpu-ms/op")
		})
	}
}
