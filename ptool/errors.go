package ptool

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrAbstained: the model said it cannot answer from the input (an
	// *AbstainedError holds its reason).
	ErrAbstained = errors.New("the model abstained")
	// ErrFallback is what the code of a distilled function returns (wrapped
	// or as it is) to say it is not sure: its ptool answers instead.
	ErrFallback = errors.New("distilled code is not sure")
	// ErrAttempts: every attempt gave an answer that does not fit the output
	// schema (an *AttemptsError holds each attempt's problems).
	ErrAttempts = errors.New("no valid answer")
	// ErrBudget: the call's cost reached its budget (WithBudget) before a
	// valid answer.
	ErrBudget = errors.New("the call's budget is spent")
)

// AbstainedError is a model's explicit refusal to answer, with its reason.
type AbstainedError struct {
	PTool  string
	Reason string
}

func (e *AbstainedError) Error() string {
	if e.Reason == "" {
		return e.PTool + ": the model abstained"
	}
	return e.PTool + ": the model abstained: " + e.Reason
}

// Is reports whether target is ErrAbstained.
func (e *AbstainedError) Is(target error) bool { return target == ErrAbstained }

// AttemptsError reports a call whose attempts all failed to give an answer
// that fits the output schema. It matches ErrAttempts, or ErrBudget when the
// budget ended the call first.
type AttemptsError struct {
	PTool    string
	Attempts []Attempt
	// Budget reports that the budget stopped the attempts.
	Budget bool
}

func (e *AttemptsError) Error() string {
	var b strings.Builder
	what := "no valid answer"
	if e.Budget {
		what = "the budget is spent"
	}
	fmt.Fprintf(&b, "%s: %s after %d attempt(s)", e.PTool, what, len(e.Attempts))
	for i, a := range e.Attempts {
		fmt.Fprintf(&b, "; attempt %d: %s", i+1, strings.Join(a.Problems, ", "))
	}
	return b.String()
}

// Is reports whether target is ErrAttempts, or ErrBudget for a call the
// budget stopped.
func (e *AttemptsError) Is(target error) bool {
	return target == ErrAttempts || e.Budget && target == ErrBudget
}
