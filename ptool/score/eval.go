package score

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/schema"
)

// ReadDataset reads a dataset: JSON lines, or one JSON array, of cases
// {"input": {…}, "output": …} ("expected" is read as "output"). Blank lines
// are skipped; a case without an input or an output is an error that says
// which.
func ReadDataset(r io.Reader) ([]ptk.Example, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	type entry struct {
		Input    json.RawMessage `json:"input"`
		Output   json.RawMessage `json:"output"`
		Expected json.RawMessage `json:"expected"`
	}
	var entries []entry
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, &entries); err != nil {
			return nil, fmt.Errorf("the dataset: %w", err)
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var e entry
			if err := json.Unmarshal(line, &e); err != nil {
				return nil, fmt.Errorf("the dataset, line %d: %w", n, err)
			}
			entries = append(entries, e)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]ptk.Example, len(entries))
	for i, e := range entries {
		if e.Output == nil {
			e.Output = e.Expected
		}
		if len(e.Input) == 0 || len(e.Output) == 0 {
			return nil, fmt.Errorf("the dataset, case %d: it needs an input and an output", i+1)
		}
		out[i] = ptk.Example{Input: e.Input, Output: e.Output}
	}
	return out, nil
}

// Target is what is evaluated: a ptool with one model (and its options).
type Target struct {
	// Name names it in the report: the model's name, say.
	Name string
	// Call calls the ptool, as ptool.JSONCaller does.
	Call func(ctx context.Context, input json.RawMessage) (json.RawMessage, *ptool.Record, error)
}

// JudgeFunc judges an answer that is not the one wanted: whether it is
// acceptable all the same, and why. A judge ptool is one (see
// JudgePTool).
type JudgeFunc func(ctx context.Context, input, want, got json.RawMessage) (pass bool, why string, err error)

// Options tune Evaluate.
type Options struct {
	// Judge, when set, judges the answers that are not exactly right: the
	// judge metric counts the correct ones and those it accepts.
	Judge JudgeFunc
	// Concurrency bounds the cases called at once (default 4).
	Concurrency int
	// MaxDiffs bounds the lines of each wrong case's Diff (default 10).
	MaxDiffs int
}

// The metrics a threshold may apply to (Result.Metric).
const (
	MetricExact = "exact" // correct answers over all cases
	MetricValid = "valid" // answers that fit the schema and passed the checks
	MetricJudge = "judge" // correct answers and those the judge accepts
)

// Report is what Evaluate found: one Result per target.
type Report struct {
	PTool   string   `json:"ptool"`
	Cases   int      `json:"cases"`
	Results []Result `json:"results"`
}

// Result is one target's score on the dataset.
type Result struct {
	Name  string `json:"name"`
	Total int    `json:"total"`
	// Correct, Wrong and Abstained count the verdicts (Judge); Failed the
	// calls that ended in an error (no valid answer within the attempts, a
	// provider's error), which count as wrong too.
	Correct   int `json:"correct"`
	Wrong     int `json:"wrong"`
	Abstained int `json:"abstained"`
	Failed    int `json:"failed"`
	// Exact is Correct over Total.
	Exact float64 `json:"exact"`
	// Valid is the share of calls that answered (an output that fits the
	// schema and passes the ptool's checks); FirstTry the share that did
	// on their first attempt; ChecksFailed counts the calls where an
	// attempt failed the ptool's checks.
	Valid        float64 `json:"valid"`
	FirstTry     float64 `json:"first_try"`
	ChecksFailed int     `json:"checks_failed"`
	// Judged is the judge metric (nil without a judge).
	Judged *float64 `json:"judge,omitempty"`
	// Attempts, Usage and Cost sum the calls'; latency is per call.
	Attempts   int       `json:"attempts"`
	Usage      ptk.Usage `json:"usage"`
	Cost       float64   `json:"cost"`
	LatencyP50 ms        `json:"latency_p50_ms"`
	LatencyP95 ms        `json:"latency_p95_ms"`
	Cases      []Case    `json:"cases"`
}

// Case is one case's result.
type Case struct {
	Index   int             `json:"index"`
	Input   json.RawMessage `json:"input"`
	Want    json.RawMessage `json:"want"`
	Got     json.RawMessage `json:"got,omitempty"`
	Verdict string          `json:"verdict"`
	// Error says why a call failed, or why its answer is wrong when it
	// does not fit; Diff where a wrong answer differs.
	Error string   `json:"error,omitempty"`
	Diff  []string `json:"diff,omitempty"`
	// Judge is the judge's word on a wrong answer.
	Judge    *Judgement `json:"judge,omitempty"`
	Attempts int        `json:"attempts"`
	Cost     float64    `json:"cost"`
	Latency  ms         `json:"latency_ms"`
}

// Judgement is a judge's word on an answer.
type Judgement struct {
	Pass bool   `json:"pass"`
	Why  string `json:"why,omitempty"`
	// Error is the judge's own failure (the answer is then not accepted).
	Error string `json:"error,omitempty"`
}

// ms is a duration that reads as milliseconds in JSON.
type ms time.Duration

func (d ms) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprint(float64(d) / float64(time.Millisecond))), nil
}

// Metric returns the result's value of a metric (exact, valid or judge),
// and false for a metric it has not (judge without a judge, or unknown).
func (r *Result) Metric(name string) (float64, bool) {
	switch name {
	case MetricExact:
		return r.Exact, true
	case MetricValid:
		return r.Valid, true
	case MetricJudge:
		if r.Judged != nil {
			return *r.Judged, true
		}
	}
	return 0, false
}

