//go:build unix

package browser

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own, so that it outlives this
// process and a signal to this process's group does not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
