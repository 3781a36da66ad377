// Package sandbox runs a program that ptk did not write (a model's shell
// command, a distilled candidate's tests) confined by bubblewrap, the one
// mechanism behind `ptk run --sandbox` (tools/shell) and `ptk distill`.
//
// A Sandbox is a bubblewrap command line made once from a Config and used
// for any number of runs. Every run gets:
//
//   - new namespaces of every kind bubblewrap knows (--unshare-all): no
//     network (loopback only), its own PID, IPC, UTS and cgroup views;
//   - a new user namespace in which the program is nobody (65534) with no
//     capability (--cap-drop ALL), so that root outside is not root inside:
//     it cannot mount, remount or change what it sees; where bubblewrap
//     supports it (0.8.0 on), no further user namespace can be made inside;
//   - an empty root: only what the Config binds is there, never / or the
//     home directory; System binds the base system (/usr, /etc less the
//     files only their owner may read) for a shell, and nothing else of the
//     host's file system is visible, so neither the host's Unix sockets
//     (/run, /var/run, /tmp) nor its secrets are;
//   - resource limits set before bubblewrap starts (see Limits), and, when
//     DropRoot is set and the program runs as root, the host's nobody as
//     its user, so that even a file bound by mistake is read as nobody;
//   - a new session (no terminal to inject keystrokes into) and death with
//     its parent.
//
// The limits are set by a helper: the command is this same executable,
// started again through /proc/self/exe with a marker in its arguments and
// environment; this package's init function sees the marker, sets the
// limits, drops to nobody if asked, and becomes bubblewrap with execve
// before main runs. Any program that imports this package (ptk and its
// test binaries do) can therefore start a sandbox.
//
// What it does not do: it does not stop a program from using the CPU for
// its time limit, from filling its writable binds up to the file-size
// limit per file, or from reading what the Config binds; it is no defence
// against a kernel bug. See docs/security-sandbox.md.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ptkit/ptk/internal/headtail"
)

// ErrNoBwrap is returned by New when bubblewrap is not installed.
var ErrNoBwrap = errors.New("bubblewrap (bwrap) is not installed: apt install bubblewrap (Debian/Ubuntu), dnf install bubblewrap (Fedora)")

// Nobody is the user and group the program is inside the sandbox, and
// outside too with DropRoot.
const Nobody = 65534

// Bind is a host path made visible in the sandbox at the same path.
type Bind struct {
	Path string
	// Write makes it writable; else it is read-only.
	Write bool
}

// Limits are the resource limits of every process in the sandbox. A zero
// field sets no limit.
type Limits struct {
	// Memory bounds each process's data (RLIMIT_DATA: heap and private
	// writable mappings, what a program allocates), in bytes.
	Memory int64
	// FileSize bounds the size of each file a process writes
	// (RLIMIT_FSIZE), in bytes.
	FileSize int64
	// Processes bounds the processes and threads the sandbox may add to
	// those its user already runs (RLIMIT_NPROC, which counts the user's
	// tasks). The kernel does not apply it to root: it holds only when the
	// sandbox's user is not root outside (DropRoot, or ptk not run as root).
	Processes int
}

// Config says what a sandbox holds.
type Config struct {
	// Binds are made in order, after System and Tmpfs, so a bind may lie
	// inside a tmpfs.
	Binds []Bind
	// System binds the base system read-only: /usr, /bin, /sbin and the
	// /lib directories (or their symbolic links into /usr), and /etc with
	// every file that others may not read, and every directory they may
	// not enter, hidden.
	System bool
	// Tmpfs lists directories that are private, empty and writable in the
	// sandbox (such as /tmp or the home directory), each of at most
	// TmpfsSize bytes (default 64 MiB), as is /dev/shm.
	Tmpfs     []string
	TmpfsSize int64
	// Dir is the working directory inside (default /).
	Dir string
	// Env is the environment of the program (nothing else of ptk's).
	Env []string
	// Limits apply to every process inside.
	Limits Limits
	// DropRoot runs the sandbox as the host's nobody when ptk runs as
	// root: every bound path must then be reachable by nobody.
	DropRoot bool
}

