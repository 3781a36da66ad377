package distill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// workspace is the temporary module a candidate is compiled and tested
// in: its go.mod requires this module through a replace directive, so the
// candidate builds against the ptool package it will run with, and no
// module is fetched (GOPROXY=off, the module cache left read-only).
type workspace struct {
	dir     string // the module
	root    string // the ptk module the replace points at
	gocache string
	// modcache is the module cache, read by builds.
	modcache string
	bwrap    string // empty: not sandboxed
	timeout  time.Duration
}

// maxOutput caps the output of a step kept for the report and the model.
const maxOutput = 8 << 10

// newWorkspace makes the temporary module in a new directory below parent.
func newWorkspace(parent, root string, timeout time.Duration, sandbox bool) (*workspace, error) {
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return nil, fmt.Errorf("distill: %s is not the ptk module: %w", root, err)
	}
	dir, err := os.MkdirTemp(parent, "ptk-distill-")
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, err
	}
	w := &workspace{dir: dir, root: root, timeout: timeout}
	w.gocache = goEnv("GOCACHE")
	w.modcache = goEnv("GOMODCACHE")
	if r, err := filepath.EvalSymlinks(root); err == nil {
		w.root = r
	}
	if sandbox {
		if w.bwrap, err = exec.LookPath("bwrap"); err == nil {
			if err := w.probe(); err != nil {
				w.bwrap = ""
			}
		} else {
			w.bwrap = ""
		}
	}
	mod := fmt.Sprintf("module ptkdistilled\n\ngo 1.26.0\n\nrequire github.com/ptkit/ptk v0.0.0-00010101000000-000000000000\n\nreplace github.com/ptkit/ptk => %s\n", root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return nil, err
	}
	if sum, err := os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return nil, err
	}
	return w, nil
}

func goEnv(name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Sandboxed says how the candidate's code is confined.
func (w *workspace) Sandboxed() string {
	if w.bwrap != "" {
		return "bubblewrap: the system read-only, only the temporary module writable, no network"
	}
	return "none: bubblewrap is not installed or cannot run, so the code ran as this user, " +
		"in the temporary module with a bare environment, not confined: the network and the file system are open to it"
}

func (w *workspace) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(w.bwrapArgs(false), "--", "true")
	return exec.CommandContext(ctx, w.bwrap, args...).Run()
}

// bwrapArgs confines a command: the system read-only, a private /tmp, the
// module writable (and the build cache, to build), no network.
func (w *workspace) bwrapArgs(build bool) []string {
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}
	// The ptk module and the module cache are read, wherever they are: a
	// clone under /tmp (as CI's may be) would otherwise vanish under the
	// private /tmp.
	for _, d := range []string{w.root, w.modcache} {
		if d != "" {
			args = append(args, "--ro-bind", d, d)
		}
	}
	args = append(args, "--bind", w.dir, w.dir)
	if build && w.gocache != "" {
		args = append(args, "--bind", w.gocache, w.gocache)
	}
	return append(args, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--die-with-parent", "--new-session", "--chdir", w.dir)
}

// stepResult is what one command did.
type stepResult struct {
	Output   string
	Err      error
	TimedOut bool
}

// run runs argv in the module under the time limit, sandboxed when it
// can be; build says whether it is the go command (which needs the build
// cache) or the candidate's test binary.
func (w *workspace) run(ctx context.Context, build bool, env []string, argv ...string) stepResult {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	name, args := argv[0], argv[1:]
	if w.bwrap != "" {
		args = append(append(w.bwrapArgs(build), "--"), argv...)
		name = w.bwrap
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = w.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.dir, "TMPDIR=" + filepath.Join(w.dir, "tmp"), "LANG=C"}
	if build {
		base = append(base, "GOPROXY=off", "GOFLAGS=-mod=mod", "GONOSUMDB=*", "GOSUMDB=off", "GOTOOLCHAIN=local",
			"CGO_ENABLED=0", "GOCACHE="+w.gocache, "GOMODCACHE="+goEnv("GOMODCACHE"), "GOPATH="+goEnv("GOPATH"),
			"GOTMPDIR="+filepath.Join(w.dir, "tmp"))
	}
	cmd.Env = append(base, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	r := stepResult{Output: capText(strings.ReplaceAll(out.String(), w.dir+"/", ""), maxOutput), Err: err}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.TimedOut = true
		r.Err = fmt.Errorf("stopped after the time limit of %s", w.timeout)
	}
	return r
}

func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n[... output cut]"
}

func (w *workspace) write(name, text string) error {
	return os.WriteFile(filepath.Join(w.dir, name), []byte(text), 0o644)
}

func (w *workspace) remove() { os.RemoveAll(w.dir) }
