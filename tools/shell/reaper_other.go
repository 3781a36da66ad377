//go:build !linux

package shell

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// tracked reports whether commands run under a reaper; when they do not,
// a process that leaves the command's process group escapes it.
const tracked = false

// start starts argv in its own process group, in dir, with env, writing to
// out. Without Linux's child subreapers, only the process group is
// tracked.
func start(argv []string, dir string, env []string, out *os.File) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &proc{cmd: cmd}, nil
}

// proc is a command running in its own process group.
type proc struct {
	cmd *exec.Cmd
}

// terminate signals the command's process group: SIGTERM when graceful,
// SIGKILL otherwise.
func (p *proc) terminate(graceful bool) {
	sig := syscall.SIGKILL
	if graceful {
		sig = syscall.SIGTERM
	}
	syscall.Kill(-p.cmd.Process.Pid, sig)
}

// wait waits for the command, kills its process group termGrace after a
// call to terminate, and kills what is left of the group when it ends.
func (p *proc) wait(terminated <-chan struct{}) (syscall.WaitStatus, error) {
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-terminated:
		select {
		case err = <-done:
		case <-time.After(termGrace):
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			err = <-done
		}
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if p.cmd.ProcessState == nil {
		return 0, err
	}
	return p.cmd.ProcessState.Sys().(syscall.WaitStatus), nil
}

// startError is bash failing to start.
type startError struct{ msg string }

func (e *startError) Error() string { return e.msg }
