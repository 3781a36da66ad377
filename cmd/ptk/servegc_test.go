package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// ptk serve runs the collector at serveGCPercent, unless GOGC is set.
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "100") // and GOGC is as it was after the test
	os.Unsetenv("GOGC")
	tuneGC()
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Errorf("without GOGC: GC percent %d, want %d", got, serveGCPercent)
	}
	os.Setenv("GOGC", "100")
	tuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC=100: GC percent %d, want it left at 100", got)
	}
}
