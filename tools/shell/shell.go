package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/headtail"
	"github.com/ptkit/ptk/internal/sandbox"
	"github.com/ptkit/ptk/internal/secretenv"
	"github.com/ptkit/ptk/tool"
)

// Defaults of a [Shell].
const (
	DefaultTimeout    = 120 * time.Second
	DefaultMaxTimeout = 600 * time.Second
	DefaultMaxOutput  = 50 << 10
)

const (
	// termGrace is how long a timed-out command has between SIGTERM and
	// SIGKILL.
	termGrace = 2 * time.Second
	// drainDelay is how long output is still read after the command and its
	// process group are gone, from processes that left the group.
	drainDelay = 500 * time.Millisecond
)

// ErrNoBwrap is the error [New] returns with [WithSandbox] when bubblewrap
// is not installed.
var ErrNoBwrap = errors.New("--sandbox needs bubblewrap (bwrap), which is not installed: apt install bubblewrap (Debian/Ubuntu), dnf install bubblewrap (Fedora)")

// Defaults of the limits on each process of a sandboxed command; see
// [WithSandboxLimits].
const (
	DefaultSandboxMemory    = 8 << 30
	DefaultSandboxFileSize  = 8 << 30
	DefaultSandboxProcesses = 4096
)

// An Option configures a [Shell].
type Option func(*config)

type config struct {
	sandbox             bool
	executor            Executor
	readOnly            []string
	limits              sandbox.Limits
	timeout, maxTimeout time.Duration
	maxOutput           int
	env                 secretenv.Filter
	protected           []string
}

// WithSandbox runs every command under bubblewrap (see the package doc):
// in new namespaces with no network, as nobody without capabilities, with
// the system (/usr, /etc less what only its owner may read) read-only, the
// workspace writable, a private /tmp and an empty private home directory,
// and nothing else of the host's file system.
func WithSandbox() Option { return func(c *config) { c.sandbox = true } }

// WithReadOnly makes the directories paths visible, read-only, to sandboxed
// commands (a toolchain or a module cache under the home directory, say).
func WithReadOnly(paths ...string) Option {
	return func(c *config) { c.readOnly = append(c.readOnly, paths...) }
}

// WithPassEnv passes the environment variables named on to commands even
// though their names or values look like secrets (a GITHUB_TOKEN for gh,
// say); by default a command's environment holds none (see the package
// doc).
func WithPassEnv(names ...string) Option {
	return func(c *config) { c.env = c.env.Pass(names...) }
}

// WithHiddenEnv keeps the environment variables named out of commands'
// environment as well, whatever their names look like: a catalog's
// api_key_env, a secret under a name that does not say so.
func WithHiddenEnv(names ...string) Option {
	return func(c *config) { c.env = c.env.Hide(names...) }
}

// WithProtected names folders a sandboxed command must not write: a
// sandboxed Shell refuses a workspace that holds one, whether it exists
// yet or not (ptk's configuration, checkpoints and traces: a command would
// write the mcp.json the next ptk starts servers from, outside any
// sandbox).
func WithProtected(dirs ...string) Option {
	return func(c *config) { c.protected = append(c.protected, dirs...) }
}

// WithSandboxLimits sets the limits on each process of a sandboxed command:
// its memory (data) and the size of each file it writes, in bytes, and the
// processes and threads it may add to those its user runs. Defaults:
// [DefaultSandboxMemory], [DefaultSandboxFileSize],
// [DefaultSandboxProcesses]; the process limit does not hold when ptk runs
// as root.
func WithSandboxLimits(memory, fileSize int64, processes int) Option {
	return func(c *config) { c.limits = sandbox.Limits{Memory: memory, FileSize: fileSize, Processes: processes} }
}

// WithDefaultTimeout sets how long a command runs when the call gives no
// timeout; the default is [DefaultTimeout]. It is lowered to the maximum
// timeout if longer.
func WithDefaultTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// WithMaxTimeout sets the longest timeout a call may ask for; the default is
// [DefaultMaxTimeout]. A longer one is lowered to it.
func WithMaxTimeout(d time.Duration) Option {
	return func(c *config) { c.maxTimeout = d }
}

// WithMaxOutput sets how many bytes of output a call returns at most; the
// default is [DefaultMaxOutput]. Longer output is cut in the middle.
func WithMaxOutput(bytes int) Option { return func(c *config) { c.maxOutput = bytes } }

