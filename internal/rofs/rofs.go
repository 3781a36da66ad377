// Package rofs lets tests run a process that sees a folder on a read-only
// filesystem, as a store on a snapshot, a mounted backup or a container's
// read-only volume is seen: the process is started in a mount namespace of
// its own (as root, or in a user namespace where it is root), and there
// bind-mounts the folder over itself read-only before it does anything
// else. Writing there fails with EROFS, whoever the process is.
package rofs

import (
	"errors"
	"os"
	"os/exec"
)

// Env names the folder a process made by Command makes read-only when it
// calls Enter.
const Env = "PTK_TEST_READONLY_DIR"

// ErrUnsupported is returned where a mount namespace cannot be made.
var ErrUnsupported = errors.New("a read-only mount needs Linux and root or user namespaces")

// Command sets cmd up to run in a mount namespace of its own where dir is
// read-only: cmd's program must call Enter first thing.
func Command(cmd *exec.Cmd, dir string) {
	cmd.Env = append(cmd.Environ(), Env+"="+dir)
	isolate(cmd)
}

// Enter makes $PTK_TEST_READONLY_DIR read-only for this process, which
// Command started; it does nothing when the variable is not set.
func Enter() error {
	dir := os.Getenv(Env)
	if dir == "" {
		return nil
	}
	return remount(dir)
}
