//go:build race

package gateway

// raceEnabled reports that the race detector is on: sync.Pool then drops
// what is put in it at random, so allocation counts mean nothing.
const raceEnabled = true
