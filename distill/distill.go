package distill

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ptkit/ptk/internal/sandbox"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	scorer "github.com/ptkit/ptk/ptool/score"
	"github.com/ptkit/ptk/schema"
)

// Target is the ptool being distilled: its name, doc, signature and the
// JSON Schemas of its input and output.
type Target struct {
	Name      string          `json:"name"`
	Doc       string          `json:"doc"`
	Signature string          `json:"signature"`
	Input     json.RawMessage `json:"input"`
	Output    json.RawMessage `json:"output"`
}

// TargetOf describes the ptool of a Spec.
func TargetOf(s *ptool.Spec) Target {
	return Target{Name: s.Name, Doc: s.Doc, Signature: s.Signature(), Input: s.Input, Output: s.Output}
}

// Options tune a distillation. The zero value of each field is its
// default.
type Options struct {
	// Model writes the code (required).
	Model llm.Model
	// Rounds is the most candidates asked for (default 3).
	Rounds int
	// MaxWrong is the largest share of sealed inputs the code may answer
	// wrongly (default 0.02); MinCoverage the smallest share it must
	// answer (default 0.30). Set MaxWrong negative for zero tolerance.
	MaxWrong, MinCoverage float64
	// Timeout limits each step: go vet, building the tests, running the
	// candidate's tests, scoring (default 2 minutes). CaseTimeout limits
	// the code on one input (default 2 s).
	Timeout, CaseTimeout time.Duration
	// Memory bounds the data of the candidate's test process (default
	// 1 GiB).
	Memory int64
	// WorkDir is where the temporary module is made (default the system's
	// temporary directory); Keep leaves it there.
	WorkDir string
	Keep    bool
	// CacheDir keeps the seed of the build cache (default the user's cache
	// directory, ptk/distill).
	CacheDir string
	// NoSandbox runs the candidates' code without bubblewrap, unconfined;
	// without it, Run refuses (ErrNoSandbox) when bubblewrap is missing.
	NoSandbox bool
	// MaxExamples caps the training examples shown to the model (default
	// 80).
	MaxExamples int
	// Log, when set, receives a line as each step ends.
	Log func(format string, args ...any)
	// Observe, when set, is told what the distillation does as it does
	// it, from Run's goroutine: each round as it begins and ends, each
	// check and the model calls as they end (a live trace recorder's
	// hook: record.NewDistill). It must not block for long.
	Observe func(Event)

	// noScreen skips the screen: the sandbox tests try what it stops.
	noScreen bool
}

