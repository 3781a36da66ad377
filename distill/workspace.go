package distill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ptkit/ptk/internal/sandbox"
)

// A workspace is where the candidates of one distillation are compiled,
// tested and scored:
//
//	base/src    the temporary module: go.mod and the candidate's files
//	base/ptk    the module github.com/ptkit/ptk the candidate builds
//	            against: a stub whose package ptool declares ErrFallback,
//	            all the screen lets distilled code use of ptk (the real
//	            ptool would bring ptk's model clients, net/http and crypto
//	            into every build), so neither the ptk module nor the
//	            module cache is in the sandbox
//	base/cache  its own GOCACHE, a copy of a seed built once without any
//	            candidate's code: never the user's build cache
//	base/bin    the test binary
//	base/run    a run's inputs and results, made anew for each run
//
// The go command runs in the build sandbox (GOROOT, src and ptk
// read-only, cache and bin writable), the test binary in the run sandbox
// (bin read-only, run writable): a candidate's running code can change
// nothing a later build reads. Both run with GOENV=off and a GOFLAGS of
// ptk's own, so no env file, go.work or GOCACHEPROG reaches the go
// command.
type workspace struct {
	base, src, stub, cache, bin, runDir string
	goroot, gobin                       string
	build, exec                         *sandbox.Sandbox
	timeout                             time.Duration
	log                                 func(string, ...any)
}

// Limits of the sandboxes; Options.Memory replaces runMemory.
const (
	buildMemory    = 4 << 30
	buildFileSize  = 1 << 30
	buildProcesses = 512
	runMemory      = 1 << 30
	runFileSize    = 64 << 20
	runProcesses   = 64
	// maxOutput bounds the output of a step kept for the report.
	maxOutput = 16 << 10
)

// ErrNoSandbox is returned by Run when the candidates' code cannot be
// confined (bubblewrap is missing or cannot run here) and
// Options.NoSandbox does not say to run it anyway.
var ErrNoSandbox = errors.New("distill: the candidates' code cannot be confined")

// newWorkspace makes the temporary module below o.WorkDir.
func newWorkspace(ctx context.Context, o *Options) (*workspace, error) {
	gobin, goroot, err := goTool()
	if err != nil {
		return nil, err
	}
	base, err := os.MkdirTemp(o.WorkDir, "ptk-distill-")
	if err != nil {
		return nil, err
	}
	if base, err = filepath.EvalSymlinks(base); err != nil {
		return nil, err
	}
	w := &workspace{base: base, src: filepath.Join(base, "src"), stub: filepath.Join(base, "ptk"), cache: filepath.Join(base, "cache"),
		bin: filepath.Join(base, "bin"), runDir: filepath.Join(base, "run"), goroot: goroot, gobin: gobin,
		timeout: o.Timeout, log: o.Log}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(base)
		}
	}()
	for _, d := range []string{w.src, w.stub, filepath.Join(w.stub, "ptool"), w.cache, w.bin, w.runDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	// The base is entered by the sandbox's user, nobody when ptk is root.
	if err := os.Chmod(base, 0o755); err != nil {
		return nil, err
	}
	files := map[string]string{
		filepath.Join(w.src, "go.mod"):             "module ptkdistilled\n\ngo 1.26.0\n\nrequire github.com/ptkit/ptk v0.0.0-00010101000000-000000000000\n\nreplace github.com/ptkit/ptk => ../ptk\n",
		filepath.Join(w.stub, "go.mod"):            "module github.com/ptkit/ptk\n\ngo 1.26.0\n",
		filepath.Join(w.stub, "ptool", "ptool.go"): ptoolStub,
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{w.src, w.stub} {
		if err := w.share(d, false); err != nil {
			return nil, err
		}
	}
	if err := w.sandboxes(ctx, o); err != nil {
		return nil, err
	}
	for _, d := range []string{w.cache, w.bin, w.runDir} {
		if err := w.share(d, true); err != nil {
			return nil, err
		}
	}
	ok = true
	return w, nil
}

// goTool returns the go command and its GOROOT.
func goTool() (gobin, goroot string, err error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", "", fmt.Errorf("distill: the go command is needed to build the candidates: %w", err)
	}
	goroot = strings.TrimSpace(string(out))
	if r, err := filepath.EvalSymlinks(goroot); err == nil {
		goroot = r
	}
	gobin = filepath.Join(goroot, "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		return "", "", fmt.Errorf("distill: no go command in GOROOT %s: %w", goroot, err)
	}
	return gobin, goroot, nil
}

