package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/react"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/workflow"
)

// toolFlags name the built-in tools a workflow's steps may call besides
// the ptools of the file, as 'ptk react --tools' does.
type toolFlags struct {
	tools, workspace string
	yes, sandbox     bool
}

func (f *toolFlags) add(fl *pflag.FlagSet, run bool) {
	fl.StringVar(&f.tools, "tools", "", "comma-separated built-in tools the steps may call besides the ptools (as for 'ptk run'; default none)")
	fl.StringVar(&f.workspace, "workspace", ".", "the built-in tools' workspace")
	if run {
		fl.BoolVar(&f.yes, "yes", false, "let the steps call the tools that change things (write, edit, bash): they are refused otherwise")
		fl.BoolVar(&f.sandbox, "sandbox", false, "run bash under bubblewrap: system read-only, workspace writable, no network")
	}
}

// register adds the tools the flags name to reg, as steps call them; close
// closes the workspace.
func (f *toolFlags) register(reg *ptool.Registry) (closeFn func(), err error) {
	if f.tools == "" {
		return func() {}, nil
	}
	_, tools, closeTools, err := builtinTools(f.workspace, f.tools, f.sandbox, keyEnvs(nil))
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		tf, err := ptool.FromTool(t)
		if err == nil {
			err = reg.Register(tf)
		}
		if err != nil {
			closeTools()
			return nil, usagef("--tools: %v", err)
		}
	}
	return closeTools, nil
}

// consent checks that the steps of t that call a tool that changes things
// may: the trace is fixed, but its arguments may come from a model's
// outputs, so such a tool runs only with --yes.
func (f *toolFlags) consent(t *workflow.Trace, reg *ptool.Registry) error {
	if f.yes {
		return nil
	}
	var steps []string
	for i, s := range t.Steps {
		fn, ok := reg.Lookup(s.PTool)
		if tf, isTool := fn.(*ptool.ToolFunc); ok && isTool && !tf.Info().ReadOnly {
			steps = append(steps, t.StepID(i)+" ("+s.PTool+")")
		}
	}
	if len(steps) == 0 {
		return nil
	}
	return usagef("%s call tools that change things, with arguments that may come from a model's answers; read the trace, then give --yes to run it", strings.Join(steps, ", "))
}

// readTrajectory reads a trajectory as 'ptk react --json' writes it (or an
// array of one), or, with run, the trajectory of that ReAct run in the
// trace store.
func readTrajectory(cmd *cobra.Command, file, run, db string) (*react.Trajectory, error) {
	if run != "" {
		s, err := openTraceStore(cmd, db)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		rec, err := s.Get(cmd.Context(), run)
		if errors.Is(err, trace.ErrNotFound) {
			return nil, usagef("no run %q in %s", run, s.Name())
		}
		if err != nil {
			return nil, err
		}
		if rec.Kind != trace.KindReAct {
			return nil, usagef("run %s is a %s run, not a ReAct run", rec.ID, rec.Kind)
		}
		var t react.Trajectory
		if err := json.Unmarshal(rec.Detail, &t); err != nil {
			return nil, fmt.Errorf("run %s: its trajectory: %w", rec.ID, err)
		}
		return &t, nil
	}
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(cmd.InOrStdin())
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, usageError{err}
	}
	var many []*react.Trajectory
	if json.Unmarshal(data, &many) == nil {
		if len(many) != 1 || many[0] == nil {
			return nil, usagef("%s holds %d trajectories: give one", file, len(many))
		}
		return many[0], nil
	}
	var t react.Trajectory
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, usagef("%s: not a trajectory: %v", file, err)
	}
	return &t, nil
}

func newFromTrajectoryCmd(file *string) *cobra.Command {
	var run, db, output string
	var tf toolFlags
	var check bool
	cmd := &cobra.Command{
		Use:   "from-trajectory [TRAJECTORY.json | --run ID]",
		Short: "Turn a ReAct trajectory into a workflow of the same calls",
		Long: `from-trajectory turns what a ReAct agent did into a fixed workflow: its
successful actions in order, ptools and plain tools alike, each argument that
equals an earlier result (or a value in it) written as a reference to it, so
that the workflow runs again on new data. Failed actions are left out.

The trajectory is a file 'ptk react --json' wrote (- reads stdin), or, with
--run ID, a ReAct run in the trace store. --check checks the workflow
against the ptools file and the --tools, as 'ptk workflow check' does.

  ptk react "..." --ptools ptools.json --tools read_file --json > t.json
  ptk workflow from-trajectory t.json -o flow.json
  ptk workflow run flow.json --ptools ptools.json --tools read_file`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (run != "") {
				return usagef("give a trajectory file or --run ID, one of them")
			}
			in := ""
			if len(args) == 1 {
				in = args[0]
			}
			traj, err := readTrajectory(cmd, in, run, db)
			if err != nil {
				return err
			}
			t := traj.Trace().Reset() // to run again, on new data
			actions, failed := 0, 0
			for _, s := range traj.Steps {
				if s.Action != nil {
					actions++
					if s.Observation == nil || !s.Observation.Success {
						failed++
					}
				}
			}
			errOut := cmd.ErrOrStderr()
			fmt.Fprintf(errOut, "%d steps from %d actions (%d failed, left out)\n", len(t.Steps), actions, failed)
			var probs []workflow.Problem
			if check {
				reg, err := loadRegistry(*file, nil)
				if err != nil {
					return err
				}
				closeTools, err := tf.register(reg)
				if err != nil {
					return err
				}
				probs = workflow.Check(t, reg)
				closeTools()
			}
			if err := writeIndentedTo(cmd, output, t); err != nil {
				return err
			}
			if probs != nil {
				for _, p := range probs {
					fmt.Fprintln(errOut, p)
				}
				return &workflow.CheckError{Problems: probs}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&run, "run", "", "the ReAct run in the trace store, by id (or its first characters)")
	fl.StringVar(&db, "trace-db", "", "the trace store: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	fl.StringVarP(&output, "output", "o", "", "write the workflow to FILE (default stdout)")
	fl.BoolVar(&check, "check", false, "check the workflow against the ptools file and --tools")
	tf.add(fl, false)
	return cmd
}

// exportTrajectories writes the trajectories of the ReAct runs f selects
// as one JSON array, oldest first, which 'ptk react --examples' reads:
// only the runs that reached an answer unless all is set, the newest limit
// of them when limit is above 0. It returns how many it wrote.
func exportTrajectories(ctx context.Context, s *trace.Store, f trace.Filter, all bool, limit int, w io.Writer) (int, error) {
	f.Kind = trace.KindReAct
	if !all {
		f.Status = trace.StatusOK
	}
	out := []*react.Trajectory{}
	const page = 200
	for f.Offset = 0; limit <= 0 || len(out) < limit; f.Offset += page {
		f.Limit = page
		runs, err := s.List(ctx, f) // newest first
		if err != nil {
			return 0, err
		}
		for _, r := range runs {
			rec, err := s.Get(ctx, r.ID)
			if err != nil {
				return 0, err
			}
			var t react.Trajectory
			if json.Unmarshal(rec.Detail, &t) != nil || len(t.Steps) == 0 || (!all && !t.Success) {
				continue
			}
			if out = append(out, &t); limit > 0 && len(out) == limit {
				break
			}
		}
		if len(runs) < page {
			break
		}
	}
	slices.Reverse(out)
	return len(out), writeIndented(w, out)
}
