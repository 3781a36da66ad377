//go:build unix

package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// exclusive: lock keeps other processes out.
const exclusive = true

// lock takes the shadow repository's lock file, waiting for another
// process that holds it.
func lock(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "ptk.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errLocked, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %v", errLocked, err)
	}
	return func() { f.Close() }, nil
}
