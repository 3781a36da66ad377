package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/trace"
)

func newTracesCmd() *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "traces",
		Short: "List, show, sum up, export and prune the recorded runs",
		Long: `Every run of a command that runs a model (ptk run, ptk serve's own tool
runs) is recorded in the trace store: its model calls (tokens, latency,
reply), its tool calls (arguments, result up to 64 KiB, errors, repairs,
duration). The store is a SQLite file, ` + defaultTraceDB() + `
by default, or a PostgreSQL database: --trace-db FILE|postgres://… or
PTK_TRACE_DB names another; --no-trace on run and serve records nothing.

  ptk traces list --kind agent --status error --since 1h
  ptk traces show 0641f3a2        (an id, or its first characters)
  ptk traces stats --since 7d
  ptk traces export > runs.jsonl
  ptk traces prune --older-than 30d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&db, "trace-db", "", "the trace store: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	cmd.AddCommand(newTracesListCmd(&db), newTracesShowCmd(&db), newTracesStatsCmd(&db), newTracesExportCmd(&db), newTracesPruneCmd(&db), newTracesLabelCmd(&db))
	return cmd
}

type filterFlags struct {
	kind, name, tool, model, status, since, until, text string
}

func addFilterFlags(cmd *cobra.Command, f *filterFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.kind, "kind", "", "runs of this kind: agent, ptool, workflow, react, distill, request")
	fl.StringVar(&f.name, "name", "", "runs of this name (a ptool's, a workflow's, a conversation's)")
	fl.StringVar(&f.tool, "tool", "", "runs that called this tool")
	fl.StringVar(&f.model, "model", "", "runs of this model")
	fl.StringVar(&f.status, "status", "", "runs that ended so: ok or error")
	fl.StringVar(&f.since, "since", "", "runs started since: a duration back (90m, 1h, 7d) or a time (2026-01-31)")
	fl.StringVar(&f.until, "until", "", "runs started before: a duration back or a time")
	fl.StringVar(&f.text, "text", "", "runs whose prompt, answer, name or error contains this")
}

// open reads the filter flags, then opens the store db names; the caller
// closes it.
func (f filterFlags) open(cmd *cobra.Command, db string) (trace.Filter, *trace.Store, error) {
	flt, err := f.filter()
	if err != nil {
		return flt, nil, err
	}
	s, err := readTraceStore(cmd, db)
	return flt, s, err
}

func (f filterFlags) filter() (trace.Filter, error) {
	since, err := parseSince(f.since)
	if err != nil {
		return trace.Filter{}, usagef("--since: %v", err)
	}
	until, err := parseSince(f.until)
	if err != nil {
		return trace.Filter{}, usagef("--until: %v", err)
	}
	switch f.status {
	case "", string(trace.StatusOK), string(trace.StatusError):
	default:
		return trace.Filter{}, usagef("--status must be ok or error, not %q", f.status)
	}
	return trace.Filter{Kind: trace.Kind(f.kind), Name: f.name, Tool: f.tool, Model: f.model, Status: trace.Status(f.status),
		Since: since, Until: until, Text: f.text}, nil
}

func newTracesListCmd(db *string) *cobra.Command {
	var ff filterFlags
	var limit, offset int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the recorded runs, newest first",
		Long: `list prints the runs the filters select, newest first, as a table; with