// A Shell runs commands in a workspace directory for the bash tool. It does
// not change after [New] and is safe for concurrent use.
type Shell struct {
	dir  string           // the workspace, absolute
	sb   *sandbox.Sandbox // nil when not sandboxed
	cfg  config
	tool ptk.Tool

	// sbc is sb's configuration; git is the same sandbox with the
	// workspace's .git read-only, made the first time a command runs
	// while there is one.
	sbc     sandbox.Config
	gitOnce sync.Once
	git     *sandbox.Sandbox
	gitErr  error
}

// New returns a Shell that runs commands in the directory workspace. With
// [WithSandbox] it checks that bubblewrap is installed ([ErrNoBwrap]) and
// that it can run here.
func New(workspace string, opts ...Option) (*Shell, error) {
	cfg := config{timeout: DefaultTimeout, maxTimeout: DefaultMaxTimeout, maxOutput: DefaultMaxOutput,
		limits: sandbox.Limits{Memory: DefaultSandboxMemory, FileSize: DefaultSandboxFileSize, Processes: DefaultSandboxProcesses}}
	for _, o := range opts {
		o(&cfg)
	}
	switch {
	case cfg.timeout <= 0:
		return nil, fmt.Errorf("shell: the default timeout must be positive, not %v", cfg.timeout)
	case cfg.maxTimeout <= 0:
		return nil, fmt.Errorf("shell: the maximum timeout must be positive, not %v", cfg.maxTimeout)
	case cfg.maxOutput <= 0:
		return nil, fmt.Errorf("shell: the maximum output must be positive, not %d", cfg.maxOutput)
	}
	cfg.timeout = min(cfg.timeout, cfg.maxTimeout)
	if cfg.sandbox && cfg.executor != nil {
		return nil, errors.New("shell: a sandboxed shell runs its commands itself; it cannot also have an executor")
	}

	dir, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("shell: workspace: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("shell: workspace %s is not a directory", dir)
	}
	s := &Shell{dir: dir, cfg: cfg}
	if cfg.sandbox {
		if s.sb, s.sbc, err = newSandbox(dir, cfg); err != nil {
			return nil, err
		}
	}
	s.tool = tool.New("bash", s.description(), s.run,
		tool.WithSubject(func(a Args) tool.Subject { return tool.Subject{Command: a.Command} }))
	return s, nil
}

// newSandbox returns the sandbox that confines commands to the workspace
// dir, after checking that it works, and its configuration.
func newSandbox(dir string, cfg config) (*sandbox.Sandbox, sandbox.Config, error) {
	sb, c, err := newSandboxUnchecked(dir, cfg)
	if err != nil {
		return nil, c, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sb.Probe(ctx, "true"); err != nil {
		return nil, c, fmt.Errorf("shell: --sandbox: %w", err)
	}
	return sb, c, nil
}

func newSandboxUnchecked(dir string, cfg config) (*sandbox.Sandbox, sandbox.Config, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, sandbox.Config{}, fmt.Errorf("shell: workspace: %w", err)
	}
	c := sandbox.Config{System: true, Tmpfs: []string{"/tmp"}, TmpfsSize: 1 << 30, Dir: real, Limits: cfg.limits}
	// The home directory is an empty one: what is in it (keys, tokens, the
	// trace store) stays out, unless it is the workspace or holds it.
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		if h, err := filepath.EvalSymlinks(home); err == nil {
			home = h
		}
		if home == real || within(home, real) {
			return nil, c, fmt.Errorf("shell: --sandbox: the workspace %s holds the home directory %s, which the sandbox would show whole: choose a project directory", dir, home)
		}
		if home != "/" {
			c.Tmpfs = append(c.Tmpfs, home)
		}
	}
	if real == "/" {
		return nil, c, errors.New("shell: --sandbox: the workspace is /, which the sandbox would show whole: choose a project directory")
	}
	for _, p := range cfg.protected {
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if p == real || within(p, real) {
			return nil, c, fmt.Errorf("shell: --sandbox: the workspace %s holds %s, a folder of ptk's own that a sandboxed command could write: choose a project directory", dir, p)
		}
	}
	for _, p := range cfg.readOnly {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, c, fmt.Errorf("shell: --sandbox: %w", err)
		}
		c.Binds = append(c.Binds, sandbox.Bind{Path: abs})
	}
	// Mounts apply in order: the workspace is bound over the private /tmp
	// or home when it lies below them.
	c.Binds = append(c.Binds, sandbox.Bind{Path: real, Write: true})
	sb, err := sandbox.New(c)
	if errors.Is(err, sandbox.ErrNoBwrap) {
		return nil, c, ErrNoBwrap
	}
	if err != nil {
		return nil, c, fmt.Errorf("shell: --sandbox: %w", err)
	}
	return sb, c, nil
}

