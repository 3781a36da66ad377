package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/distill"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace"
)

type distillFlags struct {
	file, db, out, pkg, report, module, workDir    string
	baseURL, apiKey, model, models, replay, record string
	minExamples, maxExamples, rounds               int
	heldOut, maxWrong, minCoverage                 float64
	seed                                           int64
	timeout, caseTimeout                           time.Duration
	asJSON, noSandbox, keep                        bool
}

func newDistillCmd() *cobra.Command {
	var f distillFlags
	cmd := &cobra.Command{
		Use:   "distill NAME",
		Short: "Turn a ptool's stored calls into Go code, with the model as the fallback",
		Long: `ptk distill reads a ptool's successful calls from the trace store, splits them
at random (--seed) into training and held-out examples, and asks a model to
describe the patterns, then to write Go code that answers as the ptool did
and returns ptool.ErrFallback when it is not sure, with a table test.

Each candidate is compiled and tested for real in a temporary module that
points at the ptk module (--module): go vet, go test, under a time limit,
with GOPROXY=off and, when bubblewrap is installed, in a sandbox with no
network. It is then scored on the held-out inputs: correct, wrong or
abstained (a fallback is never a pass). It is accepted when it is wrong on at
most --max-wrong of them and answers at least --min-coverage; otherwise the
model is told what failed, for at most --rounds rounds.

The accepted code is written to --out (default NAME_distilled.go) as a Go
file whose New(opts...) wires it into ptool.Distill with the ptool as the
fallback. The report (--report FILE for JSON) is recorded in the trace
store as a run of kind distill.

  ptk distill classify_sentiment --ptools ptools.json --model gpt-4o
Exit status: 0 accepted, 1 no candidate passed or an error, 2 usage.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return distillRun(cmd, f, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.file, "ptools", "ptools.json", "the ptools file declaring NAME")
	fl.StringVar(&f.db, "trace-db", "", "the trace store: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	fl.StringVar(&f.out, "out", "", "the Go file to write (default NAME_distilled.go)")
	fl.StringVar(&f.pkg, "package", "", "the Go file's package (default NAME without its underscores)")
	fl.StringVar(&f.report, "report", "", "write the report as JSON to FILE")
	fl.StringVar(&f.module, "module", "", "the ptk module's directory the code is built against (default: the one the current directory is in, or requires)")
	fl.StringVar(&f.workDir, "work-dir", "", "where the temporary module is made (default the system's temporary directory)")
	fl.BoolVar(&f.keep, "keep", false, "keep the temporary module")
	fl.BoolVar(&f.noSandbox, "no-sandbox", false, "run the candidates' code without bubblewrap even when it is installed")
	fl.IntVar(&f.minExamples, "min-examples", 50, "the fewest distinct stored calls to distill from")
	fl.IntVar(&f.maxExamples, "max-examples", 80, "the most training examples shown to the model")
	fl.Float64Var(&f.heldOut, "held-out", 0.3, "the share of the examples held out to score the code")
	fl.Int64Var(&f.seed, "seed", 1, "the seed of the random split")
	fl.IntVar(&f.rounds, "rounds", 3, "the most candidates asked for")
	fl.Float64Var(&f.maxWrong, "max-wrong", 0.02, "the largest share of held-out inputs the code may answer wrongly")
	fl.Float64Var(&f.minCoverage, "min-coverage", 0.30, "the smallest share of held-out inputs the code must answer")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "the time limit of each step: go vet, go test, scoring")
	fl.DurationVar(&f.caseTimeout, "case-timeout", 2*time.Second, "the time limit of the code on one held-out input")
	fl.StringVar(&f.baseURL, "base-url", "", "the model's OpenAI-compatible API (env PTK_BASE_URL; default "+defaultBaseURL+")")
	fl.StringVar(&f.apiKey, "api-key", "", "API key (env PTK_API_KEY, then OPENAI_API_KEY)")
	fl.StringVar(&f.model, "model", "", "the model that writes the code (env PTK_MODEL; default the catalog's default)")
	fl.StringVar(&f.models, "models", "", "a model catalog file laid over the built-in one (env PTK_MODELS)")
	fl.StringVar(&f.record, "record", "", "append every model request and response to FILE as JSON lines")
	fl.StringVar(&f.replay, "replay", "", "answer model requests from a file made by --record, without the network")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON instead of the summary")
	return cmd
}

func distillRun(cmd *cobra.Command, f distillFlags, name string) error {
	defs, err := ptool.ReadDefs(f.file)
	if err != nil {
		return usageError{err}
	}
	var def *ptool.Def
	for i := range defs {
		if defs[i].Name == name {
			def = &defs[i]
		}
	}
	if def == nil {
		return usagef("%s declares no ptool %q", f.file, name)
	}
	p, err := def.New(ptool.WithModel(noModel{}), withCEL)
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", f.file, err)}
	}
	t := distill.TargetOf(p.Spec())
	if f.heldOut <= 0 || f.heldOut >= 1 {
		return usagef("--held-out must be between 0 and 1")
	}
	module := f.module
	if module == "" {
		if module, err = ptkModule(); err != nil {
			return usageError{err}
		}
	}
	store, err := openTraceStore(cmd, f.db)
	if err != nil {
		return err
	}
	defer store.Close()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	calls, err := store.Examples(ctx, name, -1)
	if err != nil {
		return err
	}
	train, held := distill.Split(calls, f.heldOut, f.seed)
	if n := len(train) + len(held); n < f.minExamples {
		return fmt.Errorf("%s has %d distinct successful stored calls in %s; distilling needs at least %d (--min-examples)",
			name, n, store.Name(), f.minExamples)
	}
	cat, err := loadCatalog(f.models)
	if err != nil {
		return usageError{err}
	}
	modelName := setting(cmd, "model", f.model, "", "PTK_MODEL")
	if modelName == "" {
		modelName = cat.DefaultModel
	}
	m, err := resolveModels(cat, modelChoice{names: splitList(modelName),
		baseURL:         setting(cmd, "base-url", f.baseURL, defaultBaseURL, "PTK_BASE_URL"),
		apiKey:          setting(cmd, "api-key", f.apiKey, "", "PTK_API_KEY", "OPENAI_API_KEY"),
		baseURLExplicit: cmd.Flags().Changed("base-url") || os.Getenv("PTK_BASE_URL") != "",
		apiKeyExplicit:  cmd.Flags().Changed("api-key") || os.Getenv("PTK_API_KEY") != ""})
	if err != nil {
		return usageError{err}
	}
	m, done, err := recordOrReplay(m, f.record, f.replay)
	if err != nil {
		return usageError{err}
	}
	defer done()
	errOut := cmd.ErrOrStderr()
	start := time.Now()
	rep, runErr := distill.Run(ctx, t, train, held, distill.Options{
		Model: m, Rounds: f.rounds, MaxWrong: orNegative(f.maxWrong), MinCoverage: f.minCoverage,
		Timeout: f.timeout, CaseTimeout: f.caseTimeout, Module: module, WorkDir: f.workDir, Keep: f.keep,
		NoSandbox: f.noSandbox, MaxExamples: f.maxExamples,
		Log: func(format string, args ...any) { fmt.Fprintf(errOut, "distill: "+format+"\n", args...) },
	})
	if rep == nil {
		return runErr
	}
	data, _ := json.MarshalIndent(rep, "", "  ")
	if f.report != "" {
		if err := os.WriteFile(f.report, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	recordDistill(cmd, store, rep, modelName, start, runErr, data)
	if f.asJSON {
		fmt.Fprintln(cmd.OutOrStdout(), string(data))
	} else {
		fmt.Fprint(cmd.OutOrStdout(), rep.Summary())
	}
	if runErr != nil {
		return runErr
	}
	pkg := f.pkg
	if pkg == "" {
		pkg = strings.ToLower(strings.ReplaceAll(name, "_", ""))
	}
	src, err := distill.File(pkg, t, rep)
	if err != nil {
		return err
	}
	out := f.out
	if out == "" {
		out = name + "_distilled.go"
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (package %s)\n", out, pkg)
	return nil
}

// orNegative makes an explicit zero tolerance what distill.Options means by it.
func orNegative(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}

// recordDistill records the distillation in the trace store, its report
// as the run's detail; a failure to record is said, not fatal.
func recordDistill(cmd *cobra.Command, s *trace.Store, rep *distill.Report, model string, start time.Time, runErr error, detail []byte) {
	r := &trace.Record{Run: trace.Run{ID: trace.NewID(), Kind: trace.Kind("distill"), Name: rep.Ptool, Model: model,
		StartedAt: start, Duration: trace.Millis(time.Since(start)), Status: trace.StatusOK,
		Input:  fmt.Sprintf("%d training, %d held-out examples", rep.Train, rep.HeldOut),
		Output: rep.Summary(), Iterations: len(rep.Rounds)}, Detail: detail}
	if runErr != nil {
		r.Status, r.ErrorMessage = trace.StatusError, runErr.Error()
	}
	if err := s.Write(cmd.Context(), r); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "ptk distill: the report was not recorded in the trace store: %v\n", err)
	}
}

// ptkModule finds the ptk module's directory: the module the current
// directory is in when it is ptk, else the ptk module it requires.
func ptkModule() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/ptkit/ptk").Output()
	if err == nil {
		if dir := strings.TrimSpace(string(out)); dir != "" {
			return dir, nil
		}
	}
	dir, _ := os.Getwd()
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module github.com/ptkit/ptk\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no ptk module found to build the code against: run ptk distill in a module that requires github.com/ptkit/ptk, or name its directory with --module")
		}
		dir = parent
	}
}