// ptoolStub is the package ptool the candidates build against: what the
// screen lets distilled code use of the real one (allowedPtool), declared
// as there (TestPtoolStub compares them).
const ptoolStub = `// Package ptool is a stub of ptk's, with what distilled code may use.
package ptool

import "errors"

// ErrFallback is what the code of a distilled function returns (wrapped
// or as it is) to say it is not sure: its ptool answers instead.
var ErrFallback = errors.New("distilled code is not sure")
`

// sandboxes makes the build and run sandboxes, confined unless
// o.NoSandbox, and checks that they work.
func (w *workspace) sandboxes(ctx context.Context, o *Options) error {
	buildEnv := []string{"PATH=" + filepath.Dir(w.gobin), "HOME=/tmp", "GOROOT=" + w.goroot, "GOENV=off",
		"GOFLAGS=-mod=readonly -trimpath -p=4", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local",
		"GOCACHE=" + w.cache, "GOTMPDIR=/tmp", "GOPATH=/tmp/gopath", "CGO_ENABLED=0", "GOTELEMETRY=off", "LANG=C"}
	build := sandbox.Config{
		Binds: []sandbox.Bind{{Path: w.goroot}, {Path: w.src}, {Path: w.stub}, {Path: w.cache, Write: true}, {Path: w.bin, Write: true}},
		Tmpfs: []string{"/tmp"}, TmpfsSize: 512 << 20, Dir: w.src, Env: buildEnv, DropRoot: true,
		Limits: sandbox.Limits{Memory: buildMemory, FileSize: buildFileSize, Processes: buildProcesses},
	}
	run := sandbox.Config{
		Binds: []sandbox.Bind{{Path: w.bin}, {Path: w.runDir, Write: true}},
		Tmpfs: []string{"/tmp"}, Dir: w.runDir, DropRoot: true,
		Env:    []string{"HOME=/tmp", "TMPDIR=/tmp", "GOMAXPROCS=2", "LANG=C"},
		Limits: sandbox.Limits{Memory: o.Memory, FileSize: runFileSize, Processes: runProcesses},
	}
	if o.NoSandbox {
		// Unconfined, the paths the programs see are the host's: the
		// temporary directories replace the private /tmp.
		tmp := filepath.Join(w.base, "tmp")
		if err := os.Mkdir(tmp, 0o755); err != nil {
			return err
		}
		build.Env = replaceEnv(build.Env, "HOME="+tmp, "GOTMPDIR="+tmp, "GOPATH="+filepath.Join(tmp, "gopath"))
		run.Env = replaceEnv(run.Env, "HOME="+tmp, "TMPDIR="+tmp)
		w.build, w.exec = sandbox.Unconfined(build), sandbox.Unconfined(run)
		return nil
	}
	var err error
	if w.build, err = sandbox.New(build); err != nil {
		return fmt.Errorf("%w: %v; Options.NoSandbox (ptk distill --no-sandbox) runs it unconfined", ErrNoSandbox, err)
	}
	if w.exec, err = sandbox.New(run); err != nil {
		return fmt.Errorf("%w: %v", ErrNoSandbox, err)
	}
	if w.build.AsNobody() {
		// Nobody must reach GOROOT and the workspace: a toolchain or a
		// --work-dir under root's home cannot be; the sandbox then runs as
		// root mapped to nobody.
		if !worldReadable(w.goroot) || !worldReadable(filepath.Dir(w.base)) {
			build.DropRoot, run.DropRoot = false, false
			if w.build, err = sandbox.New(build); err != nil {
				return fmt.Errorf("%w: %v", ErrNoSandbox, err)
			}
			if w.exec, err = sandbox.New(run); err != nil {
				return fmt.Errorf("%w: %v", ErrNoSandbox, err)
			}
		}
	}
	if err := w.build.Probe(ctx, w.gobin, "version"); err != nil {
		return fmt.Errorf("%w: %v; Options.NoSandbox (ptk distill --no-sandbox) runs it unconfined", ErrNoSandbox, err)
	}
	return nil
}

// worldReadable reports whether every directory from / to dir may be
// entered by others, and dir read.
func worldReadable(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o005 != 0o005 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

func replaceEnv(env []string, kvs ...string) []string {
	env = slices.Clone(env)
	for _, kv := range kvs {
		k, _, _ := strings.Cut(kv, "=")
		for i, e := range env {
			if strings.HasPrefix(e, k+"=") {
				env[i] = kv
			}
		}
	}
	return env
}

// share makes dir readable (and, when writable, writable) by the sandbox's
// user: files 0644 and directories 0755, owned by it when writable.
func (w *workspace) share(dir string, writable bool) error {
	uid := -1
	if writable && w.build != nil && w.build.Confined() {
		uid = w.build.User()
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
		if uid >= 0 && uid != os.Geteuid() {
			return os.Lchown(p, uid, uid)
		}
		return nil
	})
}

