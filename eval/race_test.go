//go:build race

package eval

// raceEnabled reports that the race detector is on: it slows the dev
// corpus's replay twentyfold, so under it the replay runs on a sample.
const raceEnabled = true