// A Sandbox runs programs as its Config says. It does not change after New
// and is safe for concurrent use.
type Sandbox struct {
	bwrap string   // empty: unconfined
	args  []string // bubblewrap's arguments before "--"
	cfg   Config
	uid   int // the user the helper becomes, -1 to stay
}

// New returns a sandbox confined by bubblewrap, or ErrNoBwrap when
// bubblewrap is not installed. It does not run anything: Probe does.
func New(c Config) (*Sandbox, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, ErrNoBwrap
	}
	if !helperSupported {
		return nil, fmt.Errorf("sandbox: bubblewrap is used on Linux only")
	}
	s := &Sandbox{bwrap: bwrap, cfg: c, uid: -1}
	if c.DropRoot && os.Geteuid() == 0 {
		s.uid = Nobody
	}
	if s.args, err = s.bwrapArgs(disableUserns(bwrap)); err != nil {
		return nil, err
	}
	return s, nil
}

// Unconfined returns a sandbox that is none: it runs programs with c's
// environment, working directory and limits, but sees and may change
// whatever the user running ptk may. It is what --no-sandbox asks for.
func Unconfined(c Config) *Sandbox {
	return &Sandbox{cfg: c, uid: -1}
}

// Confined reports whether programs run under bubblewrap.
func (s *Sandbox) Confined() bool { return s.bwrap != "" }

// AsNobody reports whether the sandbox runs as the host's nobody.
func (s *Sandbox) AsNobody() bool { return s.uid == Nobody }

// User is the user id the programs run as outside the sandbox.
func (s *Sandbox) User() int {
	if s.uid >= 0 {
		return s.uid
	}
	return os.Geteuid()
}

// disableUserns reports whether bwrap has --disable-userns (0.8.0 on).
func disableUserns(bwrap string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, bwrap, "--help").CombinedOutput()
	return strings.Contains(string(out), "--disable-userns")
}

func (s *Sandbox) bwrapArgs(noUserns bool) ([]string, error) {
	c := s.cfg
	args := []string{"--unshare-all", "--unshare-user"}
	if noUserns {
		args = append(args, "--disable-userns")
	}
	id := strconv.Itoa(Nobody)
	size := c.TmpfsSize
	if size <= 0 {
		size = 64 << 20
	}
	sz := strconv.FormatInt(size, 10)
	args = append(args, "--uid", id, "--gid", id, "--cap-drop", "ALL",
		"--die-with-parent", "--new-session", "--hostname", "sandbox",
		"--proc", "/proc", "--dev", "/dev", "--size", sz, "--tmpfs", "/dev/shm")
	if c.System {
		sys, err := systemArgs()
		if err != nil {
			return nil, err
		}
		args = append(args, sys...)
	}
	for _, d := range c.Tmpfs {
		if !filepath.IsAbs(d) || filepath.Clean(d) == "/" {
			return nil, fmt.Errorf("sandbox: tmpfs %q: an absolute directory other than / is needed", d)
		}
		args = append(args, "--size", sz, "--tmpfs", filepath.Clean(d))
	}
	for _, b := range c.Binds {
		if !filepath.IsAbs(b.Path) || filepath.Clean(b.Path) == "/" {
			return nil, fmt.Errorf("sandbox: bind %q: an absolute path other than / is needed", b.Path)
		}
		flag := "--ro-bind"
		if b.Write {
			flag = "--bind"
		}
		p := filepath.Clean(b.Path)
		args = append(args, flag, p, p)
	}
	dir := c.Dir
	if dir == "" {
		dir = "/"
	}
	// The root is a tmpfs holding the mount points, with no bound on its
	// size: read-only once they are made.
	return append(args, "--remount-ro", "/", "--chdir", dir), nil
}

// systemArgs binds the base system read-only.
func systemArgs() ([]string, error) {
	args := []string{"--ro-bind", "/usr", "/usr"}
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return nil, err
			}
			args = append(args, "--symlink", target, d)
		case fi.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	if _, err := os.Stat("/etc"); err == nil {
		args = append(args, "--ro-bind", "/etc", "/etc")
		args = append(args, hidden("/etc")...)
	}
	return args, nil
}