// seedKey names the seed cache for this toolchain and harness.
func (w *workspace) seedKey() (string, error) {
	out, err := exec.Command(w.gobin, "version").Output()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n%s\n%s\n", out, w.goroot, harnessSource, wrapSource, ptoolStub, strings.Join(Allowed, ","))
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// seed fills the workspace's build cache from the seed under cacheDir: a
// copy, so nothing a build here writes reaches the seed. When there is no
// seed yet, build makes the cache (compiling what every candidate needs)
// and it is kept as the seed.
func (w *workspace) seed(ctx context.Context, cacheDir string, build func() error) error {
	key, err := w.seedKey()
	if err != nil {
		return err
	}
	seed := filepath.Join(cacheDir, "gocache-"+key)
	if _, err := os.Stat(filepath.Join(seed, "README")); err == nil {
		start := time.Now()
		if err := copyTree(seed, w.cache); err != nil {
			return fmt.Errorf("distill: copying the build cache's seed: %w", err)
		}
		w.log("build cache: a copy of the seed %s (%s)", seed, time.Since(start).Round(time.Millisecond))
		return w.share(w.cache, true)
	}
	start := time.Now()
	if err := build(); err != nil {
		return err
	}
	w.log("build cache: built in %s; kept as the seed %s", time.Since(start).Round(time.Second), seed)
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil // the seed is an optimisation
	}
	tmp, err := os.MkdirTemp(cacheDir, "gocache-new-")
	if err != nil {
		return nil
	}
	if err := copyTree(w.cache, tmp); err != nil {
		os.RemoveAll(tmp)
		return nil
	}
	if err := os.Rename(tmp, seed); err != nil {
		os.RemoveAll(tmp) // another distillation made it first
		return nil
	}
	// Seeds of other toolchains or ptk versions are not read again.
	old, _ := filepath.Glob(filepath.Join(cacheDir, "gocache-*"))
	for _, o := range old {
		if o != seed && !strings.HasPrefix(filepath.Base(o), "gocache-new-") {
			os.RemoveAll(o)
		}
	}
	return nil
}

// copyTree copies the regular files and directories below src into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// reset empties the module of everything but go.mod, and the run
// directory, before a round writes its files.
func (w *workspace) reset() error {
	entries, err := os.ReadDir(w.src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if n := e.Name(); n != "go.mod" {
			if err := os.RemoveAll(filepath.Join(w.src, n)); err != nil {
				return err
			}
		}
	}
	return w.newRunDir()
}

// newRunDir makes the run directory anew.
func (w *workspace) newRunDir() error {
	if err := os.RemoveAll(w.runDir); err != nil {
		return err
	}
	if err := os.Mkdir(w.runDir, 0o755); err != nil {
		return err
	}
	return w.share(w.runDir, true)
}

// write writes a file of the module.
func (w *workspace) write(name, text string) error {
	p := filepath.Join(w.src, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Chmod(p, 0o644)
}

// goCmd runs the go command in the build sandbox.
func (w *workspace) goCmd(ctx context.Context, args ...string) sandbox.Result {
	r := w.build.Run(ctx, w.timeout, maxOutput, nil, append([]string{w.gobin}, args...)...)
	r.Output = w.relative(r.Output)
	return r
}

// test runs the test binary in the run sandbox with env.
func (w *workspace) test(ctx context.Context, env []string, args ...string) sandbox.Result {
	r := w.exec.Run(ctx, w.timeout, maxOutput, env, append([]string{filepath.Join(w.bin, "ptk.test")}, args...)...)
	r.Output = w.relative(r.Output)
	return r
}

// relative drops the workspace's paths from a program's output.
func (w *workspace) relative(s string) string {
	return strings.NewReplacer(w.src+"/", "", w.runDir+"/", "", w.base+"/", "", w.base, "").Replace(s)
}

func (w *workspace) remove() { os.RemoveAll(w.base) }

// describe says how the candidates' code is confined.
func (w *workspace) describe() string {
	if !w.exec.Confined() {
		return "none: --no-sandbox was given, so the candidates' code ran unconfined, as this user, with the network and every file this user may read or write open to it; only the time and memory limits and a clean environment applied"
	}
	who := "nobody in a user namespace of its own"
	if w.exec.AsNobody() {
		who = "the host's nobody (ptk runs as root), in a user namespace of its own"
	}
	return "bubblewrap: as " + who + ", with no capability and no network; the build saw only GOROOT, the temporary module " +
		"and a build cache of its own; the tests and the scoring only the test binary; memory, file size and processes limited; output bounded"
}

func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n[... output cut]"
}
