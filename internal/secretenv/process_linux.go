package secretenv

import "syscall"

// HideProcess makes this process's environment and memory unreadable to
// the other processes of its user, as the commands a model runs without
// the sandbox are: it is made not dumpable (PR_SET_DUMPABLE 0), so that
// its /proc entries (environ, mem, maps) belong to root and only a process
// with CAP_SYS_PTRACE may trace it. Programs it starts are dumpable again
// (execve resets it); their environment is what [Filter] leaves. It also
// means no core dump, and no debugger attaching without root.
func HideProcess() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
