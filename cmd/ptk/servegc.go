package main

import (
	"os"
	"runtime/debug"
)

// serveGCPercent is the garbage collector's target (GOGC) ptk serve runs
// with when the environment sets none. A gateway keeps little (its live
// heap is a few MB) and allocates some 40 KB a request, so with Go's
// default of 100 the collector ran every 50 or so requests, and a request
// that met a cycle waited for it: the 1% slowest requests through the
// gateway were the ones the collector slowed (p99 1.2 to 6.6 ms, 0.2 to
// 0.8 ms at 400; docs/performance.md). At 400 the heap may grow to five
// times what is live before a cycle, a few tens of MB for a gateway.
const serveGCPercent = 400

// tuneGC sets serveGCPercent, unless GOGC says otherwise.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serveGCPercent)
	}
}
