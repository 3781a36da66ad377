package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptkit/ptk/internal/term"
)

// ptk's durable runs on Temporal are the commands of a binary of their
// own, ptk-temporal (module github.com/ptkit/ptk/temporal), which ptk runs
// for 'ptk worker', 'ptk runs' and 'ptk run --temporal': the Temporal SDK
// is a large dependency, and ptk itself never links it.

// exitStatus is the exit status of a command ptk handed over to: ptk ends
// with it, without a message of its own (the command said what went wrong).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

const temporalInstall = "go install github.com/ptkit/ptk/temporal/cmd/ptk-temporal@latest"

// temporalBinary finds ptk-temporal: $PTK_TEMPORAL, then the PATH, then
// beside ptk's own executable.
func temporalBinary() (string, error) {
	if b := os.Getenv("PTK_TEMPORAL"); b != "" {
		return b, nil
	}
	if b, err := exec.LookPath("ptk-temporal"); err == nil {
		return b, nil
	}
	if self, err := os.Executable(); err == nil {
		b := filepath.Join(filepath.Dir(self), "ptk-temporal")
		if _, err := os.Stat(b); err == nil {
			return b, nil
		}
	}
	return "", usagef("durable runs need ptk-temporal, which is not on the PATH: install it with %s (or set PTK_TEMPORAL to its path)", temporalInstall)
}

// handOff runs ptk-temporal with args, with the command's standard streams,
// and ends ptk with its exit status.
func handOff(cmd *cobra.Command, args []string) error {
	bin, err := temporalBinary()
	if err != nil {
		return err
	}
	// A signal that stops ptk (SIGINT, SIGTERM: it cancels the command's
	// context) goes on to ptk-temporal as SIGTERM, and ptk waits for it to
	// stop (a worker finishes the calls it is running): a service manager
	// that stops ptk stops the worker, never leaves it behind.
	c := exec.CommandContext(cmd.Context(), bin, args...)
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	// ptk-temporal gets ptk's own standard streams, not ptk's safe writers
	// over them: it makes its output safe itself, and asks for approvals
	// only when they are a terminal
	c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), term.Unwrap(cmd.OutOrStdout()), term.Unwrap(cmd.ErrOrStderr())
	err = c.Run()
	switch st := c.ProcessState; {
	case st != nil && st.Success():
		return nil // stopped by a signal ptk passed on, or done
	case st != nil && st.ExitCode() > 0:
		return exitStatus(st.ExitCode())
	}
	return fmt.Errorf("ptk-temporal: %w", err)
}

// newTemporalCmd is a command that ptk-temporal runs: name, with every
// argument and flag passed on as it is.
func newTemporalCmd(name, short, long string) *cobra.Command {
	return &cobra.Command{
		Use:                name,
		Short:              short,
		Long:               long + "\n\nptk runs it with ptk-temporal (" + temporalInstall + "): 'ptk " + name + " --help' shows its flags.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return handOff(cmd, append([]string{name}, args...))
		},
	}
}

func newWorkerCmd() *cobra.Command {
	return newTemporalCmd("worker", "Run ptk's durable workflows and activities for a Temporal server",
		`worker registers ptk's workflows (agent runs, ReAct runs, workflows of
ptools) and activities (model, tool and ptool calls) with a Temporal server
and runs them: runs started with 'ptk run --temporal' outlive any one
worker. See docs/temporal.md.`)
}

func newRunsCmd() *cobra.Command {
	return newTemporalCmd("runs", "Look at a durable run, approve its calls, or cancel it (status|approve|cancel ID)",
		`runs status ID prints a durable run's state and events, runs approve ID
CALL lets a call that waits for approval run (--deny refuses it), and runs
cancel ID stops the run.`)
}

// temporalFlags are the flags of a command that can start its run on
// Temporal instead (ptk run, ptk workflow run).
type temporalFlags struct {
	address string
	detach  bool
}

func (t *temporalFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&t.address, "temporal", "", "run on ptk's workers of the Temporal server at HOST:PORT (ptk worker), not here: the run outlives this command")
	fl.BoolVar(&t.detach, "detach", false, "with --temporal: print the run's id and return at once")
}

// handOffRun hands a command given --temporal to ptk-temporal: the flags
// it takes there, and args. A flag that belongs to the workers (the
// workspace, the tools' settings) is a usage error that says so.
func (t *temporalFlags) handOffRun(cmd *cobra.Command, sub []string, passed []string, args []string) error {
	if t.address == "" {
		if t.detach {
			return usagef("--detach goes with --temporal HOST:PORT")
		}
		return nil
	}
	out, err := t.runArgs(cmd, passed, []string{"output-format"}) // text, here
	if err != nil {
		return err
	}
	return handOff(cmd, append(append(append(slices.Clone(sub), out...), "--"), args...))
}

// runArgs are the flags given to cmd that ptk-temporal takes (passed), as
// its arguments, --temporal first; a flag given that belongs to the
// workers is a usage error that says so, and one of local (a flag that
// says what ptk does here, not what the run does) is left out.
func (t *temporalFlags) runArgs(cmd *cobra.Command, passed, local []string) ([]string, error) {
	out := []string{"--temporal=" + t.address}
	var bad []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch {
		case f.Name == "temporal", slices.Contains(local, f.Name):
		case slices.Contains(passed, f.Name):
			out = append(out, "--"+f.Name+"="+f.Value.String())
		default:
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return nil, usagef("%v: not taken with --temporal: the run's model server, tools and their settings are the workers' (ptk worker's flags)", bad)
	}
	return out, nil
}