// sandbox returns the sandbox a command runs in now: when the workspace
// has a .git (a folder, or a file naming one), one in which it is
// read-only. A sandboxed command would otherwise plant what the user's
// own git runs later, unconfined: a hook, core.fsmonitor in .git/config,
// a .git file that points at a repository the command made.
func (s *Shell) sandbox() (*sandbox.Sandbox, error) {
	fi, err := os.Lstat(filepath.Join(s.sbc.Dir, ".git"))
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return s.sb, nil
	}
	s.gitOnce.Do(func() {
		c := s.sbc
		c.Binds = append(slices.Clip(c.Binds), sandbox.Bind{Path: filepath.Join(c.Dir, ".git")})
		if s.git, s.gitErr = sandbox.New(c); s.gitErr != nil {
			s.gitErr = fmt.Errorf("could not make .git read-only in the sandbox: %w", s.gitErr)
		}
	})
	return s.git, s.gitErr
}

// within reports whether path lies strictly below dir.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Tool returns the bash tool. It is neither read-only nor cacheable.
func (s *Shell) Tool() ptk.Tool { return s.tool }

// Args are the bash tool's arguments; the tool's JSON Schema is derived
// from them by [tool.New].
type Args struct {
	Command string `json:"command" jsonschema:"The command to run with bash -c."`
	// Timeout, when positive, is how long the command may run. A timeout
	// that is given must be positive; it is checked when the call runs, as
	// the schema derived by tool.New has no exclusiveMinimum.
	Timeout float64 `json:"timeout,omitempty" jsonschema:"Seconds before the command is killed."`

	// timeoutGiven tells a timeout of 0 from no timeout.
	timeoutGiven bool
}

