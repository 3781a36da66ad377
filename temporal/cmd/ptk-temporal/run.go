package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/internal/term"
	ptktemporal "github.com/ptkit/ptk/temporal"
	"github.com/ptkit/ptk/workflow"
)

type runFlags struct {
	conn
	id, model, mode, tools, approval string
	maxIterations, maxToolCalls      int
	maxTokens                        int
	maxCost                          float64
	timeout                          time.Duration
	detach, asJSON, yes, machine     bool
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run --temporal HOST:PORT [flags] PROMPT",
		Short: "Start an agent run on ptk's Temporal workers, follow it and print its answer",
		Long: `run starts an agent run on the workers of the task queue (ptk worker), with
the workers' model (or --model) and tools, prints each model call, tool call
and result on stderr as the run goes, and its answer on stdout. The run
outlives this command: Ctrl-C stops following it, not the run ('ptk runs
cancel ID' stops it). --detach prints the run's id and returns at once.

A call that needs approval waits for it: on a terminal you are asked; else
the command says how to give it ('ptk runs approve ID CALL'). --yes
approves every call of this run that waits.

Exit status: 0 when the run answered, 1 when it failed or was canceled, 2
for a usage error.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.machine {
				if len(args) > 0 || f.detach || f.asJSON || f.yes {
					return usagef("--machine reads the conversation from stdin, and takes no prompt, --detach, --json or --yes")
				}
				return runMachine(cmd, f)
			}
			prompt := strings.TrimSpace(strings.Join(args, " "))
			if prompt == "" || prompt == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				prompt = strings.TrimSpace(string(b))
			}
			if prompt == "" {
				return usagef("run needs a prompt: ptk run --temporal localhost:7233 \"What does this repository do?\"")
			}
			return runAgent(cmd, f, prompt)
		},
	}
	f.conn.flags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.id, "id", "", "the run's id (default a new one)")
	fl.StringVar(&f.model, "model", "", "the model, by a name the workers resolve (default the workers')")
	fl.StringVar(&f.mode, "mode", "auto", "how the model calls tools: ptk, native or auto")
	fl.StringVar(&f.tools, "tools", "", "comma-separated tools of the workers to give the model (default: all)")
	fl.StringVar(&f.approval, "approval", "", "this run's approval mode: ask, auto-edit, yolo or plan (default the workers')")
	fl.IntVar(&f.maxIterations, "max-iterations", agent.DefaultMaxIterations, "most model calls in the run")
	fl.IntVar(&f.maxToolCalls, "max-tool-calls", agent.DefaultMaxToolCalls, "most tool calls in the run")
	fl.Float64Var(&f.maxCost, "max-cost", 0, "budget of the run in US dollars (0: none)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "budget of the run in tokens (0: none)")
	fl.DurationVar(&f.timeout, "timeout", 0, "time limit for the whole run, e.g. 2h (default none)")
	fl.BoolVar(&f.detach, "detach", false, "print the run's id and return without following it")
	fl.BoolVar(&f.asJSON, "json", false, "print the run's result as one JSON object")
	fl.BoolVar(&f.yes, "yes", false, "approve every call of this run that waits for approval")
	fl.BoolVar(&f.machine, "machine", false, "for programs (ptk chat, ptk acp, ptk run --output-format json): the conversation and then decisions as JSON lines on stdin, the run's events and result as JSON lines on stdout")
	return cmd
}

// agentInput is the run the flags say, over the conversation msgs.
func agentInput(f runFlags, msgs []ptk.Message) (ptktemporal.AgentInput, error) {
	mode := agent.Mode(f.mode)
	switch mode {
	case agent.ModeAuto, agent.ModePTK, agent.ModeNative:
	default:
		return ptktemporal.AgentInput{}, usagef("--mode must be ptk, native or auto, not %q", f.mode)
	}
	if f.maxIterations < 1 || f.maxToolCalls < 1 || f.maxCost < 0 || f.maxTokens < 0 || f.timeout < 0 {
		return ptktemporal.AgentInput{}, usagef("--max-iterations and --max-tool-calls must be at least 1, --max-cost, --max-tokens and --timeout not negative")
	}
	in := ptktemporal.AgentInput{Messages: msgs, Model: f.model, Tools: splitList(f.tools), Mode: mode,
		MaxIterations: f.maxIterations, MaxToolCalls: f.maxToolCalls, MaxCost: f.maxCost, MaxTokens: f.maxTokens, Timeout: f.timeout}
	if f.approval != "" {
		p, err := parsePreset(f.approval)
		if err != nil {
			return in, err
		}
		in.Preset = p
	}
	return in, nil
}

func runAgent(cmd *cobra.Command, f runFlags, prompt string) error {
	in, err := agentInput(f, agent.Prompt(prompt))
	if err != nil {
		return err
	}
	c, err := f.conn.dial(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	run, err := ptktemporal.StartAgent(cmd.Context(), c, in, ptktemporal.StartOptions{ID: f.id, TaskQueue: f.taskQueue()})
	if err != nil {
		return err
	}
	if f.detach {
		fmt.Fprintln(cmd.OutOrStdout(), run.GetID())
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "ptk: run %s\n", run.GetID())
	if err := follow(cmd, c, run.GetID(), f.yes); err != nil {
		return err
	}
	var out ptktemporal.AgentOutput
	if err := getResult(cmd, run, &out); err != nil {
		return err
	}
	if f.asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	if out.Success {
		fmt.Fprintln(cmd.OutOrStdout(), strings.TrimRight(out.Content, "\n"))
		return nil
	}
	if out.Error != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "ptk: %s: %s\n", out.Error.Code, line(out.Error.Message))
	}
	return errRunFailed
}

// getResult waits for the run's result; a canceled run's is in its
// cancellation's details.
func getResult(cmd *cobra.Command, run client.WorkflowRun, out any) error {
	err := run.Get(cmd.Context(), out)
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		_ = ce.Details(out)
		fmt.Fprintf(cmd.ErrOrStderr(), "ptk: run %s was canceled\n", run.GetID())
		return errRunFailed
	}
	return err
}

// follow prints the run's events on stderr until it ends, asking about
// the calls that wait for approval when it can.
func follow(cmd *cobra.Command, c client.Client, id string, yes bool) error {
	stderr := cmd.ErrOrStderr()
	in := bufio.NewReader(cmd.InOrStdin())
	ask := isTerminal(cmd.InOrStdin()) && isTerminal(stderr)
	asked := map[string]bool{}
	_, err := ptktemporal.Follow(cmd.Context(), c, id, 300*time.Millisecond, func(e ptktemporal.Event, p *ptktemporal.Progress) {
		printEvent(stderr, e)
		if e.Kind != "waiting" || e.Call == nil || asked[e.Call.ID] {
			return
		}
		asked[e.Call.ID] = true
		switch {
		case yes:
			_ = ptktemporal.Approve(cmd.Context(), c, id, ptktemporal.Decision{CallID: e.Call.ID, Allow: true})
		case ask:
			fmt.Fprintf(stderr, "Allow %s %s? [y/N] ", term.Command(e.Call.Tool), term.Command(string(e.Call.Args)))
			line, _ := in.ReadString('\n')
			ok := strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "y")
			d := ptktemporal.Decision{CallID: e.Call.ID, Allow: ok}
			if !ok {
				d.Reason = "the user said no"
			}
			_ = ptktemporal.Approve(cmd.Context(), c, id, d)
		default:
			fmt.Fprintf(stderr, "ptk: the call %s waits for approval: ptk runs approve %s %s (or --deny)\n", e.Call.ID, id, e.Call.ID)
		}
	})
	return err
}

func printEvent(w io.Writer, e ptktemporal.Event) {
	call := ""
	if e.Call != nil {
		call = line(e.Call.Tool) + " " + clip(line(string(e.Call.Args)), 200)
	}
	switch e.Kind {
	case "model":
		fmt.Fprintf(w, "· model call %d\n", e.Iteration)
	case "tool":
		fmt.Fprintf(w, "→ %s\n", call)
	case "result":
		mark := "←"
		if e.IsError {
			mark = "✗"
		}
		fmt.Fprintf(w, "  %s %s\n", mark, clip(line(e.Text), 300))
	case "denied", "duplicate", "switch":
		fmt.Fprintf(w, "  %s: %s\n", e.Kind, clip(line(e.Text), 300))
	case "waiting":
		fmt.Fprintf(w, "? %s waits for approval\n", call)
	case "step":
		fmt.Fprintf(w, "→ step %d: %s\n", e.Iteration, clip(line(e.Text), 300))
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// isTerminal reports whether v (a reader, or a writer under a
// term.Writer) is a terminal.
func isTerminal(v any) bool {
	if w, ok := v.(io.Writer); ok {
		v = term.Unwrap(w)
	}
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type workflowFlags struct {
	conn
	id              string
	concurrency     int
	continueOnError bool
	detach, asJSON  bool
}

func newWorkflowCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "workflow", Short: "Workflows of ptools on Temporal"}
	var f workflowFlags
	runCmd := &cobra.Command{
		Use:   "run --temporal HOST:PORT [flags] TRACE.json",
		Short: "Run a workflow of ptools (a trace file) on ptk's Temporal workers",
		Long: `workflow run starts the workflow of ptools in TRACE.json (as ptk workflow
run reads it) on the workers of the task queue, each step's ptool call an
activity, follows it, and prints the finished trace as JSON. The workers'
ptools are the ones they were started with.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPlan(cmd, f, args[0]) },
	}
	f.conn.flags(runCmd)
	fl := runCmd.Flags()
	fl.StringVar(&f.id, "id", "", "the run's id (default a new one)")
	fl.IntVar(&f.concurrency, "concurrency", 0, "most steps running at once (default 4)")
	fl.BoolVar(&f.continueOnError, "continue", false, "after a failed step, run the steps that do not need it")
	fl.BoolVar(&f.asJSON, "json", true, "print the finished trace as JSON (the default)")
	fl.BoolVar(&f.detach, "detach", false, "print the run's id and return without following it")
	cmd.AddCommand(runCmd)
	return cmd
}

