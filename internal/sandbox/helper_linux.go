package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// helperSupported reports whether the helper can set the limits here.
const helperSupported = true

// The helper is this executable started as
//
//	/proc/self/exe --ptk-sandbox-helper SPEC PROGRAM ARGS...
//
// with helperEnv=helperValue in its environment: init sets the limits SPEC
// names and becomes PROGRAM (bubblewrap, or the program itself when
// unconfined). Both marks are needed, so that no other start of a program
// importing this package (the shell's reaper, whose environment carries
// the mark to its child) is taken for the helper.
const (
	helperFlag  = "--ptk-sandbox-helper"
	helperEnv   = "PTK_SANDBOX_HELPER"
	helperValue = "v1"
)

func init() {
	if len(os.Args) > 3 && os.Args[1] == helperFlag && os.Getenv(helperEnv) == helperValue {
		err := helperMain(os.Args[2], os.Args[3:])
		fmt.Fprintf(os.Stderr, "ptk sandbox: %v\n", err)
		// syscall.Exit, not os.Exit, which waits in programs built with -race.
		syscall.Exit(126)
	}
}

// helperMain sets the limits of spec and executes argv; it returns only
// when it could not.
func helperMain(spec string, argv []string) error {
	os.Unsetenv(helperEnv)
	lim := map[string]int64{}
	for kv := range strings.SplitSeq(spec, ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("bad limits %q", spec)
		}
		lim[k] = n
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		p, err := exec.LookPath(path)
		if err != nil {
			return err
		}
		path = p
	}
	if n := lim["nproc"]; n > 0 {
		// RLIMIT_NPROC counts every task of the user, inside the sandbox or
		// not: the budget is added to what the user runs now.
		n += int64(tasksOf(os.Getuid()))
		if err := setLimit(unix.RLIMIT_NPROC, n); err != nil {
			return err
		}
	}
	for _, l := range []struct {
		res int
		key string
	}{{unix.RLIMIT_FSIZE, "fsize"}, {unix.RLIMIT_DATA, "data"}} {
		if n := lim[l.key]; n > 0 {
			if err := setLimit(l.res, n); err != nil {
				return err
			}
		}
	}
	return syscall.Exec(path, argv, os.Environ())
}

func setLimit(res int, n int64) error {
	if err := unix.Setrlimit(res, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)}); err != nil {
		return fmt.Errorf("setting limit %d to %d: %w", res, n, err)
	}
	return nil
}

// tasksOf counts the processes and threads whose real user is uid.
func tasksOf(uid int) int {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	want := strconv.Itoa(uid)
	n := 0
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		f, err := os.Open("/proc/" + name + "/status")
		if err != nil {
			continue
		}
		var mine bool
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
				f := strings.Fields(rest)
				mine = len(f) > 0 && f[0] == want
			} else if rest, ok := strings.CutPrefix(line, "Threads:"); ok && mine {
				t, _ := strconv.Atoi(strings.TrimSpace(rest))
				n += t
				break
			}
		}
		f.Close()
	}
	return n
}

// credential makes a command start as the host's nobody: the helper runs
// as nobody (it is started through /proc/self/exe, which needs no access
// to the directories the executable lies in), so its limits are nobody's.
func credential(uid int) *syscall.Credential {
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}
}
