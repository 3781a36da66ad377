package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	c := exec.Command(bin, args...)
	c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	err = c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return exitStatus(ee.ExitCode())
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
	out := append(slices.Clone(sub), "--temporal="+t.address)
	var bad []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch {
		case f.Name == "temporal":
		case slices.Contains(passed, f.Name):
			out = append(out, "--"+f.Name+"="+f.Value.String())
		default:
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return usagef("%v: with --temporal these are the workers' settings (ptk worker's flags), not the run's", bad)
	}
	return handOff(cmd, append(append(out, "--"), args...))
}