// UnmarshalJSON decodes the arguments, noting whether a timeout was given.
func (a *Args) UnmarshalJSON(b []byte) error {
	type plain Args // without this method
	var v struct {
		plain
		Timeout *float64 `json:"timeout"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*a = Args(v.plain)
	if v.Timeout != nil {
		a.Timeout, a.timeoutGiven = *v.Timeout, true
	}
	return nil
}

func (s *Shell) description() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run a command with bash -c in the workspace folder, %s, and return its output: "+
		"stdout and stderr together, in the order written, then a last line \"exit code N\". "+
		"A non-zero exit code is reported, not treated as a failure. ", s.dir)
	fmt.Fprintf(&b, "The command is killed with its whole process group after timeout seconds "+
		"(default %s, at most %s); nothing it starts outlives the call, and each call starts a new shell, "+
		"so cd and exported variables do not carry over. ", seconds(s.cfg.timeout), seconds(s.cfg.maxTimeout))
	fmt.Fprintf(&b, "Output over %s is cut in the middle, keeping its start and its end. ", size(s.cfg.maxOutput))
	b.WriteString("There is no interactive input: stdin is empty, so use non-interactive flags " +
		"(such as -y, --no-pager, --no-edit) and never start an editor or a pager.")
	if s.sb != nil {
		b.WriteString(" The command runs in a sandbox: there is no network, only the workspace, " +
			"a private /tmp and an empty home directory are writable, the system (/usr, /etc) is read-only, " +
			"and nothing else of the machine's file system is there. The workspace's .git is read-only: " +
			"git can read the repository (status, log, diff) but not commit, check out or change its configuration.")
	}
	return b.String()
}

func (s *Shell) run(ctx context.Context, a Args) (ptk.Result, error) {
	if strings.TrimSpace(a.Command) == "" {
		return failf("command is required"), nil
	}
	timeout, note := s.cfg.timeout, ""
	if a.timeoutGiven {
		sec := a.Timeout
		switch {
		case sec <= 0:
			return failf("timeout must be a positive number of seconds, not %s", fmtFloat(sec)), nil
		case sec > s.cfg.maxTimeout.Seconds():
			timeout = s.cfg.maxTimeout
			note = fmt.Sprintf("(timeout %ss is above the maximum; it was lowered to %s)\n", fmtFloat(sec), seconds(timeout))
		default:
			timeout = max(time.Duration(sec*float64(time.Second)), time.Millisecond)
		}
	}
	if err := ctx.Err(); err != nil {
		return ptk.Result{}, err
	}
	if s.cfg.executor != nil {
		return s.remote(ctx, a.Command, timeout, note)
	}
	return s.exec(ctx, a.Command, timeout, note)
}

// exec runs command and reports its output and exit status.
func (s *Shell) exec(ctx context.Context, command string, timeout time.Duration, note string) (ptk.Result, error) {
	argv := []string{"bash", "-c", command}
	env := (&exec.Cmd{Dir: s.dir}).Environ() // with PWD set to the workspace
	env, _ = s.cfg.env.Apply(env)            // no provider key, store password or client key
	env = append(env, "PTK=1")
	if s.sb != nil {
		sb, err := s.sandbox()
		if err != nil {
			return failf("%v", err), nil
		}
		var senv []string
		argv, senv = sb.Wrap(argv)
		env = append(env, senv...)
	}

	// One pipe for stdout and stderr keeps them in the order written. As
	// an *os.File it is handed to the command as is.
	r, w, err := os.Pipe()
	if err != nil {
		return failf("could not run bash: %v", err), nil
	}
	defer r.Close()
	// Stdin is /dev/null.
	p, err := start(argv, s.dir, env, w)
	w.Close()
	if err != nil {
		return failf("could not start bash: %v", err), nil
	}
	out := headtail.New(s.cfg.maxOutput)
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(out, r)
	}()

	// On cancellation kill at once; on timeout give the command and what
	// it started termGrace to exit.
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	terminated := make(chan struct{})
	var timedOut bool
	stop := context.AfterFunc(tctx, func() {
		timedOut = ctx.Err() == nil
		p.terminate(timedOut)
		close(terminated)
	})
	status, err := p.wait(terminated)
	if !stop() {
		<-terminated // timedOut is set
	}
	// Read what the command wrote, but not for long from processes that
	// escaped it and still hold the pipe.
	select {
	case <-done:
	case <-time.After(drainDelay):
		r.SetReadDeadline(time.Now())
		<-done
	}

	if ctx.Err() != nil {
		return ptk.Result{}, ctx.Err()
	}
	var serr *startError
	if errors.As(err, &serr) {
		return failf("could not start bash: %v", serr), nil
	}
	o := Outcome{Output: out.String(), TimedOut: timedOut, Failed: err}
	if status.Signaled() {
		o.ExitCode, o.Signal = 128+int(status.Signal()), fmt.Sprintf("signal %d: %v", int(status.Signal()), status.Signal())
	} else {
		o.ExitCode = status.ExitStatus()
	}
	return report(o, note, timeout, "the process group was killed"), nil
}

// report is the bash tool's result for what became of a command: its
// output, then the note, then how it ended.
func report(o Outcome, note string, timeout time.Duration, killed string) ptk.Result {
	var b strings.Builder
	if o.Output == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(o.Output)
		if !strings.HasSuffix(o.Output, "\n") {
			b.WriteByte('\n')
		}
	}
	b.WriteString(note)
	switch {
	case o.TimedOut:
		fmt.Fprintf(&b, "timed out after %v; %s", timeout, killed)
		return ptk.Result{Content: b.String(), IsError: true}
	case o.Failed != nil:
		fmt.Fprintf(&b, "bash failed: %v", o.Failed)
		return ptk.Result{Content: b.String(), IsError: true}
	case o.Signal != "":
		fmt.Fprintf(&b, "exit code %d (killed by %s)", o.ExitCode, o.Signal)
	default:
		fmt.Fprintf(&b, "exit code %d", o.ExitCode)
	}
	return ptk.Result{Content: b.String()}
}

func failf(format string, args ...any) ptk.Result {
	return ptk.Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// seconds formats d as a number of seconds, like "120s".
func seconds(d time.Duration) string { return fmtFloat(d.Seconds()) + "s" }

// size formats n bytes as "50 KB" when it is a whole number of KB.
func size(n int) string {
	if n >= 1<<10 && n%(1<<10) == 0 {
		return strconv.Itoa(n>>10) + " KB"
	}
	return strconv.Itoa(n) + " bytes"
}
