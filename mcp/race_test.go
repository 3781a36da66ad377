//go:build race

package mcp

// Under the race detector moving hundreds of MiB takes minutes: the tests
// that do move less (see floodMiB).
const raceEnabled = true
