package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/eval"
	"github.com/ptkit/ptk/internal/term"
	"github.com/ptkit/ptk/llm"
)

type evalFlags struct {
	data, categories, modes, prompts, out string
	baseURL, apiKey, model, models        string
	record, replay                        string
	limit, concurrency, maxTokens         int
	temperature                           float64
	timeout                               time.Duration
	stream                                bool
}

func newEvalCmd() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval [flags]",
		Short: "Measure a model's tool calling on the Berkeley Function Calling Leaderboard, text protocol against native",
		Long: `eval asks a model the questions of the Berkeley Function Calling Leaderboard
(BFCL v4 single-turn data: simple, multiple, parallel, parallel_multiple,
irrelevance, live_*, java, javascript), each once, with its functions as
tools, in each --mode: ptk (the text protocol, with each --prompt: ptk,
hermes or pythonic), native (the provider's function calling) or auto (native, and the
text protocol when the provider rejects tools). It scores the calls with a
port of BFCL's AST checker and prints a Markdown table per category and mode:
accuracy as ptk reads the calls, and BFCL's strict accuracy (no coercion, no
name correction), answers with a call that could not be read, calls that
broke their schema (and which rule), refusals, provider errors, latency p50
and p95, tokens and cost.

--data is BFCL's data folder (bfcl_eval/data in ShishirPatil/gorilla, the
files BFCL_v4_<category>.json and possible_answer/), or $PTK_BFCL_DATA.
--categories takes category names and simple (the three simple_*), python,
non_live (the default), live, ast, relevance, all.

--out FILE keeps every answer and the summary as JSON, rewritten as the run
goes; running again with the same --out asks only what is not answered yet.
--record FILE keeps every model call, --replay FILE answers from it.
'ptk eval compare a.json b.json' shows what changed between two runs.

  ptk eval --model qwen3:8b --limit 50 --out qwen3.json
  ptk eval --base-url http://localhost:8080/v1 --model any --mode ptk --prompt ptk,hermes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEval(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.data, "data", "", "BFCL's data folder (env PTK_BFCL_DATA)")
	fl.StringVar(&f.categories, "categories", "non_live", "comma-separated categories or groups (simple, python, non_live, live, ast, relevance, all)")
	fl.IntVar(&f.limit, "limit", 0, "at most N questions of each category (0: all)")
	fl.StringVar(&f.modes, "mode", "ptk,native", "comma-separated modes: ptk, native, auto")
	fl.StringVar(&f.prompts, "prompt", "ptk", "comma-separated prompts of the text protocol: ptk, hermes, pythonic")
	fl.StringVar(&f.baseURL, "base-url", "", "the model's OpenAI-compatible API (env PTK_BASE_URL; default "+defaultBaseURL+")")
	fl.StringVar(&f.apiKey, "api-key", "", "API key (env PTK_API_KEY, then OPENAI_API_KEY)")
	fl.StringVar(&f.model, "model", "", "model name: from the catalog ('ptk models'), else a model of the server at --base-url (env PTK_MODEL)")
	fl.StringVar(&f.models, "models", "", "a model catalog file laid over the built-in one (env PTK_MODELS)")
	fl.IntVar(&f.concurrency, "concurrency", 4, "questions asked at once")
	fl.Float64Var(&f.temperature, "temperature", 0, "sampling temperature (negative: the provider's default)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "cap on each answer's tokens (0: none)")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Minute, "time limit for each question (0: none)")
	fl.BoolVar(&f.stream, "stream", false, "ask the model to stream its answers")
	fl.StringVar(&f.out, "out", "", "write the results and the summary to FILE as JSON; an existing FILE is resumed")
	fl.StringVar(&f.record, "record", "", "append every model request and response to FILE as JSON lines")
	fl.StringVar(&f.replay, "replay", "", "answer model requests from a file made by --record, without the network")
	cmd.AddCommand(newEvalCompareCmd(), newEvalReplayCmd())
	return cmd
}

func runEval(cmd *cobra.Command, f evalFlags) error {
	data := setting(cmd, "data", f.data, "", "PTK_BFCL_DATA")
	if data == "" {
		return usagef("eval needs BFCL's data: --data DIR or PTK_BFCL_DATA (the folder berkeley-function-call-leaderboard/bfcl_eval/data of github.com/ShishirPatil/gorilla)")
	}
	cats, err := eval.ExpandCategories(splitList(f.categories))
	if err != nil {
		return usageError{fmt.Errorf("--categories: %w", err)}
	}
	var modes []eval.Mode
	for _, m := range splitList(f.modes) {
		switch eval.Mode(m) {
		case eval.ModePTK, eval.ModeNative, eval.ModeAuto:
			modes = append(modes, eval.Mode(m))
		default:
			return usagef("--mode must list ptk, native or auto, not %q", m)
		}
	}
	prompts := splitList(f.prompts)
	for _, p := range prompts {
		if _, ok := eval.Prompts[p]; !ok {
			return usagef("--prompt must list ptk, hermes or pythonic, not %q", p)
		}
	}
	if f.limit < 0 || f.concurrency < 1 || f.maxTokens < 0 || f.timeout < 0 {
		return usagef("--limit, --max-tokens and --timeout must not be negative, --concurrency at least 1")
	}
	questions, err := eval.Load(data, cats, f.limit)
	if err != nil {
		return usageError{fmt.Errorf("--data %s: %w", data, err)}
	}
	cat, err := loadCatalog(f.models)
	if err != nil {
		return usageError{err}
	}
	baseURL := setting(cmd, "base-url", f.baseURL, defaultBaseURL, "PTK_BASE_URL")
	model := setting(cmd, "model", f.model, cat.DefaultModel, "PTK_MODEL")
	names := splitList(model)
	if len(names) == 0 {
		return usagef("no model named: give --model NAME or set PTK_MODEL ('ptk models' lists the catalog)")
	}
	m, err := resolveModels(cat, choice(cmd, names, f.baseURL, f.apiKey))
	if err != nil {
		return usageError{err}
	}
	m, done, err := recordOrReplay(m, f.record, f.replay)
	if err != nil {
		return usageError{err}
	}
	defer done()

	file := &eval.File{Version: 1, Model: model, Started: time.Now().UTC()}
	if f.out != "" {
		if prev, err := eval.ReadFile(f.out); err == nil {
			if prev.Model != model {
				return usagef("--out %s holds a run of model %q, not %q: name another file", f.out, prev.Model, model)
			}
			file = prev
		} else if !errors.Is(err, os.ErrNotExist) {
			return usageError{fmt.Errorf("--out: %w", err)}
		}
	}
	opts := eval.Options{
		Model: m, ModelName: strings.Join(names, ","), Modes: modes, Prompts: prompts,
		Concurrency: f.concurrency, MaxTokens: f.maxTokens, Timeout: f.timeout, Stream: f.stream,
		Previous: file.Results,
	}
	if f.temperature >= 0 {
		opts.Temperature = &f.temperature
	}
	stderr := cmd.ErrOrStderr()
	tty := isTerminal(stderr)
	status := term.Unwrap(stderr) // its own \r and erase line; the ids made safe
	var answered []eval.Result
	opts.OnResult = func(r eval.Result, n, total int) {
		answered = append(answered, r)
		if tty {
			fmt.Fprintf(status, "\r\033[Keval: %d/%d %s %s %s", n, total, term.Text(r.ID), r.Mode, mark(r))
		} else if step := max(1, total/20); n%step == 0 || n == total {
			fmt.Fprintf(stderr, "eval: %d/%d answered\n", n, total)
		}
		if f.out != "" && len(answered)%25 == 0 {
			file.Results = merge(file.Results, answered)
			answered = answered[:0]
			_ = eval.WriteFile(f.out, file) // a checkpoint; the last write reports errors
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	results, runErr := eval.Run(ctx, questions, opts)
	if tty {
		fmt.Fprintln(stderr)
	}
	file.Results = merge(file.Results, results)
	file.Summary = eval.Summarize(results)
	if f.out != "" {
		if err := eval.WriteFile(f.out, file); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if err := eval.Markdown(cmd.OutOrStdout(), file.Summary); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	failed, first := 0, ""
	for _, r := range results {
		if r.Error != "" {
			failed++
			if first == "" {
				first = r.Error
			}
		}
	}
	if len(results) > 0 && failed == len(results) {
		if b := llm.BaseURLOf(m); b != "" {
			baseURL = b
		}
		return usagef("no question was answered by %s at %s: %s", model, baseURL, first)
	}
	return nil
}

// merge returns prev with the results of next put in: a result of the same
// question, mode and prompt replaced, the others added.
func merge(prev, next []eval.Result) []eval.Result {
	at := map[string]int{}
	for i, r := range prev {
		at[r.Key()] = i
	}
	for _, r := range next {
		if i, ok := at[r.Key()]; ok {
			prev[i] = r
			continue
		}
		at[r.Key()] = len(prev)
		prev = append(prev, r)
	}
	return prev
}

func mark(r eval.Result) string {
	switch {
	case r.Error != "":
		return "error"
	case r.Correct:
		return "ok"
	}
	return r.Verdict.ErrorType
}

func newEvalCompareCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare A.json B.json",
		Short: "Show what changed between two eval runs, question by question",
		Long: `compare reads two files written by 'ptk eval --out' and prints, for the
questions both runs asked in the same mode and prompt, the accuracy per
category in each, then every question whose verdict changed (correct, or
BFCL's error type). --json prints the comparison as one JSON object.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare needs two result files: ptk eval compare a.json b.json")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := eval.ReadFile(args[0])
			if err != nil {
				return usageError{err}
			}
			b, err := eval.ReadFile(args[1])
			if err != nil {
				return usageError{err}
			}
			c := eval.Compare(a, b)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				return enc.Encode(c)
			}
			return eval.CompareMarkdown(cmd.OutOrStdout(), c)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	return cmd
}
