package shell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// On Linux a command does not run as a child of the program that uses this
// package: it runs under a reaper, a second copy of the same executable
// (/proc/self/exe) started with reaperEnv set, which this package's init
// turns into reaperMain before main runs. The reaper makes itself a child
// subreaper (PR_SET_CHILD_SUBREAPER), so every process the command starts
// stays its descendant even after setsid, a double fork or nohup: an orphan
// is re-parented to the nearest subreaper, not to PID 1. When the command
// ends, times out or is canceled, the reaper signals every descendant it
// finds in /proc, reaps them, and exits only when it has no child left.
//
// Why a process of its own: a subreaper is a property of a whole process.
// Set on the program that uses this package, it would make that program
// the parent of every orphan of every child it has, and reaping them
// (wait4 on any child) would steal the exit status of children that os/exec
// waits for elsewhere in the program. A cgroup would do the same job more
// cheaply, but an ordinary user can seldom create one (the hierarchy is
// delegated only to systemd services, and cgroup v1 has no cgroup.kill).
//
// The protocol between the two: the reaper's stdin is a pipe from the
// parent, which writes 't' on a timeout (SIGTERM to every descendant, then
// SIGKILL after termGrace) and 'k' when the run is canceled (SIGKILL at
// once); the end of that pipe, when the parent dies, counts as 'k'. The
// reaper writes bash's wait status to fd 3 as "S <status>", or why bash
// could not start as "E <message>", before it exits.

const (
	// reaperEnv marks the environment of a reaper process.
	reaperEnv   = "PTK_SHELL_REAPER"
	reaperValue = "v1"
	// reaperName is the reaper's argv[0], as ps shows it.
	reaperName = "ptk-shell-reaper"
	// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER for prctl(2).
	prSetChildSubreaper = 36
	// sysPidfdOpen and sysPidfdSendSignal are the same on every Linux
	// architecture Go supports.
	sysPidfdOpen       = 434
	sysPidfdSendSignal = 424
	// reapLimit bounds how long the reaper tries to kill what is left;
	// only processes stuck in the kernel outlast SIGKILL that long.
	reapLimit = 5 * time.Second
)

func init() {
	if os.Getenv(reaperEnv) == reaperValue {
		// syscall.Exit, not os.Exit, which sleeps a second in programs
		// built with -race.
		syscall.Exit(reaperMain(os.Args[1:]))
	}
}

// tracked reports whether commands run under a reaper; when they do not,
// a process that leaves the command's process group escapes it.
const tracked = true

// start starts argv under a reaper, in dir, with env, writing to out; see
// the comment at the top of this file.
func start(argv []string, dir string, env []string, out *os.File) (*proc, error) {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        append([]string{reaperName}, argv...),
		Dir:         dir,
		Env:         append(env, reaperEnv+"="+reaperValue),
		Stdin:       ctlR,
		Stdout:      out,
		Stderr:      out,
		ExtraFiles:  []*os.File{statW},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	ctlR.Close()
	statW.Close()
	if err != nil {
		ctlW.Close()
		statR.Close()
		return nil, err
	}
	return &proc{cmd: cmd, ctl: ctlW, status: statR}, nil
}

// proc is a command running under a reaper.
type proc struct {
	cmd    *exec.Cmd
	ctl    *os.File // the reaper's control pipe
	status *os.File // where the reaper writes bash's status
}

// terminate asks the reaper to end the command and everything it started:
// with SIGTERM and then SIGKILL after termGrace, or at once with SIGKILL.
func (p *proc) terminate(graceful bool) {
	c := byte('k')
	if graceful {
		c = 't'
	}
	p.ctl.Write([]byte{c})
}

// wait waits for the reaper, which exits when the command and every
// process it started are gone, and returns bash's wait status. Should the
// reaper not exit by itself soon enough after a call to terminate, it is
// killed; should it fail, what is left in its process group is killed.
func (p *proc) wait(terminated <-chan struct{}) (syscall.WaitStatus, error) {
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-terminated:
		select {
		case err = <-done:
		case <-time.After(termGrace + reapLimit + time.Second):
			p.cmd.Process.Kill()
			err = <-done
		}
	}
	p.ctl.Close()
	defer p.status.Close()
	msg, _ := io.ReadAll(io.LimitReader(p.status, 4096))
	switch {
	case bytes.HasPrefix(msg, []byte("S ")):
		n, convErr := strconv.Atoi(string(bytes.TrimSpace(msg[2:])))
		if convErr == nil {
			return syscall.WaitStatus(n), nil
		}
	case bytes.HasPrefix(msg, []byte("E ")):
		return 0, &startError{msg: string(bytes.TrimSpace(msg[2:]))}
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if err == nil {
		err = errors.New("no status")
	}
	return 0, fmt.Errorf("the process reaper failed: %v", err)
}

// startError is bash failing to start.
type startError struct{ msg string }

