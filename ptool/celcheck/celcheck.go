// Package celcheck gives the declarative checks of ptools files
// (ptool.CheckDef.Expr) the Common Expression Language, CEL: the language
// Kubernetes validation rules and Google's APIs use for exactly this, safe
// to evaluate (no loops, no side effects; here each evaluation is bounded
// by Timeout) and small to write. An expression sees the call's input and output, and value, the
// value the check's path names, as JSON values, and must be a bool:
//
//	input.text.contains(output.quote)
//	output.start <= output.end
//	output.items.all(i, i.qty > 0)
//	size(output.summary) < size(input.text)
//	value in input.options      (with "path": "/choice")
//
// Numbers are doubles, compared with ints as numbers (1 == 1.0). CEL is a
// package apart so that a program that never declares an expression does
// not link it: pass ptool.WithLanguage(celcheck.Language{}) to Load.
package celcheck

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"cel.dev/cel-go/cel"

	"github.com/ptkit/ptk/ptool"
)

// Language is CEL as a ptool.Language. Its zero value is ready to use.
type Language struct{}

var _ ptool.Language = Language{}

// Timeout bounds one evaluation, so that a check of a huge answer (a
// nested comprehension over a long list) ends: it then fails with an
// error. CEL's own cost limit is not used: tracking the cost made a check
// of a list quadratic in its length.
const Timeout = time.Second

var env = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("input", cel.DynType),
		cel.Variable("output", cel.DynType),
		cel.Variable("value", cel.DynType),
		cel.CrossTypeNumericComparisons(true),
	)
})

// Compile compiles expr, which must be a bool.
func (Language) Compile(expr string) (func(ctx context.Context, vars map[string]any) (bool, error), error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if t := ast.OutputType(); t != cel.BoolType && t != cel.DynType {
		return nil, fmt.Errorf("%s is a %s, not a bool", expr, t)
	}
	prg, err := e.Program(ast, cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, vars map[string]any) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, Timeout)
		defer cancel()
		v, _, err := prg.ContextEval(ctx, vars)
		if err != nil {
			return false, err
		}
		b, ok := v.Value().(bool)
		if !ok {
			return false, errors.New("the expression is not a bool")
		}
		return b, nil
	}, nil
}