func runPlan(cmd *cobra.Command, f workflowFlags, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return usageError{err}
	}
	tr, err := workflow.Parse(b)
	if err != nil {
		return usagef("%s: %v", file, err)
	}
	c, err := f.conn.dial(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	run, err := ptktemporal.StartPlan(cmd.Context(), c, ptktemporal.PlanInput{Trace: tr, Concurrency: f.concurrency, ContinueOnError: f.continueOnError},
		ptktemporal.StartOptions{ID: f.id, TaskQueue: f.taskQueue()})
	if err != nil {
		return usageError{err}
	}
	if f.detach {
		fmt.Fprintln(cmd.OutOrStdout(), run.GetID())
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "ptk: run %s\n", run.GetID())
	if err := follow(cmd, c, run.GetID(), false); err != nil {
		return err
	}
	var out ptktemporal.PlanOutput
	if err := getResult(cmd, run, &out); err != nil {
		return err
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out.Trace); err != nil {
		return err
	}
	if out.Error != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "ptk:", line(out.Error))
		return errRunFailed
	}
	return nil
}

// line is text from a run (the model's, a tool's: hostile) made safe to
// print on one terminal line: control characters, escape sequences and
// characters that hide or reorder text are shown as escapes
// (internal/term), line breaks as spaces.
func line(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\t", " ").Replace(term.Text(s))
}
