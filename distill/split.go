package distill

import (
	"encoding/json"
	"math/rand/v2"

	"github.com/ptkit/ptk/trace"
)

// Example is one stored call: an input and the output the ptool gave.
type Example struct {
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

// Splits are a ptool's stored calls set apart three ways. Train is shown to
// the model; Validation scores each candidate, and the model is told which
// of its inputs the candidate got wrong; Sealed is never shown in any
// prompt or feedback, and the gate decides on it alone, so that a candidate
// tuned to what the model was told is judged on inputs it was not.
type Splits struct {
	Train      []Example `json:"train"`
	Validation []Example `json:"validation"`
	Sealed     []Example `json:"sealed"`
}

// Split sets a ptool's stored calls apart: failed calls, calls without an
// output and calls that distilled code answered (Source "code": training
// on them would teach the code its own answers) are left out; calls with
// equal inputs (by Equal) count once, the first kept; the rest is shuffled
// with seed, then the sealed share (0 to 1) is set apart, then the
// validation share, and the rest is for training. A share above 0 gets at
// least one call when there are three or more.
func Split(calls []trace.PtoolCall, validation, sealed float64, seed int64) Splits {
	var all []Example
	seen := map[string]bool{}
	for _, c := range calls {
		if c.IsError || len(c.Output) == 0 || !json.Valid(c.Output) || !modelAnswered(c) {
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
	share := func(f float64) int {
		n := int(float64(len(all))*f + 0.5)
		if f > 0 && n == 0 && len(all) >= 3 {
			n = 1
		}
		return n
	}
	ns, nv := share(sealed), share(validation)
	if ns+nv > len(all) {
		nv = max(len(all)-ns, 0)
	}
	return Splits{Sealed: all[:ns], Validation: all[ns : ns+nv], Train: all[ns+nv:]}
}

// modelAnswered reports whether a model gave the call's output: a ptool's
// call, or a distilled function's that fell back. Calls stored before the
// source was recorded have none, and were a model's.
func modelAnswered(c trace.PtoolCall) bool {
	return c.Source == "" || c.Source == "model"
}
