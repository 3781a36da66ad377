package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/distill"
	"github.com/ptkit/ptk/internal/outfile"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/otlp"
	"github.com/ptkit/ptk/trace/record"
)

type distillFlags struct {
	file, db, out, pkg, report, workDir            string
	baseURL, apiKey, model, models, replay, record string
	minExamples, maxExamples, rounds, memoryMiB    int
	validation, sealed, maxWrong, minCoverage      float64
	seed                                           int64
	timeout, caseTimeout                           time.Duration
	asJSON, noSandbox, keep                        bool
	otlp                                           string // --otlp-endpoint
	otlpContent                                    bool   // --otlp-content
}

func newDistillCmd() *cobra.Command {
	var f distillFlags
	cmd := &cobra.Command{
		Use:   "distill NAME",
		Short: "Turn a ptool's stored calls into Go code, with the model as the fallback",
		Long: `ptk distill reads the calls a model answered for a ptool from the trace
store and splits them at random (--seed) three ways: training examples,
shown to the model; validation examples (--validation), whose wrong answers
the model is told; and sealed examples (--sealed), never shown in any prompt
or feedback, on which alone the gate decides. It asks a model to describe
the patterns, then to write Go code that answers as the ptool did and
returns ptool.ErrFallback when it is not sure, with a table test that tries
an example of each pattern.

Each candidate is screened before anything compiles (imports from an
allow-list, no init, no go statements, no //go: directives, no cgo), then
compiled and tested for real under bubblewrap: as nobody without
capabilities, with no network, seeing only the Go toolchain, a temporary
module and a build cache of its own, with limits on memory, file size and
processes. Without bubblewrap, ptk distill refuses unless --no-sandbox
(which runs the code unconfined) is given. A candidate is accepted when its
tests pass, try every pattern and fail for a code that always falls back, it
holds no input as a literal, and on the sealed inputs it is wrong on at most
--max-wrong and answers at least --min-coverage; otherwise the model is told
the compiler's errors and the wrong validation cases, for at most --rounds
rounds.

The accepted code is written to --out (default NAME_distilled.go) as a Go
file whose New(opts...) wires it into ptool.Distill with the ptool as the
fallback. The report (--report FILE for JSON; --json prints it, with the
file written, as one JSON document on stdout) is recorded in the trace
store as a run of kind distill: each round a span, each check of its
candidate (screen, compile, tests, validation, sealed) a span under it with
its time, verdict and counts, and the model calls that wrote it under it;
never a sealed input (--otlp-endpoint sends the same spans).

  ptk distill classify_sentiment --ptools ptools.json --model gpt-4o
Exit status: 0 accepted, 1 no candidate passed or an error, 2 usage (no
bubblewrap and no --no-sandbox included).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return distillRun(cmd, f, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.file, "ptools", "ptools.json", "the ptools file declaring NAME")
	fl.StringVar(&f.db, "trace-db", "", "the trace store: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	fl.StringVar(&f.out, "out", "", "the Go file to write (default NAME_distilled.go)")
	fl.StringVar(&f.pkg, "package", "", "the Go file's package (default NAME without its underscores)")
	fl.StringVar(&f.report, "report", "", "write the report as JSON to FILE")
	fl.StringVar(&f.workDir, "work-dir", "", "where the temporary module is made (default the system's temporary directory)")
	fl.BoolVar(&f.keep, "keep", false, "keep the temporary module")
	fl.BoolVar(&f.noSandbox, "no-sandbox", false, "run the candidates' code unconfined, without bubblewrap (it can read and write your files and use the network)")
	fl.IntVar(&f.minExamples, "min-examples", 50, "the fewest distinct stored calls a model answered to distill from")
	fl.IntVar(&f.maxExamples, "max-examples", 80, "the most training examples shown to the model")
	fl.Float64Var(&f.validation, "validation", 0.2, "the share of the examples for validation (the model is told the wrong ones)")
	fl.Float64Var(&f.sealed, "sealed", 0.3, "the share of the examples sealed (never shown to the model; the gate decides on them)")
	fl.Int64Var(&f.seed, "seed", 1, "the seed of the random split")
	fl.IntVar(&f.rounds, "rounds", 3, "the most candidates asked for")
	fl.Float64Var(&f.maxWrong, "max-wrong", 0.02, "the largest share of sealed inputs the code may answer wrongly")
	fl.Float64Var(&f.minCoverage, "min-coverage", 0.30, "the smallest share of sealed inputs the code must answer")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "the time limit of each step: go vet, go test, scoring")
	fl.DurationVar(&f.caseTimeout, "case-timeout", 2*time.Second, "the time limit of the code on one input")
	fl.IntVar(&f.memoryMiB, "memory", 1024, "the memory (MiB) of the process running the candidate's tests")
	fl.StringVar(&f.baseURL, "base-url", "", "the model's OpenAI-compatible API (env PTK_BASE_URL; default "+defaultBaseURL+")")
	fl.StringVar(&f.apiKey, "api-key", "", "API key (env PTK_API_KEY, then OPENAI_API_KEY)")
	fl.StringVar(&f.model, "model", "", "the model that writes the code (env PTK_MODEL; default the catalog's default)")
	fl.StringVar(&f.models, "models", "", "a model catalog file laid over the built-in one (env PTK_MODELS)")
	fl.StringVar(&f.record, "record", "", "append every model request and response to FILE as JSON lines")
	fl.StringVar(&f.replay, "replay", "", "answer model requests from a file made by --record, without the network")
	fl.BoolVar(&f.asJSON, "json", false, "print the report, with the file written or the error, as one JSON document on stdout")
	fl.StringVar(&f.otlp, "otlp-endpoint", "", "also send the run as OpenTelemetry spans over OTLP/HTTP to this URL (http://localhost:4318; env OTEL_EXPORTER_OTLP_ENDPOINT, with OTEL_EXPORTER_OTLP_HEADERS)")
	fl.BoolVar(&f.otlpContent, "otlp-content", false, "send the run's input and verdict in its span too")
	return cmd
}

// distillJSON is what --json prints: the report, the file written and the
// error, in one document.
type distillJSON struct {
	*distill.Report
	Wrote   string `json:"wrote,omitempty"`
	Package string `json:"package,omitempty"`
	Error   string `json:"error,omitempty"`
}

func distillRun(cmd *cobra.Command, f distillFlags, name string) (err error) {
	doc := distillJSON{Report: &distill.Report{Ptool: name}}
	if f.asJSON {
		// Whatever happens, stdout holds one JSON document (and stderr
		// the error, as for every command).
		defer func() {
			if err != nil {
				doc.Error = err.Error()
			}
			data, _ := json.MarshalIndent(doc, "", "  ")
			fmt.Fprintln(cmd.OutOrStdout(), string(data))
		}()
	}
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
	if f.validation <= 0 || f.sealed <= 0 || f.validation+f.sealed >= 1 {
		return usagef("--validation and --sealed must be above 0, with room left for training (they are %g and %g)", f.validation, f.sealed)
	}
	if f.memoryMiB <= 0 {
		return usagef("--memory must be a number of MiB above 0")
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
	splits := distill.Split(calls, f.validation, f.sealed, f.seed)
	if n := len(splits.Train) + len(splits.Validation) + len(splits.Sealed); n < f.minExamples {
		return fmt.Errorf("%s has %d distinct successful stored calls that a model answered in %s; distilling needs at least %d (--min-examples)",
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
	if f.noSandbox {
		fmt.Fprintln(errOut, "ptk distill: --no-sandbox was given: the candidates' code runs unconfined, as you, with your files and the network open to it")
	}
	sink, closeSink := distillSink(cmd, store, f)
	defer closeSink()
	rec := record.NewDistill(sink, trace.Run{Name: name, Model: modelName, Provider: llm.ProviderOf(m),
		Input: fmt.Sprintf("%d training, %d validation, %d sealed examples", len(splits.Train), len(splits.Validation), len(splits.Sealed))})
	rep, runErr := distill.Run(ctx, t, splits, distill.Options{
		Model: m, Rounds: f.rounds, MaxWrong: orNegative(f.maxWrong), MinCoverage: f.minCoverage,
		Timeout: f.timeout, CaseTimeout: f.caseTimeout, Memory: int64(f.memoryMiB) << 20, WorkDir: f.workDir, Keep: f.keep,
		NoSandbox: f.noSandbox, MaxExamples: f.maxExamples,
		Log:     func(format string, args ...any) { fmt.Fprintf(errOut, "distill: "+format+"\n", args...) },
		Observe: rec.Observe,
	})
	rec.Done(rep, runErr)
	if rep == nil {
		if errors.Is(runErr, distill.ErrNoSandbox) {
			return usageError{runErr}
		}
		return runErr
	}
	doc.Report = rep
	data, _ := json.MarshalIndent(rep, "", "  ")
	if f.report != "" {
		if err := outfile.WriteFile(f.report, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if !f.asJSON {
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
	if err := outfile.WriteFile(out, src, 0o644); err != nil {
		return err
	}
	doc.Wrote, doc.Package = out, pkg
	if !f.asJSON {
		fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (package %s)\n", out, pkg)
	}
	return nil
}

// orNegative makes an explicit zero tolerance what distill.Options means by it.
func orNegative(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}

// distillSink is where ptk distill records its run as it goes (live, a
// span tree: record.NewDistill): the trace store, and OTLP when an endpoint
// is named (--otlp-endpoint, OTEL_EXPORTER_OTLP_*). A failure to record or
// to send is said, not fatal. done writes what is queued and sends the
// spans; it leaves the store open.
func distillSink(cmd *cobra.Command, s *trace.Store, f distillFlags) (sink record.Sink, done func()) {
	errOut := cmd.ErrOrStderr()
	w := trace.NewWriter(s, errOut)
	sink = w
	var exp *otlp.Exporter
	if f.otlp != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		var err error
		if exp, err = otlp.New(cmd.Context(), otlp.Options{Endpoint: f.otlp, Content: f.otlpContent}); err != nil {
			fmt.Fprintf(errOut, "ptk distill: not sent over OTLP: %v\n", err)
			exp = nil
		} else {
			sink = exp.Sink(w)
		}
	}
	return sink, func() {
		if err := w.Close(5 * time.Second); err != nil {
			fmt.Fprintf(errOut, "ptk distill: the run was not all recorded in the trace store: %v\n", err)
		}
		if exp == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := exp.Shutdown(ctx); err != nil {
			fmt.Fprintf(errOut, "ptk distill: sending spans over OTLP: %v\n", err)
		}
	}
}
