//go:build unix

package trace

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process of that id runs on this host.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
