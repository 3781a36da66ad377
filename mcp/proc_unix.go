//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that what it
// starts (npx starts node) can be stopped with it, and a Ctrl-C at the
// terminal reaches ptk, which stops the servers itself.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills what is left of the process group pid leads.
func killGroup(pid int) {
	syscall.Kill(-pid, syscall.SIGKILL)
}
