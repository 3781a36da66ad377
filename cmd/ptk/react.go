package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/react"
	"github.com/ptkit/ptk/trace/record"
	"github.com/ptkit/ptk/turn"
)

func newReactCmd() *cobra.Command {
	var mf modelFlags
	var tf traceFlags
	var file, tools, workspace, examples, policyFile string
	var maxSteps int
	var echo, asJSON, native, yes, sandbox bool
	cmd := &cobra.Command{
		Use:   "react GOAL",
		Short: "Reach GOAL by thinking, calling ptools and tools, and observing, step by step",
		Long: `A ReAct agent: the model thinks, calls one of the ptools of the file (see
'ptk ptool') or of the built-in tools named by --tools, reads what it returned,
and goes on until it writes its answer between <answer> and </answer> or
--max-steps model calls are made. The answer goes to stdout; --echo shows the
thoughts, actions and observations on stderr as they happen; --json prints the
trajectory, which 'ptk react --examples FILE' takes back as demonstrations.

The built-in tools are approved as in 'ptk run': the read-only ones run, and
write_file, edit_file and bash need --yes, an allow rule of the policy file,
or a yes on the terminal; without either, the action is denied and the model
is told how the user can allow it. --sandbox runs bash under bubblewrap.
A reply with neither an action nor an <answer> is not an answer: the model is
asked for one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			models, err := mf.open(cmd)
			if err != nil {
				return err
			}
			defer models.close()
			opts := react.Options{MaxSteps: maxSteps, Stream: mf.stream}
			if opts.Model, err = models.resolve(""); err != nil {
				return err
			}
			if file != "" {
				if opts.PTools, err = loadRegistry(file, models.resolve, mf.ptoolOptions()...); err != nil {
					return err
				}
			}
			if tools != "" {
				_, ts, closeTools, err := builtinTools(workspace, tools, sandbox, models.keys)
				if err != nil {
					return err
				}
				defer closeTools()
				opts.Tools = ts
				policy, file, err := loadPolicy(cmd, policyFile)
				if err != nil {
					return usageError{err}
				}
				stdin, stderr := cmd.InOrStdin(), cmd.ErrOrStderr()
				opts.Approver = &cliApprover{policy: policy, policyFile: file, tools: approvalTools(ts), preset: yesPreset(yes),
					ask: isTerminal(stdin) && isTerminal(stderr), in: bufio.NewReader(stdin), out: stderr}
			}
			if examples != "" {
				if opts.Examples, err = readTrajectories(examples); err != nil {
					return err
				}
			}
			if native {
				opts.Mode = turn.Native
			}
			if echo {
				opts.Echo = cmd.ErrOrStderr()
			}
			rec, err := startRecording(cmd, tf, nil)
			if err != nil {
				return err
			}
			defer rec.close(cmd.ErrOrStderr())
			if rec != nil && rec.sink != nil {
				opts = record.ReAct(rec.sink).Options(opts)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			res, runErr := react.Run(ctx, args[0], opts)
			if asJSON {
				if err := writeIndented(cmd.OutOrStdout(), res.Trajectory); err != nil {
					return err
				}
			} else if res.Success {
				fmt.Fprintln(cmd.OutOrStdout(), res.Answer)
			}
			t := res.Trajectory
			fmt.Fprintf(cmd.ErrOrStderr(), "%d steps, %d+%d tokens, $%.6f, %s\n", len(t.Steps), t.Usage.PromptTokens, t.Usage.CompletionTokens, t.Cost, t.Duration.Round(1e6))
			return runErr
		},
	}
	mf.add(cmd.Flags())
	fl := cmd.Flags()
	addTraceFlags(fl, &tf, false)
	fl.StringVar(&file, "ptools", "", "a ptools file whose ptools the model may call")
	fl.StringVar(&tools, "tools", "", "comma-separated built-in tools the model may call (as for 'ptk run'; default none)")
	fl.StringVar(&workspace, "workspace", ".", "the built-in tools' workspace")
	fl.IntVar(&maxSteps, "max-steps", react.DefaultMaxSteps, "most model calls")
	fl.StringVar(&examples, "examples", "", "a JSON file of trajectories (one, or an array) shown as demonstrations")
	fl.BoolVar(&echo, "echo", false, "show thoughts, actions and observations on stderr as they happen")
	fl.BoolVar(&asJSON, "json", false, "print the trajectory as JSON")
	fl.BoolVar(&native, "native", false, "read actions from the provider's native tool calls")
	addApprovalFlags(fl, &yes, &policyFile, &sandbox)
	return cmd
}

func readTrajectories(file string) ([]*react.Trajectory, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usageError{err}
	}
	var many []*react.Trajectory
	if err := json.Unmarshal(data, &many); err == nil {
		return many, nil
	}
	var one react.Trajectory
	if err := json.Unmarshal(data, &one); err != nil {
		return nil, usageError{fmt.Errorf("--examples %s: %w", file, err)}
	}
	return []*react.Trajectory{&one}, nil
}
