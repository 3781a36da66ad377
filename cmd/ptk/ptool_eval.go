package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/outfile"
	"github.com/ptkit/ptk/internal/term"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/ptool/score"
	"github.com/ptkit/ptk/trace"
)

type ptoolEvalFlags struct {
	dataset, since, until, judge, metric, report, examples string
	fromStore, asJSON                                      bool
	limit, concurrency                                     int
	min                                                    float64
	db                                                     string
}

// errBelow is what ptk ptool eval returns when a result is under --min.
var errBelow = errors.New("below the threshold")

func newPtoolEvalCmd(f *ptoolFlags) *cobra.Command {
	var e ptoolEvalFlags
	cmd := &cobra.Command{
		Use:   "eval NAME (--dataset FILE | --from-store)",
		Short: "Score a ptool's answers on a dataset, for one model or several",
		Long: `eval calls the ptool NAME on every case of a dataset and scores its answers
against the outputs wanted, as the distiller's gate does: an answer is
correct when it fits the output schema and equals the one wanted (numbers
by value, objects whatever their keys' order).

The cases come from --dataset FILE (JSON lines or an array of
{"input": {...}, "output": ...}), or, with --from-store, from the ptool's good
calls in the trace store (answered by a model without an error, one per
input; --since, --until, --limit). Eval's own calls are not recorded.

For each model of --model a,b,... (and each count of --stored-examples 0,4:
that many good stored calls shown as examples, never a case's own) it
reports: exact (correct over all), valid (answers that fit the schema and
passed the ptool's checks), first try, abstained, failed, the judge's
metric with --judge NAME (a ptool of the file that takes
{"input", "expected", "output"} and says true or {"pass": …}), tokens,
cost, latency, and each wrong case with where it differs. --json prints
the report as JSON, --report FILE writes it too.

  ptk ptool eval classify --dataset cases.jsonl --model gpt-4o-mini,qwen3:8b --min 0.9
Exit status: 0, 1 when a result is under --min on --metric (exact, valid,
judge), or on an error, 2 usage.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return ptoolEval(cmd, f, e, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringVar(&e.dataset, "dataset", "", "the cases: JSON lines or an array of {\"input\": …, \"output\": …}")
	fl.BoolVar(&e.fromStore, "from-store", false, "the cases are the ptool's good calls in the trace store")
	fl.StringVar(&e.since, "since", "", "with --from-store: calls since (90m, 7d, 2026-01-31)")
	fl.StringVar(&e.until, "until", "", "with --from-store: calls before")
	fl.IntVar(&e.limit, "limit", 0, "the most cases (the newest, with --from-store)")
	fl.StringVar(&e.db, "trace-db", "", "the trace store, for --from-store and --stored-examples (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	fl.StringVar(&e.examples, "stored-examples", "", "show this many good stored calls as examples; several, comma-separated, are compared (0,4)")
	fl.StringVar(&e.judge, "judge", "", "a ptool of the file that judges the answers that are not exact")
	fl.StringVar(&e.metric, "metric", score.MetricExact, "the metric --min applies to: exact, valid or judge")
	fl.Float64Var(&e.min, "min", 0, "exit 1 when a result's metric is under this (0 to 1)")
	fl.IntVar(&e.concurrency, "concurrency", 4, "cases called at once")
	fl.StringVar(&e.report, "report", "", "write the report as JSON to FILE")
	f.models.add(fl)
	return cmd
}

func ptoolEval(cmd *cobra.Command, f *ptoolFlags, e ptoolEvalFlags, name string) error {
	if (e.dataset == "") == !e.fromStore {
		return usagef("give the cases: --dataset FILE or --from-store, one of them")
	}
	switch e.metric {
	case score.MetricExact, score.MetricValid, score.MetricJudge:
	default:
		return usagef("--metric must be exact, valid or judge, not %q", e.metric)
	}
	if e.metric == score.MetricJudge && e.judge == "" {
		return usagef("--metric judge needs a --judge")
	}
	if e.min < 0 || e.min > 1 {
		return usagef("--min is a share, from 0 to 1")
	}
	var counts []int
	for _, s := range splitList(e.examples) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return usagef("--stored-examples takes counts, such as 0,4, not %q", s)
		}
		counts = append(counts, n)
	}
	if len(counts) == 0 {
		counts = []int{0}
	}
	defs, err := ptool.ReadDefs(f.file)
	if err != nil {
		return usageError{err}
	}
	find := func(n string) *ptool.Def {
		for i := range defs {
			if defs[i].Name == n {
				return &defs[i]
			}
		}
		return nil
	}
	def := find(name)
	if def == nil {
		return usagef("%s declares no ptool %q", f.file, name)
	}
	var judgeDef *ptool.Def
	if e.judge != "" {
		if judgeDef = find(e.judge); judgeDef == nil {
			return usagef("%s declares no ptool %q to judge with", f.file, e.judge)
		}
	}
	spec, err := def.New(ptool.WithModel(noModel{}), withCEL)
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", f.file, err)}
	}
	var store *trace.Store
	if e.fromStore || slicesMax(counts) > 0 {
		if store, err = openTraceStore(cmd, e.db); err != nil {
			return err
		}
		defer store.Close()
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	cases, err := evalCases(cmd, e, store, name)
	if err != nil {
		return err
	}
	if len(cases) == 0 {
		return fmt.Errorf("no cases to evaluate %s on", name)
	}
	models, err := f.models.open(cmd)
	if err != nil {
		return err
	}
	defer models.close()
	names := splitList(setting(cmd, "model", f.models.model, "", "PTK_MODEL"))
	if len(names) == 0 {
		names = []string{def.Model} // the ptool's own, else the catalog's default
	}
	var targets []score.Target
	for _, mn := range names {
		m, err := models.named(mn)
		if err != nil {
			return err
		}
		label := mn
		if label == "" {
			label = "default"
		}
		for _, n := range counts {
			opts := append([]ptool.Option{ptool.WithModel(m), withCEL}, f.models.ptoolOptions()...)
			tl := label
			if n > 0 {
				opts = append(opts, ptool.WithStoredExamples(store, n))
				tl = fmt.Sprintf("%s +%d examples", label, n)
			}
			p, err := def.New(opts...)
			if err != nil {
				return usageError{err}
			}
			targets = append(targets, score.Target{Name: tl, Call: p.CallJSON})
		}
	}
	o := score.Options{Concurrency: e.concurrency}
	if judgeDef != nil {
		m, err := models.resolve(judgeDef.Model)
		if err != nil {
			return err
		}
		j, err := judgeDef.New(append([]ptool.Option{ptool.WithModel(m), withCEL}, f.models.ptoolOptions()...)...)
		if err != nil {
			return usageError{err}
		}
		o.Judge = score.JudgePTool(j)
	}
	rep, runErr := score.Evaluate(ctx, spec.Spec(), cases, targets, o)
	if rep == nil {
		return runErr
	}
	if e.report != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := outfile.WriteFile(e.report, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if f.asJSON {
		if err := writeIndented(cmd.OutOrStdout(), rep); err != nil {
			return err
		}
	} else {
		printEval(cmd.OutOrStdout(), rep)
	}
	if runErr != nil {
		return runErr
	}
	if cmd.Flags().Changed("min") {
		var below []string
		for _, r := range rep.Results {
			v, _ := r.Metric(e.metric)
			if v < e.min {
				below = append(below, fmt.Sprintf("%s: %s %.1f%% < %.1f%%", r.Name, e.metric, 100*v, 100*e.min))
			}
		}
		if below != nil {
			return fmt.Errorf("%w: %s", errBelow, strings.Join(below, "; "))
		}
	}
	return nil
}

func slicesMax(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// evalCases reads the cases of ptk ptool eval: the dataset file, or the
// ptool's good calls in the store.
func evalCases(cmd *cobra.Command, e ptoolEvalFlags, store *trace.Store, name string) ([]ptk.Example, error) {
	if e.dataset != "" {
		var r io.Reader = cmd.InOrStdin()
		if e.dataset != "-" {
			file, err := os.Open(e.dataset)
			if err != nil {
				return nil, usageError{err}
			}
			defer file.Close()
			r = file
		}
		cases, err := score.ReadDataset(r)
		if err != nil {
			return nil, usagef("%s: %v", e.dataset, err)
		}
		if e.limit > 0 && len(cases) > e.limit {
			cases = cases[:e.limit]
		}
		return cases, nil
	}
	since, err := parseSince(e.since)
	if err != nil {
		return nil, usagef("--since: %v", err)
	}
	until, err := parseSince(e.until)
	if err != nil {
		return nil, usagef("--until: %v", err)
	}
	calls, err := store.GoodCalls(cmd.Context(), trace.GoodFilter{Ptool: name, Since: since, Until: until, Limit: e.limit})
	if err != nil {
		return nil, err
	}
	cases := make([]ptk.Example, len(calls))
	for i, c := range calls {
		cases[i] = ptk.Example{Input: c.Input, Output: c.Output}
	}
	return cases, nil
}

// printEval writes a report as a table, then the wrong cases.
func printEval(w io.Writer, rep *score.Report) {
	fmt.Fprintf(w, "%s: %d cases\n", rep.PTool, rep.Cases)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "MODEL\tEXACT\tVALID\tFIRST TRY\tJUDGE\tABSTAINED\tFAILED\tTOKENS\tCOST\tP50\tP95\n")
	for _, r := range rep.Results {
		judge := "-"
		if r.Judged != nil {
			judge = fmt.Sprintf("%.1f%%", 100**r.Judged)
		}
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f%%\t%.1f%%\t%s\t%d\t%d\t%d\t$%.4f\t%s\t%s\n", r.Name, 100*r.Exact, 100*r.Valid, 100*r.FirstTry, judge,
			r.Abstained, r.Failed, r.Usage.TotalTokens(), r.Cost,
			time.Duration(r.LatencyP50).Round(time.Millisecond/10), time.Duration(r.LatencyP95).Round(time.Millisecond/10))
	}
	tw.Flush()
	for _, r := range rep.Results {
		shown := 0
		for _, c := range r.Cases {
			if c.Verdict == score.Correct || c.Verdict == "" {
				continue
			}
			if shown == 0 {
				fmt.Fprintf(w, "\nnot correct (%s):\n", r.Name)
			}
			if shown++; shown > 20 {
				fmt.Fprintf(w, "  ... and more: --json has them all\n")
				break
			}
			what := strings.Join(c.Diff, "; ")
			if c.Error != "" {
				what = c.Error
			}
			if c.Verdict == score.Abstained {
				what = "abstained: " + what
			}
			if c.Judge != nil {
				what += fmt.Sprintf(" [judge: %v %s]", c.Judge.Pass, c.Judge.Why)
			}
			fmt.Fprintf(w, "  case %d %s: %s\n", c.Index+1, term.Text(clipText(compactJSON(c.Input), 80)), term.Text(clipText(oneLineText(what), 300)))
		}
	}
}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
