package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/internal/outfile"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace/record"
	"github.com/ptkit/ptk/workflow"
)

// loadRegistry reads a ptools file into a registry, each ptool with the
// model model gives for the name its definition says (nil: no model) and
// opts after what the file says.
func loadRegistry(file string, model func(string) (llm.Model, error), opts ...ptool.Option) (*ptool.Registry, error) {
	if model == nil {
		model = func(string) (llm.Model, error) { return noModel{}, nil }
	}
	reg, err := ptool.LoadRegistry(file, model, append([]ptool.Option{withCEL}, opts...)...)
	var uerr usageError
	if err != nil && !errors.As(err, &uerr) {
		err = usageError{err}
	}
	return reg, err
}

func readTrace(file string, stdin io.Reader) (*workflow.Trace, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, usageError{err}
	}
	t, err := workflow.Parse(data)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", file, err)}
	}
	return t, nil
}

func writeIndented(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	return e.Encode(v)
}

// writeIndentedTo writes v as writeIndented does to the file output, whole
// or not at all and never through a link planted there (outfile), or to
// stdout when output is "".
func writeIndentedTo(cmd *cobra.Command, output string, v any) error {
	if output == "" {
		return writeIndented(cmd.OutOrStdout(), v)
	}
	f, err := outfile.Create(output, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := writeIndented(f, v); err != nil {
		return err
	}
	return f.Commit()
}

func newWorkflowCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Plan, check and run workflows of ptool calls",
		Long: `A workflow is a trace: a goal and steps, each a ptool of a ptools file (see
'ptk ptool') and its arguments, where an argument may be an earlier step's
output, {"$ref": "step_0"}, or a value in it, {"$ref": "step_0", "path": "/items/0"}:

  {"goal": "describe the first item",
   "steps": [{"ptool": "extract_items", "args": {"order": "a pizza and a salad"}},
             {"ptool": "describe", "args": {"item": {"$ref": "step_0", "path": "/0"}}}]}

'plan' asks a model to write one for a goal; 'check' lists every problem a
trace has before any model is called; 'run' runs it, independent steps at once;
'go' writes it as a Go program; 'from-trajectory' makes one of what a ReAct
agent did. A step may also call a built-in tool that --tools names (its
result is its output: its JSON, or its text as a string).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&file, "ptools", "ptools.json", "the ptools file")

	var mf modelFlags
	var pf traceFlags
	var output string
	var rounds int
	plan := &cobra.Command{
		Use:   "plan GOAL",
		Short: "Ask a model for a workflow that reaches GOAL with the file's ptools, checked",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			models, err := mf.open(cmd)
			if err != nil {
				return err
			}
			defer models.close()
			reg, err := loadRegistry(file, nil)
			if err != nil {
				return err
			}
			m, err := models.resolve("")
			if err != nil {
				return err
			}
			record, stopRecording, err := ptoolRecorder(cmd, pf)
			if err != nil {
				return err
			}
			defer stopRecording()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			t, err := workflow.Plan(ctx, args[0], reg, workflow.PlanOptions{Model: m, Rounds: rounds,
				Options: append(mf.ptoolOptions(), record)})
			if t != nil {
				if werr := writeIndentedTo(cmd, output, t); werr != nil {
					return werr
				}
			}
			return err
		},
	}
	mf.add(plan.Flags())
	addTraceFlags(plan.Flags(), &pf, false)
	plan.Flags().StringVarP(&output, "output", "o", "", "write the trace to FILE (default stdout)")
	plan.Flags().IntVar(&rounds, "rounds", 0, "most plans to ask for when one fails the check (default 3)")

	var asJSON bool
	var ctf toolFlags
	check := &cobra.Command{
		Use:   "check TRACE.json",
		Short: "List every problem of a trace against the ptools file, without calling a model",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := readTrace(args[0], cmd.InOrStdin())
			if err != nil {
				return err
			}
			reg, err := loadRegistry(file, nil)
			if err != nil {
				return err
			}
			closeTools, err := ctf.register(reg)
			if err != nil {
				return err
			}
			defer closeTools()
			probs := workflow.Check(t, reg)
			if asJSON {
				if probs == nil {
					probs = []workflow.Problem{}
				}
				if err := writeIndented(cmd.OutOrStdout(), probs); err != nil {
					return err
				}
			} else {
				for _, p := range probs {
					fmt.Fprintln(cmd.OutOrStdout(), p)
				}
			}
			if probs != nil {
				return &workflow.CheckError{Problems: probs}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d steps, no problems\n", args[0], len(t.Steps))
			return nil
		},
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print the problems as JSON")
	ctf.add(check.Flags(), false)

	var rf modelFlags
	var tf traceFlags
	var rtf toolFlags
	var runJSON, keepGoing bool
	var concurrency int
	var tmp temporalFlags
	runCmd := &cobra.Command{
		Use:   "run TRACE.json",
		Short: "Run a trace's steps, independent ones at once; progress on stderr, the last output on stdout",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if tmp.address != "" || tmp.detach {
				return tmp.handOffRun(cmd, []string{"workflow", "run"}, []string{"detach", "json", "continue", "concurrency"}, args)
			}
			t, err := readTrace(args[0], cmd.InOrStdin())
			if err != nil {
				return err
			}
			models, err := rf.open(cmd)
			if err != nil {
				return err
			}
			defer models.close()
			reg, err := loadRegistry(file, models.resolve, rf.ptoolOptions()...)
			if err != nil {
				return err
			}
			closeTools, err := rtf.register(reg)
			if err != nil {
				return err
			}
			defer closeTools()
			if err := rtf.consent(t, reg); err != nil {
				return err
			}
			rec, err := startRecording(cmd, tf, nil)
			if err != nil {
				return err
			}
			defer rec.close(cmd.ErrOrStderr())
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			errOut := cmd.ErrOrStderr()
			var done *workflow.Trace
			var runErr error
			var flowRec *record.WorkflowRecorder
			if rec != nil && rec.sink != nil {
				flowRec = record.NewWorkflow(rec.sink, t)
			}
			for e, err := range workflow.Stream(ctx, t, workflow.Options{Registry: reg, Concurrency: concurrency, ContinueOnError: keepGoing}) {
				if flowRec != nil {
					flowRec.Event(e, err)
				}
				switch e.Kind {
				case workflow.EventStepEnd:
					s := e.Step
					id := stepName(t, e.Index)
					line := fmt.Sprintf("%s %s: %s", id, s.PTool, s.Status)
					if s.Status == workflow.StatusCompleted {
						line += fmt.Sprintf(" (%d attempt(s), %d+%d tokens, $%.6f, %s)", s.Attempts, s.Usage.PromptTokens, s.Usage.CompletionTokens, s.Cost, s.Duration.Round(1e6))
					} else if s.Error != "" {
						line += ": " + s.Error
					}
					fmt.Fprintln(errOut, line)
				case workflow.EventDone:
					done, runErr = e.Trace, err
				}
			}
			var cerr *workflow.CheckError
			if errors.As(runErr, &cerr) {
				for _, p := range cerr.Problems {
					fmt.Fprintln(errOut, p)
				}
				return runErr
			}
			if runJSON {
				if err := writeIndented(cmd.OutOrStdout(), done); err != nil {
					return err
				}
				return runErr
			}
			if runErr == nil && len(done.Steps) > 0 {
				out := done.Steps[len(done.Steps)-1].Result
				var s string
				if json.Unmarshal(out, &s) == nil {
					fmt.Fprintln(cmd.OutOrStdout(), s)
				} else {
					fmt.Fprintln(cmd.OutOrStdout(), strings.TrimSpace(string(out)))
				}
			}
			return runErr
		},
	}
	rf.add(runCmd.Flags())
	runCmd.Flags().BoolVar(&runJSON, "json", false, "print the finished trace as JSON")
	runCmd.Flags().BoolVar(&keepGoing, "continue", false, "after a failed step, run the steps that do not need it")
	runCmd.Flags().IntVar(&concurrency, "concurrency", 0, "most steps at once (default 4)")
	addTraceFlags(runCmd.Flags(), &tf, false)
	rtf.add(runCmd.Flags(), true)
	tmp.add(runCmd.Flags())

	goCmd := &cobra.Command{
		Use:   "go TRACE.json",
		Short: "Write a trace as a Go program that calls its ptools through a registry",
		Long: `'ptk workflow go TRACE.json' writes the trace as a Go program (package main)
that calls its steps' ptools in order and prints the last output. It reads
a ptools file named by its argument, and takes the model flags 'ptk' takes:

  program [-model NAME] [-base-url URL] [-api-key KEY] [-models FILE] ptools.json

each also read from PTK_MODEL, PTK_BASE_URL, PTK_API_KEY and PTK_MODELS.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := readTrace(args[0], cmd.InOrStdin())
			if err != nil {
				return err
			}
			src, err := workflow.GoProgram(t)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(src)
			return err
		},
	}
	cmd.AddCommand(plan, check, runCmd, goCmd, newFromTrajectoryCmd(&file))
	return cmd
}

// stepName names step i of t as references do.
func stepName(t *workflow.Trace, i int) string {
	if i < len(t.Steps) {
		return t.StepID(i)
	}
	return fmt.Sprintf("step_%d", i)
}