// hidden returns the arguments that hide, under the directory root, each
// file others may not read (an unreadable device in its place) and each
// directory others may not enter (an empty tmpfs): inside the sandbox its
// user would be their owner, since the user namespace maps it to the user
// running ptk.
func hidden(root string) []string {
	var args []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				args = append(args, "--size", "4096", "--tmpfs", p)
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&os.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		switch perm := fi.Mode().Perm(); {
		case d.IsDir() && perm&0o005 != 0o005 && p != root:
			args = append(args, "--size", "4096", "--tmpfs", p)
			return filepath.SkipDir
		case !d.IsDir() && perm&0o004 == 0:
			args = append(args, "--ro-bind", os.DevNull, p)
		}
		return nil
	})
	return args
}

// Command returns the command that runs argv in the sandbox, with env added
// to the Config's environment, in a process group of its own. Its Path is
// this executable (the helper, on Linux); the caller sets its input and
// output and starts it.
func (s *Sandbox) Command(env []string, argv ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if helperSupported {
		args, cenv := s.Wrap(argv)
		cmd = &exec.Cmd{Path: "/proc/self/exe", Args: args, Env: append(cenv, env...), Dir: "/"}
	} else { // unconfined, without limits
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(slices.Clone(s.cfg.Env), env...)
	}
	if s.bwrap == "" && s.cfg.Dir != "" {
		cmd.Dir = s.cfg.Dir
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.uid >= 0 {
		cmd.SysProcAttr.Credential = credential(s.uid)
	}
	return cmd
}

// Wrap returns the argument vector (its first element the program to run,
// /proc/self/exe) and the environment that run argv in the sandbox, for a
// caller that starts processes itself on Linux, as the shell's reaper does.
// It cannot drop root: DropRoot needs Command.
func (s *Sandbox) Wrap(argv []string) (args, env []string) {
	l := s.cfg.Limits
	spec := fmt.Sprintf("data=%d,fsize=%d,nproc=%d,uid=%d", l.Memory, l.FileSize, l.Processes, s.uid)
	args = []string{"/proc/self/exe", helperFlag, spec}
	if s.bwrap != "" {
		args = append(append(append(args, s.bwrap), s.args...), "--")
	}
	args = append(args, argv...)
	env = append(slices.Clone(s.cfg.Env), helperEnv+"="+helperValue)
	return args, env
}

// Result is what a run did.
type Result struct {
	// Output is what the program wrote to stdout and stderr, its head and
	// tail when it wrote more than the bound; Total counts all of it.
	Output string
	Total  int64
	// Err is nil when the program exited 0.
	Err error
	// TimedOut reports that the time limit ended it.
	TimedOut bool
}

// Run runs argv in the sandbox with env added, under timeout, reading its
// output through a buffer of maxOutput bytes: however much it writes, Run
// holds no more. On a timeout or when ctx ends the helper, bubblewrap and
// (through the PID namespace) everything inside are killed.
func (s *Sandbox) Run(ctx context.Context, timeout time.Duration, maxOutput int, env []string, argv ...string) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := s.Command(env, argv...)
	out := headtail.New(maxOutput)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return Result{Err: err}
	}
	stop := context.AfterFunc(ctx, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err := cmd.Wait()
	stop()
	r := Result{Output: out.String(), Total: out.Total(), Err: err}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.TimedOut = true
		r.Err = fmt.Errorf("stopped after the time limit of %s", timeout)
	} else if ctx.Err() != nil {
		r.Err = ctx.Err()
	}
	return r
}

// Probe runs argv in the sandbox and returns an error saying why bubblewrap
// cannot run here when it fails.
func (s *Sandbox) Probe(ctx context.Context, argv ...string) error {
	r := s.Run(ctx, 30*time.Second, 4<<10, nil, argv...)
	if r.Err == nil {
		return nil
	}
	msg := strings.TrimSpace(r.Output)
	if msg == "" {
		msg = r.Err.Error()
	}
	return fmt.Errorf("bubblewrap cannot run here (%s); the kernel may forbid unprivileged user namespaces: "+
		"see sysctl kernel.unprivileged_userns_clone and kernel.apparmor_restrict_unprivileged_userns", msg)
}
