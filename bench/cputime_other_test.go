//go:build !linux

package bench

// cpuTime is not measured here: BenchmarkStreamRatio reports the wall-clock
// ratio only.
func cpuTime() int64 { return 0 }