func (e *startError) Error() string { return e.msg }

// reaperMain runs argv as a child subreaper and returns the reaper's exit
// code; see the comment at the top of this file.
func reaperMain(argv []string) int {
	syscall.CloseOnExec(3)
	status := os.NewFile(3, "status")
	report := func(format string, a ...any) int {
		fmt.Fprintf(status, format, a...)
		return 0
	}
	if len(argv) == 0 {
		return report("E no command")
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return report("E could not become a child subreaper: %v", e)
	}
	os.Unsetenv(reaperEnv)
	// Signals sent to the reaper itself (a terminal's hangup) end the
	// command as a timeout does, rather than orphan it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	path, err := exec.LookPath(argv[0])
	if err != nil {
		return report("E %v", err)
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return report("E %v", err)
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{devNull.Fd(), 1, 2},
	})
	devNull.Close()
	if err != nil {
		return report("E %v", err)
	}

	// One goroutine reaps every child; the kernel says ECHILD once the
	// reaper has no child left, which means no descendant either: each
	// descendant's oldest living ancestor below the reaper is its child.
	exited := make(chan syscall.WaitStatus, 1)
	none := make(chan struct{})
	go func() {
		for {
			var ws syscall.WaitStatus
			p, err := syscall.Wait4(-1, &ws, 0, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil {
				close(none)
				return
			}
			if p == pid {
				exited <- ws
			}
		}
	}()
	ctl := make(chan byte, 1)
	go func() {
		b := make([]byte, 1)
		for {
			if n, err := os.Stdin.Read(b); n == 1 {
				ctl <- b[0]
			} else if err != nil {
				ctl <- 'k'
				return
			}
		}
	}()

	select {
	case ws := <-exited:
		killAll(none)
		return report("S %d", int(ws))
	case c := <-ctl:
		if c == 't' {
			terminateAll(none, ctl)
		}
	case <-sigs:
		terminateAll(none, ctl)
	}
	killAll(none)
	select {
	case ws := <-exited:
		return report("S %d", int(ws))
	default: // bash outlived SIGKILL for reapLimit
		return report("S %d", int(syscall.SIGKILL))
	}
}

// terminateAll sends SIGTERM to every descendant, and to those started
// later, and waits termGrace for them to be gone, or less if told to kill
// at once.
func terminateAll(none <-chan struct{}, ctl <-chan byte) {
	sent := map[int]bool{}
	signalAll(syscall.SIGTERM, sent)
	t := time.NewTimer(termGrace)
	defer t.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-none:
			return
		case <-t.C:
			return
		case c := <-ctl:
			if c == 'k' {
				return
			}
		case <-tick.C:
			signalAll(syscall.SIGTERM, sent)
		}
	}
}

// killAll sends SIGKILL to every descendant until none is left, or for
// reapLimit at most.
func killAll(none <-chan struct{}) {
	deadline := time.After(reapLimit)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		signalAll(syscall.SIGKILL, nil)
		select {
		case <-none:
			return
		case <-deadline:
			return
		case <-time.After(pause):
		}
	}
}

// signalAll sends sig to every descendant of this process but those in
// sent, and adds them to sent if it is not nil. A process is signaled
// through a pidfd opened before its parent is checked again, so a process
// id reused by an unrelated process in between is never signaled.
func signalAll(sig syscall.Signal, sent map[int]bool) {
	parents := processParents()
	self := os.Getpid()
	mine := map[int]bool{self: true}
	// A process is a descendant when its parent is; walk down from self.
	for grew := true; grew; {
		grew = false
		for pid, ppid := range parents {
			if !mine[pid] && mine[ppid] {
				mine[pid], grew = true, true
			}
		}
	}
	delete(mine, self)
	for pid := range mine {
		if sent[pid] {
			continue
		}
		signalChecked(pid, sig, mine)
		if sent != nil {
			sent[pid] = true
		}
	}
}

// signalChecked sends sig to pid if, once a pidfd holds it, its parent is
// still this process or one of its descendants.
func signalChecked(pid int, sig syscall.Signal, mine map[int]bool) {
	fd, _, e := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if e == syscall.ENOSYS { // Linux before 5.3
		syscall.Kill(pid, sig)
		return
	}
	if e != 0 {
		return // gone
	}
	defer syscall.Close(int(fd))
	if ppid, ok := parentOf(pid); !ok || (ppid != os.Getpid() && !mine[ppid]) {
		return
	}
	syscall.Syscall6(sysPidfdSendSignal, fd, uintptr(sig), 0, 0, 0, 0)
}

// processParents returns the parent of every process, from /proc.
func processParents() map[int]int {
	parents := map[int]int{}
	d, err := os.Open("/proc")
	if err != nil {
		return parents
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			parents[pid] = ppid
		}
	}
	return parents
}

// parentOf returns the parent process id of pid, from /proc/pid/stat.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
