package shell

import (
	"context"
	"time"

	"github.com/ptkit/ptk"
)

// An Executor runs the bash tool's commands somewhere else than in a
// process of ptk's own: in an editor's terminal (ACP's terminal/*, package
// acp), where the user watches them run. The tool's arguments, timeouts and
// result stay the tool's; only the running moves. An Executor is not
// sandboxed by ptk, and nothing confines what it runs to the workspace.
type Executor interface {
	// Exec runs c and reports how it ended. It returns an error only when
	// the context ended; a command that could not start is an Outcome
	// with Failed set.
	Exec(ctx context.Context, c Command) (Outcome, error)
}

// Command is one command for an [Executor] to run.
type Command struct {
	// Argv is the program and its arguments: bash, -c and the command.
	Argv []string
	// Line is the command line the model wrote, for showing.
	Line string
	// Dir is the workspace, an absolute path, where the command starts.
	Dir string
	// Env is added to the environment: PTK=1.
	Env []string
	// Timeout is how long the command may run; the Executor kills it then
	// and sets Outcome.TimedOut.
	Timeout time.Duration
	// MaxOutput is how many bytes of output to keep at most.
	MaxOutput int
}

// Outcome is how a command ended.
type Outcome struct {
	// Output is what the command wrote, stdout and stderr together, at most
	// about MaxOutput bytes, with a note where some was cut.
	Output string
	// ExitCode is the exit status; 128+N when killed by signal N.
	ExitCode int
	// Signal names the signal that killed it ("SIGKILL"), if one did.
	Signal string
	// TimedOut reports that it ran past its timeout and was killed.
	TimedOut bool
	// Failed is why it could not run at all.
	Failed error
}

// WithExecutor runs the commands through e instead of in processes of
// ptk's own. It cannot be combined with [WithSandbox].
func WithExecutor(e Executor) Option { return func(c *config) { c.executor = e } }

// remote runs command through the Shell's Executor.
func (s *Shell) remote(ctx context.Context, command string, timeout time.Duration, note string) (ptk.Result, error) {
	o, err := s.cfg.executor.Exec(ctx, Command{
		Argv: []string{"bash", "-c", command}, Line: command, Dir: s.dir, Env: []string{"PTK=1"},
		Timeout: timeout, MaxOutput: s.cfg.maxOutput,
	})
	if ctx.Err() != nil {
		return ptk.Result{}, ctx.Err()
	}
	if err != nil {
		return failf("could not run the command: %v", err), nil
	}
	if o.Signal != "" {
		o.Signal = "signal " + o.Signal
	}
	return report(o, note, timeout, "it was killed"), nil
}