--json, an array of objects with id, kind, name, status, model, started_at
(RFC 3339), duration_ms, usage (prompt_tokens, completion_tokens), cost,
tool_calls (a count), iterations, error_code, error_message, input, output.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, s, err := ff.open(cmd, *db)
			if err != nil {
				return err
			}
			defer s.Close()
			f.Limit, f.Offset = limit, offset
			runs, err := s.List(cmd.Context(), f)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSON(out, runs)
			}
			if len(runs) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no runs recorded in "+s.Name()+" match")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTARTED\tKIND\tNAME\tMODEL\tSTATUS\tDURATION\tTOKENS\tTOOLS\tINPUT")
			for _, r := range runs {
				status := string(r.Status)
				if r.ErrorCode != "" {
					status += " " + r.ErrorCode
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", r.ID, r.StartedAt.Local().Format("2006-01-02 15:04:05"),
					r.Kind, dash(r.Name), dash(r.Model), status, time.Duration(r.Duration).Round(time.Millisecond),
					r.Usage.TotalTokens(), r.NumToolCalls, oneLine(r.Input, 50))
			}
			return tw.Flush()
		},
	}
	addFilterFlags(cmd, &ff)
	cmd.Flags().IntVar(&limit, "limit", 50, "most runs to list")
	cmd.Flags().IntVar(&offset, "offset", 0, "skip this many of the newest runs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func newTracesShowCmd(db *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one run with its model calls and tool calls",
		Long: `show prints a run and what it did, in order; ID may be the first
characters of an id when only one id starts with them. With --json, one
object: the fields of list, plus model_calls (mode, usage, latency_ms,
request_hash, text, calls) and tool_calls, an array (tool, args, result,
is_error, outcome, repairs, duration_ms).`,
		Args: oneArg("show needs a run's id: ptk traces show ID ('ptk traces list' lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := readTraceStore(cmd, *db)
			if err != nil {
				return err
			}
			defer s.Close()
			rec, err := s.Get(cmd.Context(), args[0])
			if errors.Is(err, trace.ErrNotFound) {
				return usagef("no run %q in %s (an id, or the first characters of only one)", args[0], s.Name())
			}
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rec)
			}
			showRecord(cmd.OutOrStdout(), rec)
			// the runs under it: a gateway request's agent run, a
			// workflow's ptool calls
			kids, err := s.List(cmd.Context(), trace.Filter{Parent: rec.ID, Limit: 20})
			if err != nil {
				return err
			}
			if len(kids) > 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "\nruns under it")
				for i := len(kids) - 1; i >= 0; i-- {
					k := kids[i]
					fmt.Fprintf(cmd.OutOrStdout(), "  %s  %s %s  %s  %s\n", k.ID, k.Kind, oneLine(dash(k.Name), 60), k.Status, time.Duration(k.Duration).Round(time.Millisecond))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func showRecord(w io.Writer, r *trace.Record) {
	fmt.Fprintf(w, "run %s  %s  %s\n", r.ID, r.Kind, r.StartedAt.Local().Format(time.RFC3339))
	if r.ParentID != "" {
		fmt.Fprintf(w, "  step of   %s\n", r.ParentID)
	}
	if r.Name != "" {
		fmt.Fprintf(w, "  name      %s\n", r.Name)
	}
	model := fmt.Sprintf("%s (%s)", dash(r.Model), dash(r.Mode))
	if r.Provider != "" {
		model += ", provider " + r.Provider
	}
	fmt.Fprintf(w, "  model     %s\n", model)
	if r.Kind == trace.KindRequest {
		var q trace.Request
		if json.Unmarshal(r.Detail, &q) == nil {
			how := q.API
			if q.Stream {
				how += ", streamed"
			}
			if q.Asked != "" && q.Asked != q.Model {
				how += ", asked for " + q.Asked
			}
			fmt.Fprintf(w, "  request   %s %s → %d (%s)\n", q.Method, q.Route, q.Status, how)
		}
	}
	status := string(r.Status)
	if r.ErrorCode != "" || r.ErrorMessage != "" {
		status += ": " + strings.TrimSpace(r.ErrorCode+" "+r.ErrorMessage)
	}
	fmt.Fprintf(w, "  status    %s\n", status)
	fmt.Fprintf(w, "  duration  %s, %d model calls, %d tool calls\n", time.Duration(r.Duration).Round(time.Millisecond), len(r.ModelCalls), len(r.ToolCalls))
	fmt.Fprintf(w, "  tokens    %d prompt, %d completion; cost $%.6f\n", r.Usage.PromptTokens, r.Usage.CompletionTokens, r.Cost)
	if r.Input != "" {
		fmt.Fprintf(w, "  input     %s\n", oneLine(r.Input, 200))
	}
	// The model calls and the tool calls of each, in order.
	tc := 0
	for i, mc := range r.ModelCalls {
		fmt.Fprintf(w, "\nmodel call %d  %s  %d+%d tokens  %s\n", i+1, dash(mc.Mode), mc.Usage.PromptTokens, mc.Usage.CompletionTokens,
			time.Duration(mc.Latency).Round(time.Millisecond))
		if mc.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", mc.Error)
		}
		if t := strings.TrimSpace(mc.Text); t != "" {
			fmt.Fprintf(w, "  %s\n", indent(cut(t, 600)))
		}
		for ; tc < len(r.ToolCalls) && r.ToolCalls[tc].Iteration <= i+1; tc++ {
			showToolCall(w, r.ToolCalls[tc])
		}
	}
	for ; tc < len(r.ToolCalls); tc++ {
		showToolCall(w, r.ToolCalls[tc])
	}
	for _, pc := range r.PtoolCalls {
		fmt.Fprintf(w, "\nptool %s (%s)  %s\n  in:  %s\n  out: %s\n", pc.Ptool, dash(pc.Source), time.Duration(pc.Duration).Round(time.Millisecond),
			oneLine(string(pc.Input), 200), oneLine(string(pc.Output), 200))
	}
	if len(r.Steps) > 0 {
		fmt.Fprintln(w, "\nsteps")
		showSteps(w, r.Steps, "", 1)
	}
	if r.Output != "" {
		fmt.Fprintf(w, "\nanswer\n  %s\n", indent(cut(r.Output, 2000)))
	}
}