// Evaluate calls each target on every case and scores its answers against
// the outputs wanted, by Judge (the scorer the distiller's gate uses): it
// returns the report, filled in as far as it got, and ctx's error when it
// was canceled.
func Evaluate(ctx context.Context, spec *ptool.Spec, cases []ptk.Example, targets []Target, o Options) (*Report, error) {
	out, err := schema.Compile(spec.Output)
	if err != nil {
		return nil, fmt.Errorf("score: the output schema: %w", err)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.MaxDiffs <= 0 {
		o.MaxDiffs = 10
	}
	rep := &Report{PTool: spec.Name, Cases: len(cases), Results: []Result{}}
	for _, t := range targets {
		res := Result{Name: t.Name, Total: len(cases), Cases: make([]Case, len(cases))}
		recs := make([]*ptool.Record, len(cases))
		sem := make(chan struct{}, o.Concurrency)
		var wg sync.WaitGroup
		for i, c := range cases {
			if ctx.Err() != nil {
				break
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				res.Cases[i], recs[i] = run(ctx, t, i, c, out, o)
			})
		}
		wg.Wait()
		res.sum(o.Judge != nil)
		res.fold(recs)
		rep.Results = append(rep.Results, res)
		if err := ctx.Err(); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// run calls a target on one case and judges its answer.
func run(ctx context.Context, t Target, i int, c ptk.Example, out *schema.Schema, o Options) (Case, *ptool.Record) {
	cs := Case{Index: i, Input: c.Input, Want: c.Output}
	start := time.Now()
	got, rec, err := t.Call(ctx, c.Input)
	cs.Latency = ms(time.Since(start))
	if rec != nil {
		cs.Attempts, cs.Cost, cs.Latency = len(rec.Attempts), rec.Cost, ms(rec.Latency)
	}
	switch {
	case errors.Is(err, ptool.ErrAbstained):
		cs.Verdict, cs.Error = Abstained, err.Error()
		return cs, rec
	case err != nil:
		cs.Verdict, cs.Error = Wrong, err.Error()
		return cs, rec
	}
	cs.Got = got
	cs.Verdict, cs.Error = Judge(out, c.Output, got)
	if cs.Verdict == Wrong {
		cs.Diff = Diff(c.Output, got, o.MaxDiffs)
		if o.Judge != nil && cs.Error == "" {
			pass, why, err := o.Judge(ctx, c.Input, c.Output, got)
			cs.Judge = &Judgement{Pass: pass && err == nil, Why: why}
			if err != nil {
				cs.Judge.Error = err.Error()
			}
		}
	}
	return cs, rec
}

// JudgePTool makes a judge of a ptool (an LLM as a judge) whose input is
// {"input": …, "expected": …, "output": …} and whose output is a boolean,
// or an object whose "pass" (or "correct") is one, with an optional
// "reason".
func JudgePTool(j ptool.JSONCaller) JudgeFunc {
	return func(ctx context.Context, input, want, got json.RawMessage) (bool, string, error) {
		in, _ := json.Marshal(map[string]json.RawMessage{"input": input, "expected": want, "output": got})
		out, _, err := j.CallJSON(ctx, in)
		if err != nil {
			return false, "", err
		}
		var pass bool
		if json.Unmarshal(out, &pass) == nil {
			return pass, "", nil
		}
		var v struct {
			Pass    *bool  `json:"pass"`
			Correct *bool  `json:"correct"`
			Reason  string `json:"reason"`
		}
		if json.Unmarshal(out, &v) != nil || v.Pass == nil && v.Correct == nil {
			return false, "", fmt.Errorf("the judge's answer %s is neither a boolean nor an object with \"pass\"", out)
		}
		if v.Pass != nil {
			return *v.Pass, v.Reason, nil
		}
		return *v.Correct, v.Reason, nil
	}
}

// sum fills in a result's counts and metrics from its cases.
func (r *Result) sum(judged bool) {
	var lat []time.Duration
	var accepted int
	for _, c := range r.Cases {
		if c.Verdict == "" {
			continue // not run: canceled
		}
		switch c.Verdict {
		case Correct:
			r.Correct++
			accepted++
		case Abstained:
			r.Abstained++
		default:
			r.Wrong++
			if c.Got == nil {
				r.Failed++
			}
			if c.Judge != nil && c.Judge.Pass {
				accepted++
			}
		}
		r.Attempts += c.Attempts
		r.Cost += c.Cost
		lat = append(lat, time.Duration(c.Latency))
	}
	if r.Total == 0 {
		return
	}
	n := float64(r.Total)
	r.Exact = float64(r.Correct) / n
	if judged {
		j := float64(accepted) / n
		r.Judged = &j
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		r.LatencyP50 = ms(lat[int(0.5*float64(len(lat)-1))])
		r.LatencyP95 = ms(lat[int(0.95*float64(len(lat)-1))])
	}
}

// fold adds what the calls' records say to a result: validity on the
// first attempt and in the end, the checks that failed, tokens.
func (r *Result) fold(recs []*ptool.Record) {
	var valid, first int
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		r.Usage = r.Usage.Add(rec.Usage)
		if rec.Output != nil {
			valid++
			if len(rec.Attempts) == 1 {
				first++
			}
		}
		for _, a := range rec.Attempts {
			if slices.ContainsFunc(a.Problems, func(p string) bool { return strings.HasPrefix(p, "check: ") || strings.HasPrefix(p, "try again: ") }) {
				r.ChecksFailed++
				break
			}
		}
	}
	if r.Total > 0 {
		r.Valid, r.FirstTry = float64(valid)/float64(r.Total), float64(first)/float64(r.Total)
	}
}
