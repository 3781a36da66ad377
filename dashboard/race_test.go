//go:build race

package dashboard

// Under the race detector SQLite (C compiled to Go) runs some 30 times
// slower: the browser test skips, and .ci/run runs it without -race.
const raceEnabled = true
