// Package distill turns a ptool's stored calls into plain Go code that
// answers the same way, with the model kept as the fallback for what the
// code is not sure of (ptool.Distill). The code is a model's, so it is
// treated as hostile from the first byte to the file written.
//
// Split sets a ptool's stored calls (trace.Store.Examples) apart three
// ways, at random with a seed: those a model answered only (never the
// distilled code's own answers), each input once. The training split is
// shown to the model; the validation split scores each candidate, and the
// model is told which validation inputs it got wrong; the sealed split is
// never in any prompt or feedback, and the gate decides on it alone, so
// that a candidate tuned to what the model was told is judged on inputs it
// was not.
//
// Run shows a model the ptool's signature, doc and the training examples,
// numbered; asks it for the patterns it sees, each with the numbers of its
// examples; then asks it to write
//
//	func Distilled(ctx context.Context, in In) (Out, error)
//
// returning ptool.ErrFallback whenever it is not sure, with a table test.
// In and Out are Go types generated from the ptool's schemas (GoTypes).
//
// Each candidate then passes, in order:
//
//  1. Screen, a go/ast check before anything compiles: imports from the
//     Allowed list only, no cgo, unsafe, init, go statement, //go:
//     directive, assignment to another package's variable, or
//     package-level code run at start-up. Its reasons go back to the model.
//  2. The build: go vet and go test -c in a temporary module, against a
//     stub of ptool declaring ErrFallback, inside the sandbox
//     (internal/sandbox: bubblewrap, nobody without capabilities, no
//     network, only GOROOT, the module and a build cache of its own, a
//     copy of a seed built once from no candidate's code), with GOENV=off
//     and ptk's own GOFLAGS. Without bubblewrap Run refuses (ErrNoSandbox)
//     unless Options.NoSandbox.
//  3. Its own tests, in the sandbox with only the test binary, watched:
//     they must try an example of every pattern and fail when Distilled is
//     made to always fall back.
//  4. String literals equal to validation or sealed inputs reject it.
//  5. Scoring on the validation split, then, in a run of its own, on the
//     sealed split, each input under a time limit: correct (equal to the
//     stored output by Equal), wrong (different, an error, a panic, a
//     hang, an answer outside the output schema) or abstained. The gate
//     accepts when, on the sealed split, the wrong answers are at most
//     Options.MaxWrong (default 2%) and the coverage at least
//     Options.MinCoverage (default 30%).
//
// A rejected candidate goes back to the model with the screen's reasons,
// the compiler's output, the names of failing tests, the patterns its tests
// miss and per-case summaries of the validation split; never a sealed
// input, never the raw output of its tests; for at most Options.Rounds
// rounds. Every output is read through a bound.
//
// File writes the accepted code, screened again, as a Go file that wires
// it into ptool.Distill with the original ptool as the fallback; Refactor
// merges it into a user's file, after the same screen. Report (JSON) and
// Report.Summary say what each round did. docs/security-sandbox.md says
// what the sandbox and the gate guarantee and what they do not.
package distill