func (o *Options) defaults() {
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.MaxWrong == 0 {
		o.MaxWrong = 0.02
	} else if o.MaxWrong < 0 {
		o.MaxWrong = 0
	}
	if o.MinCoverage == 0 {
		o.MinCoverage = 0.30
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.CaseTimeout <= 0 {
		o.CaseTimeout = 2 * time.Second
	}
	if o.Memory <= 0 {
		o.Memory = runMemory
	}
	if o.MaxExamples <= 0 {
		o.MaxExamples = 80
	}
	if o.CacheDir == "" {
		if d, err := os.UserCacheDir(); err == nil {
			o.CacheDir = filepath.Join(d, "ptk", "distill")
		} else {
			o.CacheDir = filepath.Join(os.TempDir(), "ptk-distill-cache")
		}
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
}

// The verdicts on an input.
const (
	Correct   = "correct"   // the code's answer equals the stored one
	Wrong     = "wrong"     // it differs, or the code failed, panicked or hung
	Abstained = "abstained" // the code returned ptool.ErrFallback
)

// Case is the code's answer to one input.
type Case struct {
	Input   json.RawMessage `json:"input"`
	Want    json.RawMessage `json:"want"`
	Got     json.RawMessage `json:"got,omitempty"`
	Verdict string          `json:"verdict"`
	Error   string          `json:"error,omitempty"`
}

// Score is a candidate's result on the inputs of a split. Coverage is the
// share the code answered (correctly or not); WrongRate the share it
// answered wrongly, over all the inputs: the model answers the others, as
// it did when they were stored. A fallback is never counted correct.
type Score struct {
	Total     int     `json:"total"`
	Correct   int     `json:"correct"`
	Wrong     int     `json:"wrong"`
	Abstained int     `json:"abstained"`
	Coverage  float64 `json:"coverage"`
	WrongRate float64 `json:"wrong_rate"`
	// WrongCases are the inputs answered wrongly.
	WrongCases []Case `json:"wrong_cases,omitempty"`
}

// Round is one candidate: its code and what became of it, step by step.
type Round struct {
	N        int    `json:"round"`
	Code     string `json:"code"`
	TestCode string `json:"test_code"`
	// Screen lists why the screen rejected the files, before any compiled.
	Screen []string `json:"screen,omitempty"`
	// Compiled reports that go vet and the test build passed; Build holds
	// their output when they did not.
	Compiled bool   `json:"compiled"`
	Build    string `json:"build,omitempty"`
	// TestsPassed reports the candidate's own tests; Tests is their output
	// (for the user: the model is told only the names in FailedTests).
	TestsPassed bool     `json:"tests_passed"`
	Tests       string   `json:"tests,omitempty"`
	FailedTests []string `json:"failed_tests,omitempty"`
	// Uncovered are the patterns (by index) whose examples the tests never
	// tried; Unchecked reports tests that pass when the code always falls
	// back.
	Uncovered []int `json:"uncovered,omitempty"`
	Unchecked bool  `json:"unchecked,omitempty"`
	// Flags are string literals of the code equal to validation inputs;
	// SealedFlags counts those equal to sealed ones.
	Flags       []string `json:"flags,omitempty"`
	SealedFlags int      `json:"sealed_flags,omitempty"`
	// Validation is the score on the validation split (told to the
	// model), Sealed on the sealed split (which alone the gate reads).
	Validation *Score `json:"validation,omitempty"`
	Sealed     *Score `json:"sealed,omitempty"`
	Accepted   bool   `json:"accepted"`
	// Rejected says why it was not accepted.
	Rejected string `json:"rejected,omitempty"`
	// Start and Duration are the round's, asking for the code included;
	// Calls are the model calls that wrote the candidate; Checks the
	// checks it went through, in order, each timed (spans.go).
	Start    time.Time     `json:"start,omitzero"`
	Duration time.Duration `json:"duration_ns,omitempty"`
	Calls    []ModelCall   `json:"calls,omitempty"`
	Checks   []Check       `json:"checks,omitempty"`
}

// Report is what a distillation did.
type Report struct {
	Ptool       string  `json:"ptool"`
	Train       int     `json:"train"`
	Validation  int     `json:"validation"`
	Sealed      int     `json:"sealed"`
	MaxWrong    float64 `json:"max_wrong"`
	MinCoverage float64 `json:"min_coverage"`
	// Confined reports that the candidates' code ran in the sandbox;
	// Sandbox says how.
	Confined bool      `json:"confined"`
	Sandbox  string    `json:"sandbox"`
	Patterns []Pattern `json:"patterns"`
	Rounds   []Round   `json:"rounds"`
	Accepted bool      `json:"accepted"`
	// Types are the Go types In and Out; Code and TestCode the accepted
	// candidate's (empty when none was).
	Types    string        `json:"types"`
	Code     string        `json:"code,omitempty"`
	TestCode string        `json:"test_code,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// PatternCalls are the model calls that described the patterns.
	PatternCalls []ModelCall `json:"pattern_calls,omitempty"`
}

// Final returns the accepted round, or nil.
func (r *Report) Final() *Round {
	for i := range r.Rounds {
		if r.Rounds[i].Accepted {
			return &r.Rounds[i]
		}
	}
	return nil
}

// ErrRejected is returned by Run when no candidate passed the gate.
var ErrRejected = errors.New("distill: no candidate passed")

// ErrPatterns is returned by Run when the model's description of the
// patterns could not be had.
var ErrPatterns = errors.New("distill: asking the model for the patterns failed")

// Run asks the model for code that answers as the ptool did on s.Train,
// screens, compiles and tests each candidate in the sandbox, scores it on
// s.Validation (whose wrong cases the model is told) and s.Sealed (which
// alone the gate reads, and the model never sees), feeding back what went
// wrong, for at most Options.Rounds candidates. It returns the report,
// with ErrRejected when no candidate passed; ErrNoSandbox when the code
// cannot be confined and Options.NoSandbox is not set; other errors (the
// model's, the file system's) stop it.
func Run(ctx context.Context, t Target, s Splits, o Options) (*Report, error) {
	o.defaults()
	start := time.Now()
	if o.Model == nil {
		return nil, errors.New("distill: no model")
	}
	if len(s.Train) == 0 || len(s.Validation) == 0 || len(s.Sealed) == 0 {
		return nil, fmt.Errorf("distill: %s: %d training, %d validation and %d sealed examples: each split needs one at least",
			t.Name, len(s.Train), len(s.Validation), len(s.Sealed))
	}
	types, err := GoTypes(t.Input, t.Output)
	if err != nil {
		return nil, err
	}
	outSchema, err := schema.Compile(t.Output)
	if err != nil {
		return nil, fmt.Errorf("distill: %s's output schema: %w", t.Name, err)
	}
	rep := &Report{Ptool: t.Name, Train: len(s.Train), Validation: len(s.Validation), Sealed: len(s.Sealed),
		MaxWrong: o.MaxWrong, MinCoverage: o.MinCoverage, Types: types}
	defer func() { rep.Duration = time.Since(start) }()
	ws, err := newWorkspace(ctx, &o)
	if err != nil {
		return nil, err
	}
	if o.Keep {
		o.Log("the temporary module is kept in %s", ws.base)
	} else {
		defer ws.remove()
	}
	rep.Confined, rep.Sandbox = ws.exec.Confined(), ws.describe()
	o.Log("sandbox: %s", rep.Sandbox)
	if err := ws.seed(ctx, o.CacheDir, func() error { return ws.warm(ctx, types) }); err != nil {
		return nil, err
	}
	g := newGenerator(o.Model, t, types, s.Train, o.MaxExamples)
	rep.Patterns, err = g.patterns(ctx)
	rep.PatternCalls = o.calls(0, g.calls.take())
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrPatterns, err)
	}
	o.Log("patterns: %d, the first: %s", len(rep.Patterns), rep.Patterns[0].Rule)
	j := &judge{ws: ws, o: o, types: types, splits: s, out: outSchema, patterns: rep.Patterns, shown: g.shown,
		literals: inputLiterals(t.Input, s)}
	feedback := ""
	for n := 1; n <= o.Rounds; n++ {
		began := time.Now()
		o.tell(Event{Kind: EventRound, Round: n, Start: began})
		cand, err := g.code(ctx, rep.Patterns, feedback)
		r := Round{N: n, Code: cand.Code, TestCode: cand.Test, Start: began, Calls: o.calls(n, g.calls.take())}
		if err != nil {
			r.Rejected = "asking for code failed"
			o.ended(&r, began)
			rep.Rounds = append(rep.Rounds, r)
			return rep, fmt.Errorf("distill: round %d: asking for code: %w", n, err)
		}
		if err := j.evaluate(ctx, &r); err != nil {
			// kept, so that the report has the checks that ran
			r.Rejected = "checking it failed"
			o.ended(&r, began)
			rep.Rounds = append(rep.Rounds, r)
			return rep, err
		}
		r.Accepted = r.Rejected == ""
		o.ended(&r, began)
		rep.Rounds = append(rep.Rounds, r)
		if r.Accepted {
			o.Log("round %d: accepted: sealed %s", n, r.Sealed.line())
			rep.Accepted, rep.Code, rep.TestCode = true, r.Code, r.TestCode
			return rep, nil
		}
		o.Log("round %d: rejected: %s", n, r.Rejected)
		feedback = j.feedback(&r)
	}
	return rep, ErrRejected
}

func (s *Score) line() string {
	return fmt.Sprintf("%d inputs: %d correct, %d wrong, %d abstained; coverage %.1f%%, wrong %.1f%%",
		s.Total, s.Correct, s.Wrong, s.Abstained, 100*s.Coverage, 100*s.WrongRate)
}

//go:embed harness/zz_ptk_wrap.go.in
var wrapSource string

//go:embed harness/zz_ptk_harness_test.go.in
var harnessSource string

// warmTimeout is the least time limit of a step of warm.
const warmTimeout = 10 * time.Minute

// warm builds, with no candidate's code, what every candidate needs: the
// allowed packages, the ptool stub, testing and the harness, so that the
// build cache holds them.
func (w *workspace) warm(ctx context.Context, types string) error {
	var imports strings.Builder
	for _, p := range Allowed {
		fmt.Fprintf(&imports, "\t_ %q\n", p)
	}
	files := map[string]string{
		"types.go":               "package distilled\n\n" + types,
		"distilled.go":           "package distilled\n\nimport (\n\t\"context\"\n\n" + imports.String() + ")\n\nfunc ptkDistil(ctx context.Context, in In) (Out, error) {\n\tvar zero Out\n\treturn zero, nil\n}\n",
		"warm_test.go":           "package distilled\n\nimport _ \"testing\"\n",
		"zz_ptk_wrap.go":         wrapSource,
		"zz_ptk_harness_test.go": harnessSource,
	}
	if err := w.reset(); err != nil {
		return err
	}
	for name, text := range files {
		if err := w.write(name, text); err != nil {
			return err
		}
	}
	// Compiling the standard library's packages from nothing takes
	// minutes on a busy machine: the step's limit is ten at least.
	w2 := *w
	w2.timeout = max(w.timeout, warmTimeout)
	for _, args := range [][]string{{"vet", "."}, {"test", "-c", "-o", filepath.Join(w.bin, "ptk.test"), "."}} {
		if r := w2.goCmd(ctx, args...); r.Err != nil {
			return fmt.Errorf("distill: building the build cache (go %s): %v\n%s", args[0], r.Err, capText(r.Output, 2000))
		}
	}
	return nil
}

// judge evaluates the candidates of one distillation.
type judge struct {
	ws       *workspace
	o        Options
	types    string
	splits   Splits
	out      *schema.Schema
	patterns []Pattern
	shown    []Example
	// literals are the strings of the validation and sealed inputs that no
	// training input holds, each with its split.
	literals map[string]string
}

// evaluate screens, compiles, tests and scores a candidate, filling r and
// setting r.Rejected when it fails; an error is the workspace's.
func (j *judge) evaluate(ctx context.Context, r *Round) error {
	if ok, err := j.compile(ctx, r); !ok || err != nil {
		return err
	}
	return j.check(ctx, r)
}

// compile screens the candidate and builds its test binary; it reports
// false, with r.Rejected set, when either fails.
func (j *judge) compile(ctx context.Context, r *Round) (bool, error) {
	log := j.o.Log
	code, test := r.Code, r.TestCode
	if !strings.Contains(code, "package ") {
		code = "package distilled\n\n" + code
	}
	// The screen, before anything compiles.
	screened := j.timed(r, "screen")
	renamed, reasons := prepare(code, test, j.o.noScreen)
	screened(len(reasons) == 0, fmt.Sprintf("%d reason(s) to reject it", len(reasons)), nil)
	if strings.TrimSpace(test) == "" {
		test = "package distilled\n" // only with no screen, in ptk's own tests
	}
	if len(reasons) > 0 {
		r.Screen = reasons
		r.Rejected = "the check before compiling rejected it"
		log("screen: %d reason(s), the first: %s", len(reasons), reasons[0])
		return false, nil
	}
	log("screen: ok")
	r.Flags, r.SealedFlags = j.flags(code)
	if err := j.ws.reset(); err != nil {
		return false, err
	}
	files := map[string]string{
		"types.go":               "package distilled\n\n" + j.types,
		"distilled.go":           renamed,
		"distilled_test.go":      test,
		"zz_ptk_wrap.go":         wrapSource,
		"zz_ptk_harness_test.go": harnessSource,
	}
	for name, text := range files {
		if err := j.ws.write(name, text); err != nil {
			return false, err
		}
	}
	compiled := j.timed(r, "compile")
	vet := j.ws.goCmd(ctx, "vet", ".")
	log("go vet: %s", errText(vet.Err))
	if vet.Err != nil {
		r.Build = "go vet:\n" + vet.Output + errLine(vet)
		r.Rejected = "it does not compile (or go vet fails)"
		compiled(false, "go vet failed", nil)
		return false, nil
	}
	build := j.ws.goCmd(ctx, "test", "-c", "-o", filepath.Join(j.ws.bin, "ptk.test"), ".")
	log("go test -c: %s", errText(build.Err))
	if build.Err != nil {
		r.Build = "go test -c:\n" + build.Output + errLine(build)
		r.Rejected = "it does not compile"
		compiled(false, "go test -c failed", nil)
		return false, nil
	}
	r.Compiled = true
	compiled(true, "go vet and go test -c passed", nil)
	return true, nil
}

// check runs the candidate's tests, watched, and scores it, setting
// r.Rejected when it fails.
func (j *judge) check(ctx context.Context, r *Round) error {
	log := j.o.Log

	// The candidate's tests, watched: which pattern's examples they try.
	pats := make([][]json.RawMessage, len(j.patterns))
	for i, p := range j.patterns {
		for _, n := range p.Examples {
			pats[i] = append(pats[i], j.shown[n-1].Input)
		}
	}
	if err := j.ws.newRunDir(); err != nil {
		return err
	}
	if err := j.writeRun("patterns.json", pats); err != nil {
		return err
	}
	tested := j.timed(r, "tests")
	tests := j.ws.test(ctx, []string{"PTK_DISTILL_PATTERNS=patterns.json", "PTK_DISTILL_COVERAGE=coverage.json"},
		"-test.v", "-test.timeout", j.o.Timeout.String())
	log("the candidate's tests: %s", errText(tests.Err))
	r.TestsPassed = tests.Err == nil
	r.Tests = tests.Output + errLine(tests)
	r.FailedTests = failedTests(tests.Output)
	var cov struct {
		Covered []bool `json:"covered"`
		Calls   int    `json:"calls"`
	}
	if b, err := os.ReadFile(filepath.Join(j.ws.runDir, "coverage.json")); err == nil {
		json.Unmarshal(b, &cov)
	}
	if r.TestsPassed {
		for i := range j.patterns {
			if i >= len(cov.Covered) || !cov.Covered[i] {
				r.Uncovered = append(r.Uncovered, i)
			}
		}
		// Tests that pass when the code always falls back check nothing.
		if len(r.Uncovered) == 0 {
			if err := j.ws.newRunDir(); err != nil {
				return err
			}
			mutant := j.ws.test(ctx, []string{"PTK_DISTILL_MUTANT=1"}, "-test.timeout", j.o.Timeout.String())
			r.Unchecked = mutant.Err == nil
			log("the candidate's tests with a code that always falls back: %s", errText(mutant.Err))
		}
	}

	testsOK := r.TestsPassed && cov.Calls > 0 && len(r.Uncovered) == 0 && !r.Unchecked
	tested(testsOK, fmt.Sprintf("%d failed, %d of %d patterns untried", len(r.FailedTests), len(r.Uncovered), len(j.patterns)),
		map[string]any{"failed": len(r.FailedTests), "uncovered": len(r.Uncovered), "calls": cov.Calls, "unchecked": r.Unchecked})

	// Scored on validation, told to the model; then on the sealed split,
	// in a run of its own, so no state of the validation run reaches it.
	var err error
	validated := j.timed(r, "validation")
	if r.Validation, err = j.score(ctx, j.splits.Validation); err != nil {
		return err
	}
	note, figures := scoreCheck("validation", r.Validation)
	validated(r.Validation.Wrong == 0, note, figures)
	log("validation: %s", r.Validation.line())
	switch {
	case !r.TestsPassed && cov.Calls == 0 && len(r.FailedTests) == 0:
		r.Rejected = "its tests do not run"
	case !r.TestsPassed:
		r.Rejected = "its tests fail"
	case cov.Calls == 0:
		r.Rejected = "its tests never call Distilled"
	case len(r.Uncovered) > 0:
		r.Rejected = fmt.Sprintf("its tests try no example of %d of the %d patterns", len(r.Uncovered), len(j.patterns))
	case r.Unchecked:
		r.Rejected = "its tests do not check the answers: they pass when Distilled always falls back"
	case len(r.Flags) > 0 || r.SealedFlags > 0:
		r.Rejected = fmt.Sprintf("%d of its string literals are inputs, not rules", len(r.Flags)+r.SealedFlags)
	}
	if r.Rejected != "" {
		return nil
	}
	sealed := j.timed(r, "sealed")
	if r.Sealed, err = j.score(ctx, j.splits.Sealed); err != nil {
		return err
	}
	log("sealed: %s", r.Sealed.line())
	switch {
	case r.Sealed.WrongRate > j.o.MaxWrong:
		r.Rejected = fmt.Sprintf("wrong on %.1f%% of the sealed inputs (at most %.1f%% allowed)", 100*r.Sealed.WrongRate, 100*j.o.MaxWrong)
	case r.Sealed.Coverage < j.o.MinCoverage:
		r.Rejected = fmt.Sprintf("it answers %.1f%% of the sealed inputs (at least %.1f%% needed)", 100*r.Sealed.Coverage, 100*j.o.MinCoverage)
	}
	note, figures = scoreCheck("held-out", r.Sealed)
	sealed(r.Rejected == "", note, figures)
	return nil
}

// prepare screens the candidate's files and returns its code with its
// function renamed ptkDistil (the harness's Distilled wraps it), or the
// screen's reasons.
func prepare(code, test string, noScreen bool) (string, []string) {
	var reasons []string
	if !noScreen {
		for _, f := range []struct{ name, src string }{{"distilled.go", code}, {"distilled_test.go", test}} {
			var serr *ScreenError
			if err := Screen(f.name, []byte(f.src)); errors.As(err, &serr) {
				reasons = append(reasons, serr.Reasons...)
			}
		}
		if strings.TrimSpace(test) == "" {
			reasons = append(reasons, "distilled_test.go: there is no test file: write a table test of Distilled")
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "distilled.go", code, parser.SkipObjectResolution)
	if err != nil {
		if len(reasons) == 0 {
			reasons = append(reasons, err.Error())
		}
		return "", reasons
	}
	if f.Name.Name != "distilled" {
		reasons = append(reasons, fmt.Sprintf("distilled.go: the package is %s, not distilled", f.Name.Name))
	}
	if tf, err := parser.ParseFile(fset, "distilled_test.go", test, parser.PackageClauseOnly); err == nil && tf.Name.Name != "distilled" {
		reasons = append(reasons, fmt.Sprintf("distilled_test.go: the package is %s, not distilled (an internal test)", tf.Name.Name))
	}
	var fn *ast.FuncDecl
	for _, d := range f.Decls {
		if d, ok := d.(*ast.FuncDecl); ok && d.Recv == nil && d.Name.Name == "Distilled" {
			fn = d
		}
	}
	if fn == nil {
		reasons = append(reasons, "distilled.go: it declares no func Distilled(ctx context.Context, in In) (Out, error)")
	}
	if len(reasons) > 0 {
		return "", reasons
	}
	// The same length, so the compiler's positions stay the candidate's.
	at := fset.Position(fn.Name.Pos()).Offset
	return code[:at] + "ptkDistil" + code[at+len("Distilled"):], nil
}

// failedTests are the names of the tests go test -v reports failed.
var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

func failedTests(out string) []string {
	var names []string
	for _, m := range failLine.FindAllStringSubmatch(out, 20) {
		name := strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return -1
			}
			return r
		}, m[1])
		if len(name) > 80 {
			name = name[:80] + "..."
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// writeRun writes v as JSON into the run directory, for the sandbox's user.
func (j *judge) writeRun(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	p := filepath.Join(j.ws.runDir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return err
	}
	return os.Chmod(p, 0o644)
}

// score runs the code on the inputs of examples, in runs of their own, and
// judges each answer. A hung input stops a run; it is run again on the
// inputs left, a bounded number of times.
func (j *judge) score(ctx context.Context, examples []Example) (*Score, error) {
	got := map[int]result{}
	var last sandbox.Result
	for restart := 0; restart <= maxRestarts; restart++ {
		var idx []int
		var inputs []json.RawMessage
		for i, e := range examples {
			if _, ok := got[i]; !ok {
				idx = append(idx, i)
				inputs = append(inputs, e.Input)
			}
		}
		if len(idx) == 0 {
			break
		}
		if err := j.ws.newRunDir(); err != nil {
			return nil, err
		}
		if err := j.writeRun("cases.json", inputs); err != nil {
			return nil, err
		}
		last = j.ws.test(ctx, []string{"PTK_DISTILL_CASES=cases.json", "PTK_DISTILL_RESULTS=results.jsonl",
			"PTK_DISTILL_CASE_TIMEOUT=" + j.o.CaseTimeout.String()},
			"-test.run", "^TestPtkDistillScore$", "-test.timeout", j.o.Timeout.String())
		j.o.Log("scoring %d inputs: %s", len(idx), errText(last.Err))
		n := readResults(filepath.Join(j.ws.runDir, "results.jsonl"), idx, got)
		if last.Err == nil || n == 0 || ctx.Err() != nil {
			break
		}
	}
	return score(examples, got, last, j.out), nil
}

// maxRestarts bounds the scoring runs started again after a hung input.
const maxRestarts = 5

// result is the harness's line for one input.
type result struct {
	I        int             `json:"i"`
	Out      json.RawMessage `json:"out"`
	Fallback bool            `json:"fallback"`
	Error    string          `json:"error"`
	Kind     string          `json:"kind"`
}

// readResults adds the results of file to got, idx mapping the run's
// inputs to the split's; it returns how many it read.
func readResults(file string, idx []int, got map[int]result) int {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var r result
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.I >= 0 && r.I < len(idx) {
			r.I = idx[r.I]
			got[r.I] = r
			n++
		}
	}
	return n
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func errLine(s sandbox.Result) string {
	if s.Err == nil {
		return ""
	}
	return "\n" + s.Err.Error()
}

// score judges each answer.
func score(examples []Example, got map[int]result, run sandbox.Result, out *schema.Schema) *Score {
	s := &Score{Total: len(examples)}
	for i, e := range examples {
		c := Case{Input: e.Input, Want: e.Output}
		r, ok := got[i]
		switch {
		case !ok:
			c.Verdict = Wrong
			c.Error = "not answered: the scoring run stopped before this input"
			if run.Err != nil {
				c.Error += " (" + run.Err.Error() + ")"
			}
		case r.Fallback:
			c.Verdict = Abstained
		case r.Error != "":
			c.Verdict, c.Error = Wrong, r.Error
		default:
			c.Got = r.Out
			if string(r.Out) == "null" {
				if b := bytes.TrimSpace(e.Output); len(b) > 0 && (b[0] == '[' || b[0] == '{') {
					c.Got = json.RawMessage(b[:1])
					c.Got = append(c.Got, map[byte]byte{'[': ']', '{': '}'}[b[0]])
				}
			}
			c.Verdict, c.Error = scorer.Judge(out, e.Output, c.Got) // the scorer ptk ptool eval shares
		}
		switch c.Verdict {
		case Correct:
			s.Correct++
		case Abstained:
			s.Abstained++
		default:
			s.Wrong++
			s.WrongCases = append(s.WrongCases, c)
		}
	}
	if s.Total > 0 {
		s.Coverage = float64(s.Correct+s.Wrong) / float64(s.Total)
		s.WrongRate = float64(s.Wrong) / float64(s.Total)
	}
	return s
}

// inputLiterals returns the strings of the validation and sealed inputs
// that are no training input's, no value the input schema enumerates, and
// four bytes long at least, each with its split: a candidate that holds one
// as a literal lists inputs instead of following a rule.
func inputLiterals(inSchema json.RawMessage, s Splits) map[string]string {
	common := map[string]bool{}
	for _, e := range s.Train {
		walkStrings(e.Input, func(v string) { common[v] = true })
	}
	for _, v := range schemaEnums(inSchema) {
		common[v] = true
	}
	lits := map[string]string{}
	for _, split := range []struct {
		name string
		ex   []Example
	}{{"sealed", s.Sealed}, {"validation", s.Validation}} {
		for _, e := range split.ex {
			var compact bytes.Buffer
			if json.Compact(&compact, e.Input) == nil {
				lits[compact.String()] = split.name
			}
			walkStrings(e.Input, func(v string) {
				if len(v) >= 4 && !common[v] {
					lits[v] = split.name
				}
			})
		}
	}
	return lits
}

// walkStrings calls f with each string in the JSON value raw.
func walkStrings(raw json.RawMessage, f func(string)) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			f(v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
}

// schemaEnums returns the string values enumerated anywhere in a schema.
func schemaEnums(raw json.RawMessage) []string {
	var out []string
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if k == "enum" {
					if vals, ok := e.([]any); ok {
						for _, x := range vals {
							if s, ok := x.(string); ok {
								out = append(out, s)
							}
						}
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// flags returns the string literals of code equal to validation inputs
// (which the model may have been told), and how many equal sealed ones.
func (j *judge) flags(code string) (validation []string, sealed int) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "distilled.go", code, parser.SkipObjectResolution)
	if err != nil {
		return nil, 0
	}
	seen := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil || seen[v] {
			return true
		}
		seen[v] = true
		switch j.literals[v] {
		case "validation":
			validation = append(validation, strconv.Quote(v))
		case "sealed":
			sealed++
		}
		return true
	})
	sort.Strings(validation)
	return validation, sealed
}

// feedback is what the model is told about a rejected round: the screen's
// reasons, the compiler's output, the names of failing tests, the patterns
// the tests miss, the literals that are inputs, and per-case summaries of
// the validation split. Never a sealed input, and never the raw output of
// the tests.
func (j *judge) feedback(r *Round) string {
	type uncovered struct{ Rule, Example string }
	type wrongCase struct{ Input, Want, Got, Error string }
	type validation struct {
		Line  string
		Cases []wrongCase
		More  int
		None  bool
	}
	d := struct {
		Rejected    string
		Screen      []string
		Build       string
		FailedTests []string
		Uncovered   []uncovered
		Mutant      bool
		Flags       []string
		SealedFlags int
		Validation  *validation
		Sealed      string
	}{Rejected: r.Rejected, Screen: r.Screen, FailedTests: r.FailedTests, Mutant: r.Unchecked,
		Flags: r.Flags, SealedFlags: r.SealedFlags}
	if !r.Compiled && r.Build != "" {
		d.Build = capText(r.Build, 4000)
	}
	for _, i := range r.Uncovered {
		p := j.patterns[i]
		d.Uncovered = append(d.Uncovered, uncovered{Rule: p.Rule, Example: string(j.shown[p.Examples[0]-1].Input)})
	}
	if v := r.Validation; v != nil {
		d.Validation = &validation{Line: v.line(), None: v.Coverage == 0}
		for i, c := range v.WrongCases {
			if i == 10 {
				d.Validation.More = len(v.WrongCases) - 10
				break
			}
			d.Validation.Cases = append(d.Validation.Cases, wrongCase{Input: capText(string(c.Input), 500), Want: capText(string(c.Want), 300),
				Got: capText(string(c.Got), 300), Error: capText(visible(firstLine(c.Error)), 200)})
		}
	}
	if s := r.Sealed; s != nil {
		// Which way the sealed split failed, and no number: what the model
		// learns of it is one bit a round.
		d.Rejected = "the gate on the sealed inputs, which you are never shown, rejected it"
		if s.WrongRate > j.o.MaxWrong {
			d.Sealed = "On the sealed inputs it answered wrongly too often: leave to the model (ptool.ErrFallback) what no rule of the examples decides."
		} else {
			d.Sealed = "On the sealed inputs it answered too few: answer the inputs whose pattern is clear."
		}
	}
	return render("feedback.tmpl", d)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
