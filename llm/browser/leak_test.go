package browser

import (
	"fmt"
	"os"

	"go.uber.org/goleak"
)

// leaks reports goroutines the tests left running: every call must end
// the goroutines it started (its connection, its tab's reader, its dialog
// handler), however it ended.
func leaks() int {
	if err := goleak.Find(goleak.IgnoreCurrent()); err != nil {
		fmt.Fprintln(os.Stderr, "goroutines left running:", err)
		return 1
	}
	return 0
}
