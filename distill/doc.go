// Package distill turns a ptool's stored calls into plain Go code that
// answers the same way, with the model kept as the fallback for what the
// code is not sure of (ptool.Distill).
//
// Split deduplicates a ptool's successful stored calls (trace.Store.Examples)
// by input and splits them at random, with a seed, into training and
// held-out examples. Run shows a model the ptool's signature, doc and the
// training examples, asks it first to describe the patterns it sees, then
// to write
//
//	func Distilled(ctx context.Context, in In) (Out, error)
//
// returning ptool.ErrFallback whenever it is not sure, with a table test.
// In and Out are Go types generated from the ptool's schemas (GoTypes).
//
// Each candidate is compiled and tested for real: written into a temporary
// module whose go.mod points at the ptk module with a replace directive,
// then go vet, go test -c, the candidate's tests and the scoring run, each
// under a time limit, with GOPROXY=off (no module is fetched; the module
// cache stays read-only) and, when bubblewrap is installed, inside it: the
// system read-only, only the temporary module writable, no network. Without
// bubblewrap the code runs in the module with a bare environment but is not
// confined, and the Report's Sandbox says so.
//
// The candidate is scored on the held-out inputs, each in its own time
// limit: correct (equal to the stored output by Equal: numbers by value,
// key order ignored), wrong (different, an error, a panic, a hang, an
// answer outside the output schema) or abstained (ptool.ErrFallback). A
// fallback is never a pass: the gate accepts a candidate only when its
// wrong answers are at most Options.MaxWrong of the held-out inputs
// (default 2%) and its coverage, the share it answers, at least
// Options.MinCoverage (default 30%). A rejected candidate goes back to the
// model with the compiler's output, the failing tests and the wrong
// held-out cases, for at most Options.Rounds rounds.
//
// File writes the accepted code as a Go file that wires it into
// ptool.Distill with the original ptool as the fallback; Report (JSON) and
// Report.Summary say what each round did.
package distill