// showSteps writes the steps under parent, each indented by its depth.
func showSteps(w io.Writer, steps []trace.Step, parent string, depth int) {
	if depth > 8 {
		return
	}
	for i, st := range steps {
		if st.Parent != parent {
			continue
		}
		line := fmt.Sprintf("%s%s  %s  %s", strings.Repeat("  ", depth), oneLine(st.Name, 60), dash(st.Status), time.Duration(st.Duration).Round(time.Millisecond))
		if st.Note != "" {
			line += "  " + oneLine(st.Note, 120)
		}
		fmt.Fprintln(w, line)
		showSteps(w, steps, trace.SpanID(trace.SpanStep, i), depth+1)
	}
}

func showToolCall(w io.Writer, tc trace.ToolCall) {
	mark := "→"
	if tc.IsError {
		mark = "✗"
	}
	outcome := tc.Outcome
	if tc.ErrorCode != "" {
		outcome += ", " + tc.ErrorCode
	}
	fmt.Fprintf(w, "  %s %s %s  [%s, %s]\n", mark, tc.Tool, oneLine(string(tc.Args), 120), outcome, time.Duration(tc.Duration).Round(time.Microsecond))
	if len(tc.Repairs) > 0 {
		fmt.Fprintf(w, "      repairs: %s\n", strings.Join(tc.Repairs, "; "))
	}
	fmt.Fprintf(w, "      %s\n", oneLine(tc.Result, 160))
}

func newTracesStatsCmd(db *string) *cobra.Command {
	var ff filterFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Sum up the recorded runs by kind and name, tool, model and ptool",
		Long: `stats prints, for the runs the filters select, the calls, the success
rate, the median and 95th percentile latency, the tokens and the cost: by
kind and name of run, by tool, by model, and by ptool (with the share a
distilled function left to the model). --json prints one object with the
lists runs, tools, models and ptools.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, s, err := ff.open(cmd, *db)
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := s.Stats(cmd.Context(), f)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSON(out, st)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			for _, sec := range []struct {
				title string
				rows  []trace.Stat
			}{{"RUNS", st.Runs}, {"TOOLS", st.Tools}, {"MODELS", st.Models}, {"PTOOLS", st.Ptools}} {
				if len(sec.rows) == 0 {
					continue
				}
				fmt.Fprintf(tw, "%s\tCALLS\tOK\tP50\tP95\tTOKENS\tCOST\n", sec.title)
				for _, r := range sec.rows {
					name := r.Name
					if r.Kind != "" {
						name = string(r.Kind) + " " + dash(r.Name)
					}
					fmt.Fprintf(tw, "%s\t%d\t%.0f%%\t%s\t%s\t%d\t$%.4f\n", name, r.Calls, 100*r.SuccessRate,
						time.Duration(r.P50).Round(time.Millisecond/10), time.Duration(r.P95).Round(time.Millisecond/10), r.Usage.TotalTokens(), r.Cost)
				}
				fmt.Fprintln(tw, "\t\t\t\t\t\t")
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return printDistilled(cmd.Context(), out, s, f, st)
		},
	}
	addFilterFlags(cmd, &ff)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func newTracesExportCmd(db *string) *cobra.Command {
	var ff filterFlags
	var trajectories, all bool
	var limit int
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the recorded runs as JSON lines, oldest first",
		Long: `export writes every run the filters select to stdout, one JSON object a
line (the object of 'ptk traces show --json'), oldest first.

With --trajectories it writes the trajectories of the ReAct runs instead,
as one JSON array that 'ptk react --examples FILE' reads: the runs that
reached an answer (--all: every run), the newest --limit of them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, s, err := ff.open(cmd, *db)
			if err != nil {
				return err
			}
			defer s.Close()
			if trajectories {
				n, err := exportTrajectories(cmd.Context(), s, f, all, limit, cmd.OutOrStdout())
				if err == nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "%d trajectories\n", n)
				}
				return err
			}
			_, err = s.Export(cmd.Context(), cmd.OutOrStdout(), f)
			return err
		},
	}
	addFilterFlags(cmd, &ff)
	cmd.Flags().BoolVar(&trajectories, "trajectories", false, "write the ReAct runs' trajectories as a JSON array, for 'ptk react --examples'")
	cmd.Flags().BoolVar(&all, "all", false, "with --trajectories: also the runs that did not reach an answer")
	cmd.Flags().IntVar(&limit, "limit", 0, "with --trajectories: only the newest N (default all)")
	return cmd
}

