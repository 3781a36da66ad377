//go:build !unix

package trace

// processAlive cannot tell here: a run of a process that ended is marked
// interrupted once its heartbeat is stale.
func processAlive(pid int) bool { return true }
