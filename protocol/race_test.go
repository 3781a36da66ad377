//go:build race

package protocol

// raceEnabled reports that the race detector is on: timing tests that it
// slows tenfold do less.
const raceEnabled = true