func newTracesPruneCmd(db *string) *cobra.Command {
	var olderThan string
	var keep int
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Delete old runs: by age, or all but the newest N",
		Long: `prune deletes the runs started before --older-than (a duration back, 30d,
or a time), and all but the newest --keep runs, with everything they did.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan == "" && keep <= 0 {
				return usagef("prune needs --older-than DURATION (30d) or --keep N")
			}
			before, err := parseSince(olderThan)
			if err != nil {
				return usagef("--older-than: %v", err)
			}
			s, err := openTraceStore(cmd, *db)
			if err != nil {
				return err
			}
			defer s.Close()
			n, err := s.Prune(cmd.Context(), before, max(keep, 0))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %d runs\n", n)
			return nil
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "", "delete runs started before this: a duration back (30d, 12h) or a time")
	cmd.Flags().IntVar(&keep, "keep", 0, "keep only the newest N runs")
	return cmd
}

func newTracesLabelCmd(db *string) *cobra.Command {
	var span, note string
	cmd := &cobra.Command{
		Use:   "label ID good|bad",
		Short: "Mark a run, or one of its calls, good or bad, with a note",
		Long: `label marks the run ID (or the one run whose id starts with it) good or bad,
or with --span one of its calls: ptool/0 is its first ptool call, tool/2 its
third tool call, model/1 its second model call (as 'ptk traces show' and the
dashboard name them). A new label of the same span replaces the old one.
A ptool call labelled bad, or in a run labelled bad, is never shown to a
model as an example, learnt from by 'ptk distill', or a case of
'ptk ptool eval --from-traces'.`,
		Example: `  ptk traces label 019a3f good
  ptk traces label 019a3f bad --span ptool/0 --note "urgent, not normal"`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openTraceStore(cmd, *db)
			if err != nil {
				return err
			}
			defer s.Close()
			l, err := s.SetLabel(cmd.Context(), trace.Label{RunID: args[0], Span: span, Label: args[1], Note: note})
			switch {
			case errors.Is(err, trace.ErrBadLabel), errors.Is(err, trace.ErrNotFound):
				return usageError{err}
			case err != nil:
				return err
			}
			what := "run " + l.RunID
			if l.Span != "" {
				what += " " + l.Span
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", what, l.Label)
			return nil
		},
	}
	cmd.Flags().StringVar(&span, "span", "", "the call to label: ptool/N, tool/N or model/N (default: the run)")
	cmd.Flags().StringVar(&note, "note", "", "why")
	return cmd
}

func newConversationsCmd() *cobra.Command {
	var db string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "conversations",
		Short: "List, show and remove the conversations 'ptk run --conversation' continues",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&db, "trace-db", "", "the store: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the stored conversations, the last updated first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := readTraceStore(cmd, db)
			if err != nil {
				return err
			}
			defer s.Close()
			convs, err := s.Conversations(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), convs)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tUPDATED\tMESSAGES")
			for _, c := range convs {
				fmt.Fprintf(tw, "%s\t%s\t%d\n", c.ID, c.UpdatedAt.Local().Format("2006-01-02 15:04:05"), c.Messages)
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Print a conversation's messages",
		Args:  oneArg("show needs a conversation's name ('ptk conversations list' lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := readTraceStore(cmd, db)
			if err != nil {
				return err
			}
			defer s.Close()
			msgs, err := s.Load(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if msgs == nil {
				return usagef("no conversation %q in %s", args[0], s.Name())
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), msgs)
			}
			w := cmd.OutOrStdout()
			for _, m := range msgs {
				head := string(m.Role)
				if m.Tool != "" {
					head += " (" + m.Tool + ")"
				}
				fmt.Fprintf(w, "%s:\n  %s\n", head, indent(cut(strings.TrimSpace(m.Content), 2000)))
				for _, c := range m.Calls {
					fmt.Fprintf(w, "  → %s %s\n", c.Tool, oneLine(string(c.Args), 200))
				}
			}
			return nil
		},
	}
	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "Delete a conversation",
		Args:  oneArg("rm needs a conversation's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openTraceStore(cmd, db)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.DeleteConversation(cmd.Context(), args[0]); errors.Is(err, trace.ErrNotFound) {
				return usagef("no conversation %q in %s", args[0], s.Name())
			} else if err != nil {
				return err
			}
			return nil
		},
	}
	cmd.AddCommand(list, show, rm)
	return cmd
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine is s on one line, cut to n runes.
func oneLine(s string, n int) string {
	return cut(strings.Join(strings.Fields(s), " "), n)
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// oneArg accepts exactly one argument, and otherwise says msg as a usage
// error.
func oneArg(msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("%s", msg)
		}
		return nil
	}
}
