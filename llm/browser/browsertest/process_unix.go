//go:build unix

package browsertest

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// uses reports whether the command line holds the argument arg. A
// browser's child processes rewrite theirs as one string, the arguments
// separated by spaces, so an argument ends at a NUL, a space or the end.
func uses(cmdline, arg []byte) bool {
	for i := 0; ; {
		j := bytes.Index(cmdline[i:], arg)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(arg)
		before := start == 0 || cmdline[start-1] == 0 || cmdline[start-1] == ' '
		after := end == len(cmdline) || cmdline[end] == 0 || cmdline[end] == ' '
		if before && after {
			return true
		}
		i = start + 1
	}
}

// KillProfile kills the processes of the browsers that run with the
// profile directory dir (a browser that llm/browser started detached, in
// a session of its own), looking again until none is left.
func KillProfile(dir string) {
	want := []byte("--user-data-dir=" + dir)
	deadline := time.Now().Add(5 * time.Second)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		entries, _ := os.ReadDir("/proc")
		n := 0
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil {
				continue
			}
			if uses(cmdline, want) {
				syscall.Kill(pid, syscall.SIGKILL)
				n++
			}
		}
		if n == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}
