//go:build unix

package outfile

import (
	"errors"
	"syscall"
)

// oNoFollow refuses a symbolic link at the last element, and O_NONBLOCK a
// FIFO swapped in with no reader (ENXIO instead of waiting for ever); a
// regular file ignores O_NONBLOCK.
const oNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isLoop reports the errors O_NOFOLLOW gives for a symbolic link (ELOOP;
// EMLINK on some BSDs) and O_NONBLOCK for a FIFO with no reader.
func isLoop(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) || errors.Is(err, syscall.ENXIO)
}
