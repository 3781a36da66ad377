package distill

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	scorer "github.com/ptkit/ptk/ptool/score"
	"github.com/ptkit/ptk/schema"
	"github.com/ptkit/ptk/trace"
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

// Example is one stored call: an input and the output the ptool gave.
type Example struct {
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

// Split turns a ptool's stored calls into training and held-out examples:
// failed calls and calls without an output are left out, calls with equal
// inputs (by Equal) count once (the first kept), and the rest is shuffled
// with seed before the held-out share (0 to 1) is set apart.
func Split(calls []trace.PtoolCall, heldOut float64, seed int64) (train, held []Example) {
	var all []Example
	seen := map[string]bool{}
	for _, c := range calls {
		if c.IsError || len(c.Output) == 0 || !json.Valid(c.Output) {
			continue
		}
		key, ok := canonical(c.Input)
		if !ok || seen[key] {
			continue
		}
		seen[key] = true
		all = append(all, Example{Input: c.Input, Output: c.Output})
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	n := int(float64(len(all))*heldOut + 0.5)
	if heldOut > 0 && n == 0 && len(all) > 1 {
		n = 1
	}
	return all[n:], all[:n]
}

// Options tune a distillation. The zero value of each field is its
// default.
type Options struct {
	// Model writes the code (required).
	Model llm.Model
	// Rounds is the most candidates asked for (default 3).
	Rounds int
	// MaxWrong is the largest share of held-out inputs the code may answer
	// wrongly (default 0.02); MinCoverage the smallest share it must
	// answer (default 0.30). Set MaxWrong negative for zero tolerance.
	MaxWrong, MinCoverage float64
	// Timeout limits each step: go vet, building the tests, running the
	// candidate's tests, scoring (default 2 minutes). CaseTimeout limits
	// the code on one held-out input (default 2 s).
	Timeout, CaseTimeout time.Duration
	// Module is the directory of the ptk module the candidate is built
	// against (required).
	Module string
	// WorkDir is where the temporary module is made (default the system's
	// temporary directory); Keep leaves it there.
	WorkDir string
	Keep    bool
	// NoSandbox runs the candidate without bubblewrap even when it is
	// installed.
	NoSandbox bool
	// MaxExamples caps the training examples shown to the model (default
	// 80).
	MaxExamples int
	// Log, when set, receives a line as each step ends.
	Log func(format string, args ...any)
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
	if o.MaxExamples <= 0 {
		o.MaxExamples = 80
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
}

// The verdicts on a held-out input.
const (
	Correct   = "correct"   // the code's answer equals the stored one
	Wrong     = "wrong"     // it differs, or the code failed, panicked or hung
	Abstained = "abstained" // the code returned ptool.ErrFallback
)

// Case is the code's answer to one held-out input.
type Case struct {
	Input   json.RawMessage `json:"input"`
	Want    json.RawMessage `json:"want"`
	Got     json.RawMessage `json:"got,omitempty"`
	Verdict string          `json:"verdict"`
	Error   string          `json:"error,omitempty"`
}

// Score is a candidate's result on the held-out inputs. Coverage is the
// share the code answered (correctly or not); WrongRate the share it
// answered wrongly, over all held-out inputs: the model answers the others,
// as it did when they were stored. A fallback is never counted correct.
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

// Round is one candidate: its code and what became of it.
type Round struct {
	N    int    `json:"round"`
	Code string `json:"code"`
	Test string `json:"test"`
	// Compiled reports that go vet and the test build passed; Build holds
	// their output when they did not.
	Compiled bool   `json:"compiled"`
	Build    string `json:"build,omitempty"`
	// TestsPassed reports the candidate's own tests; Tests their output.
	TestsPassed bool   `json:"tests_passed"`
	Tests       string `json:"tests,omitempty"`
	Score       *Score `json:"score,omitempty"`
	Accepted    bool   `json:"accepted"`
	// Rejected says why it was not accepted.
	Rejected string `json:"rejected,omitempty"`
}

// Report is what a distillation did.
type Report struct {
	Ptool       string  `json:"ptool"`
	Train       int     `json:"train"`
	HeldOut     int     `json:"held_out"`
	MaxWrong    float64 `json:"max_wrong"`
	MinCoverage float64 `json:"min_coverage"`
	// Sandbox says how the candidates' code was confined.
	Sandbox  string  `json:"sandbox"`
	Patterns string  `json:"patterns"`
	Rounds   []Round `json:"rounds"`
	Accepted bool    `json:"accepted"`
	// Types are the Go types In and Out; Code and Test the accepted
	// candidate's (empty when none was).
	Types    string        `json:"types"`
	Code     string        `json:"code,omitempty"`
	Test     string        `json:"test,omitempty"`
	Duration time.Duration `json:"duration_ns"`
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

// Run asks the model for code that answers as the ptool did on train,
// compiles and tests each candidate for real and scores it on held,
// feeding back what went wrong, for at most Options.Rounds candidates. It
// returns the report, with ErrRejected when no candidate passed; other
// errors (the model's, the file system's) stop it.
func Run(ctx context.Context, t Target, train, held []Example, o Options) (*Report, error) {
	o.defaults()
	start := time.Now()
	if o.Model == nil {
		return nil, errors.New("distill: no model")
	}
	if len(held) == 0 || len(train) == 0 {
		return nil, fmt.Errorf("distill: %s: %d training and %d held-out examples: both are needed", t.Name, len(train), len(held))
	}
	types, err := GoTypes(t.Input, t.Output)
	if err != nil {
		return nil, err
	}
	rep := &Report{Ptool: t.Name, Train: len(train), HeldOut: len(held), MaxWrong: o.MaxWrong,
		MinCoverage: o.MinCoverage, Types: types}
	defer func() { rep.Duration = time.Since(start) }()
	ws, err := newWorkspace(o.WorkDir, o.Module, o.Timeout, !o.NoSandbox)
	if err != nil {
		return nil, err
	}
	if !o.Keep {
		defer ws.remove()
	}
	rep.Sandbox = ws.Sandboxed()
	outSchema, err := schema.Compile(t.Output)
	if err != nil {
		return nil, fmt.Errorf("distill: %s's output schema: %w", t.Name, err)
	}
	g := newGenerator(o.Model, t, types, train, o.MaxExamples)
	if rep.Patterns, err = g.patterns(ctx); err != nil {
		return rep, fmt.Errorf("distill: asking for the patterns: %w", err)
	}
	o.Log("patterns: %s", firstLine(rep.Patterns))
	feedback := ""
	for n := 1; n <= o.Rounds; n++ {
		cand, err := g.code(ctx, rep.Patterns, feedback)
		if err != nil {
			return rep, fmt.Errorf("distill: round %d: asking for code: %w", n, err)
		}
		r := Round{N: n, Code: cand.Code, Test: cand.Test}
		if err := evaluate(ctx, ws, &r, types, held, outSchema, o); err != nil {
			return rep, err
		}
		r.Rejected = gate(&r, o)
		r.Accepted = r.Rejected == ""
		rep.Rounds = append(rep.Rounds, r)
		if r.Accepted {
			o.Log("round %d: accepted: %s", n, r.Score.line())
			rep.Accepted, rep.Code, rep.Test = true, r.Code, r.Test
			return rep, nil
		}
		o.Log("round %d: rejected: %s", n, r.Rejected)
		feedback = feedbackText(&r)
	}
	return rep, ErrRejected
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func (s *Score) line() string {
	return fmt.Sprintf("%d held-out inputs: %d correct, %d wrong, %d abstained; coverage %.1f%%, wrong %.1f%%",
		s.Total, s.Correct, s.Wrong, s.Abstained, 100*s.Coverage, 100*s.WrongRate)
}

// gate returns why a round is rejected, or "" when it passes.
func gate(r *Round, o Options) string {
	switch {
	case !r.Compiled:
		return "it does not compile (or go vet fails)"
	case !r.TestsPassed:
		return "its tests fail"
	case r.Score == nil:
		return "it was not scored"
	case r.Score.WrongRate > o.MaxWrong:
		return fmt.Sprintf("wrong on %.1f%% of the held-out inputs (at most %.1f%% allowed)", 100*r.Score.WrongRate, 100*o.MaxWrong)
	case r.Score.Coverage < o.MinCoverage:
		return fmt.Sprintf("it answers %.1f%% of the held-out inputs (at least %.1f%% needed)", 100*r.Score.Coverage, 100*o.MinCoverage)
	}
	return ""
}

// harness scores the candidate: it runs the code on each held-out input,
// each in its own time limit, and writes one JSON line per input as soon as
// it has it, so that a binary stopped from outside still says how far it got.
const harness = `package distilled

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ptkit/ptk/ptool"
)

func TestPtkDistillHeldOut(t *testing.T) {
	cases, results := os.Getenv("PTK_DISTILL_CASES"), os.Getenv("PTK_DISTILL_RESULTS")
	if cases == "" {
		t.Skip("not scoring")
	}
	data, err := os.ReadFile(cases)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []json.RawMessage
	if err := json.Unmarshal(data, &inputs); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(results)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	limit, _ := time.ParseDuration(os.Getenv("PTK_DISTILL_CASE_TIMEOUT"))
	type result struct {
		I        int             ` + "`json:\"i\"`" + `
		Out      json.RawMessage ` + "`json:\"out,omitempty\"`" + `
		Fallback bool            ` + "`json:\"fallback,omitempty\"`" + `
		Error    string          ` + "`json:\"error,omitempty\"`" + `
	}
	for i, raw := range inputs {
		r := result{I: i}
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			r.Error = "the input does not decode into In: " + err.Error()
		} else {
			done := make(chan result, 1)
			go func() {
				r := result{I: i}
				defer func() {
					if p := recover(); p != nil {
						r.Error = fmt.Sprintf("panic: %v", p)
						done <- r
					}
				}()
				ctx, cancel := context.WithTimeout(context.Background(), limit)
				defer cancel()
				out, err := Distilled(ctx, in)
				switch {
				case errors.Is(err, ptool.ErrFallback):
					r.Fallback = true
				case err != nil:
					r.Error = err.Error()
				default:
					b, err := json.Marshal(out)
					if err != nil {
						r.Error = "the output does not encode: " + err.Error()
					}
					r.Out = b
				}
				done <- r
			}()
			select {
			case r = <-done:
			case <-time.After(limit + limit/2):
				r.Error = fmt.Sprintf("no answer within %s: stopped", limit)
				b, _ := json.Marshal(r)
				f.Write(append(b, '\n'))
				f.Close()
				os.Exit(3)
			}
		}
		b, _ := json.Marshal(r)
		if _, err := f.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
}
`

// evaluate compiles, tests and scores a candidate in the workspace.
func evaluate(ctx context.Context, ws *workspace, r *Round, types string, held []Example, out *schema.Schema, o Options) error {
	code := r.Code
	if !strings.Contains(code, "package ") {
		code = "package distilled\n\n" + code
	}
	files := map[string]string{
		"types.go":                       "package distilled\n\n" + types,
		"distilled.go":                   code,
		"distilled_test.go":              r.Test,
		"zz_ptk_distill_harness_test.go": harness,
	}
	if strings.TrimSpace(r.Test) == "" {
		files["distilled_test.go"] = "package distilled\n"
	}
	for name, text := range files {
		if err := ws.write(name, text); err != nil {
			return err
		}
	}
	os.Remove(filepath.Join(ws.dir, "ptk.test"))
	vet := ws.run(ctx, true, nil, "go", "vet", ".")
	o.Log("go vet: %v", errText(vet.Err))
	if vet.Err != nil {
		r.Build = "go vet:\n" + vet.Output + errLine(vet)
		return nil
	}
	build := ws.run(ctx, true, nil, "go", "test", "-c", "-o", "ptk.test", ".")
	o.Log("go test -c: %v", errText(build.Err))
	if build.Err != nil {
		r.Build = "go test -c:\n" + build.Output + errLine(build)
		return nil
	}
	r.Compiled = true
	tests := ws.run(ctx, false, nil, "./ptk.test", "-test.v", "-test.timeout", o.Timeout.String())
	o.Log("the candidate's tests: %v", errText(tests.Err))
	r.TestsPassed = tests.Err == nil
	r.Tests = tests.Output + errLine(tests)
	// A hung input stops the scoring run; it is run again on the inputs
	// left, a bounded number of times.
	got := map[int]result{}
	var last stepResult
	for restart := 0; restart <= maxRestarts; restart++ {
		var idx []int
		var inputs []json.RawMessage
		for i, e := range held {
			if _, ok := got[i]; !ok {
				idx = append(idx, i)
				inputs = append(inputs, e.Input)
			}
		}
		if len(idx) == 0 {
			break
		}
		data, _ := json.Marshal(inputs)
		if err := ws.write("heldout.json", string(data)); err != nil {
			return err
		}
		resultsFile := filepath.Join(ws.dir, "results.jsonl")
		os.Remove(resultsFile)
		last = ws.run(ctx, false, []string{"PTK_DISTILL_CASES=" + filepath.Join(ws.dir, "heldout.json"),
			"PTK_DISTILL_RESULTS=" + resultsFile, "PTK_DISTILL_CASE_TIMEOUT=" + o.CaseTimeout.String()},
			"./ptk.test", "-test.run", "^TestPtkDistillHeldOut$", "-test.timeout", o.Timeout.String())
		o.Log("scoring %d inputs: %v", len(idx), errText(last.Err))
		n := readResults(resultsFile, idx, got)
		if last.Err == nil || n == 0 || ctx.Err() != nil {
			break
		}
	}
	r.Score = score(held, got, last, out)
	return nil
}

// maxRestarts bounds the scoring runs started again after a hung input.
const maxRestarts = 5

// result is the harness's line for one input.
type result struct {
	I        int             `json:"i"`
	Out      json.RawMessage `json:"out"`
	Fallback bool            `json:"fallback"`
	Error    string          `json:"error"`
}

// readResults adds the results of file to got, idx mapping the run's
// inputs to the held-out ones; it returns how many it read.
func readResults(file string, idx []int, got map[int]result) int {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
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

func errLine(s stepResult) string {
	if s.Err == nil {
		return ""
	}
	return "\n" + s.Err.Error()
}

// score reads the harness's results and judges each held-out input.
func score(held []Example, got map[int]result, run stepResult, out *schema.Schema) *Score {
	s := &Score{Total: len(held)}
	for i, e := range held {
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

// feedbackText is what the model is told about a rejected round.
func feedbackText(r *Round) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your previous code was rejected: %s.\n", r.Rejected)
	if !r.Compiled {
		fmt.Fprintf(&b, "\nThe compiler and go vet said:\n%s\n", capText(r.Build, 4000))
	} else if !r.TestsPassed {
		fmt.Fprintf(&b, "\nThe tests said:\n%s\n", capText(r.Tests, 4000))
	}
	if r.Score != nil {
		fmt.Fprintf(&b, "\nOn held-out inputs: %s.\n", r.Score.line())
		cases := r.Score.WrongCases
		for i, c := range cases {
			if i == 10 {
				fmt.Fprintf(&b, "... and %d more wrong.\n", len(cases)-10)
				break
			}
			fmt.Fprintf(&b, "- input %s: expected %s", c.Input, c.Want)
			if c.Got != nil {
				fmt.Fprintf(&b, ", got %s", c.Got)
			}
			if c.Error != "" {
				fmt.Fprintf(&b, " (%s)", c.Error)
			}
			b.WriteString("\n")
		}
		if r.Score.Coverage == 0 {
			b.WriteString("The code answered no input: falling back on everything is not a solution. Answer the inputs whose pattern is clear.\n")
		}
	}
	b.WriteString("\nWrite the whole file again, corrected. Return ptool.ErrFallback for any input you are not sure of: a fallback costs a model call, a wrong answer is a bug.")
	return b.String()
}
