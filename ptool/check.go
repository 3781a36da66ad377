package ptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrRetry is what a check's error matches when it asks the model to try
// again with a hint (see Retry).
var ErrRetry = errors.New("try again")

// RetryError is a check's request that the model try again, with a hint
// of what to do differently.
type RetryError struct{ Hint string }

func (e *RetryError) Error() string { return "try again: " + e.Hint }

// Is reports whether target is ErrRetry.
func (e *RetryError) Is(target error) bool { return target == ErrRetry }

// Retry returns the error a check returns to have the model try again
// with a hint: the answer may fit, but is not what is wanted ("the quote
// must be taken word for word from the text").
func Retry(format string, args ...any) error {
	return &RetryError{Hint: fmt.Sprintf(format, args...)}
}

// StopError is a check's error that ends the call: what the model cannot
// fix (the check's own database is down). It unwraps to the error.
type StopError struct{ Err error }

func (e *StopError) Error() string { return "the check failed: " + e.Err.Error() }

// Unwrap returns the check's error.
func (e *StopError) Unwrap() error { return e.Err }

// Stop returns the error a check returns to end the call with err instead
// of asking the model again.
func Stop(err error) error { return &StopError{Err: err} }

// WithCheck adds a check of each answer that fits the output schema, as a
// validator: an error it returns is a problem fed back to the model with
// its message, as a schema error is, recorded in the attempt's Problems,
// and the model is asked again (within WithMaxAttempts). A check returns
// Retry(hint) to ask the model to try again with a hint, and Stop(err) to
// end the call with err. Checks run in the order given, all of them, in
// the calling goroutine. A distilled function's code answers are checked
// too: one that fails is the code's error.
//
// In and Out must be the ptool's types (New panics otherwise); a
// declarative ptool's are map[string]any and any.
func WithCheck[In, Out any](check func(ctx context.Context, in In, out Out) error) Option {
	return func(c *config) {
		c.checks = append(c.checks, checker{in: reflect.TypeFor[In](), out: reflect.TypeFor[Out](),
			fn: func(ctx context.Context, a *checkArgs) error {
				in, _ := a.in.(In)
				var out Out
				if p, ok := a.out.(*Out); ok {
					out = *p
				}
				return check(ctx, in, out)
			}})
	}
}

// checker is one check of a ptool: a Go function (WithCheck) or a
// declarative check of a ptools file.
type checker struct {
	// in and out are the types of a Go check; nil for a declarative one.
	in, out reflect.Type
	fn      func(ctx context.Context, a *checkArgs) error
}

// checkArgs is what a check is given: the call's input and output as the
// caller's values (out a pointer) and as JSON.
type checkArgs struct {
	in, out           any
	inJSON, outJSON   []byte
	inValue, outValue any
	decoded           bool
}

// values returns the input and output as JSON values (numbers as
// float64), decoded once.
func (a *checkArgs) values() (in, out any) {
	if !a.decoded {
		a.decoded = true
		_ = json.Unmarshal(a.inJSON, &a.inValue)
		_ = json.Unmarshal(a.outJSON, &a.outValue)
	}
	return a.inValue, a.outValue
}

// checkTypes reports a Go check whose types are not the ptool's.
func checkTypes(checks []checker, in, out reflect.Type) error {
	for i, c := range checks {
		if c.in != nil && (c.in != in || c.out != out) {
			return fmt.Errorf("check %d takes (%s, %s), not the ptool's (%s, %s)", i+1, c.in, c.out, in, out)
		}
	}
	return nil
}

// verdict is what the checks said of an answer.
type verdict struct {
	problems []string // what is wrong, for the model
	hints    []string // what to do differently (Retry)
	stop     error    // ends the call (Stop, or ctx done)
}

// runChecks runs every check on an answer.
func (f *fn) runChecks(ctx context.Context, a *checkArgs) verdict {
	var v verdict
	for _, c := range f.cfg.checks {
		err := c.fn(ctx, a)
		var se *StopError
		var re *RetryError
		switch {
		case err == nil:
		case errors.As(err, &se):
			v.stop = se
			return v
		case ctx.Err() != nil:
			v.stop = ctx.Err()
			return v
		case errors.As(err, &re):
			v.hints = append(v.hints, re.Hint)
		default:
			v.problems = append(v.problems, err.Error())
		}
	}
	return v
}

// CheckDef is a check declared in a ptools file: conditions on the value
// at Path in the output (a JSON Pointer, "" for the whole output, where a
// token * stands for every item or member), and the Message the model is
// given when one fails (by default, what was expected). A value that is
// not there is not checked: the output schema says what is required.
//
//	{"path": "/confidence", "min": 0, "max": 1}
//	{"path": "/items/*/sku", "pattern": "^[A-Z]{3}-[0-9]+$"}
//	{"expr": "input.text.contains(output.quote)", "message": "quote the text word for word"}
type CheckDef struct {
	Path string `json:"path,omitempty"`
	// Pattern is a regular expression (RE2) a string must match.
	Pattern string `json:"pattern,omitempty"`
	// Min and Max bound a number, inclusive.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Enum lists the values allowed, compared as JSON.
	Enum []json.RawMessage `json:"enum,omitempty"`
	// MinLength and MaxLength bound the length of a string (characters),
	// an array (items) or an object (members).
	MinLength *int `json:"min_length,omitempty"`
	MaxLength *int `json:"max_length,omitempty"`
	// Expr is an expression that must be true, in the language WithLanguage
	// gives (CEL, package ptool/celcheck), over input and output (the call's
	// JSON values) and value (the value at Path).
	Expr string `json:"expr,omitempty"`
	// Message replaces what the model is told when the check fails.
	Message string `json:"message,omitempty"`
}

// Language compiles the expressions of declarative checks (CheckDef.Expr).
type Language interface {
	// Compile returns expr as a function of the variables input, output and
	// value (JSON values: maps, slices, float64, string, bool, nil) that
	// reports whether it holds.
	Compile(expr string) (func(ctx context.Context, vars map[string]any) (bool, error), error)
}

// WithLanguage sets the language of the expressions of declarative checks
// (CheckDef.Expr): a ptools file with an "expr" check does not load
// without one.
func WithLanguage(l Language) Option { return func(c *config) { c.language = l } }

// compile makes a declarative check a checker.
func (d CheckDef) compile(lang Language) (checker, error) {
	path := d.Path
	if path != "" && path[0] != '/' {
		return checker{}, fmt.Errorf("the path %q is not a JSON Pointer (such as /items/0)", path)
	}
	var conds []func(ctx context.Context, v, in, out any) (string, error)
	if d.Pattern != "" {
		re, err := regexp.Compile(d.Pattern)
		if err != nil {
			return checker{}, fmt.Errorf("the pattern: %w", err)
		}
		conds = append(conds, func(_ context.Context, v, _, _ any) (string, error) {
			s, ok := v.(string)
			if !ok {
				return fmt.Sprintf("%s is not a string, to match %s", show(v), d.Pattern), nil
			}
			if !re.MatchString(s) {
				return fmt.Sprintf("%s does not match %s", show(v), d.Pattern), nil
			}
			return "", nil
		})
	}
	if d.Min != nil || d.Max != nil {
		conds = append(conds, func(_ context.Context, v, _, _ any) (string, error) {
			x, ok := v.(float64)
			switch {
			case !ok:
				return fmt.Sprintf("%s is not a number", show(v)), nil
			case d.Min != nil && x < *d.Min:
				return fmt.Sprintf("%s is below the minimum %s", show(v), num(*d.Min)), nil
			case d.Max != nil && x > *d.Max:
				return fmt.Sprintf("%s is above the maximum %s", show(v), num(*d.Max)), nil
			}
			return "", nil
		})
	}
	if len(d.Enum) > 0 {
		allowed := make([]any, len(d.Enum))
		names := make([]string, len(d.Enum))
		for i, e := range d.Enum {
			if err := json.Unmarshal(e, &allowed[i]); err != nil {
				return checker{}, fmt.Errorf("enum value %d: %w", i+1, err)
			}
			names[i] = show(allowed[i])
		}
		conds = append(conds, func(_ context.Context, v, _, _ any) (string, error) {
			for _, a := range allowed {
				if reflect.DeepEqual(a, v) {
					return "", nil
				}
			}
			return fmt.Sprintf("%s is not one of %s", show(v), strings.Join(names, ", ")), nil
		})
	}
	if d.MinLength != nil || d.MaxLength != nil {
		conds = append(conds, func(_ context.Context, v, _, _ any) (string, error) {
			var n int
			var unit string
			switch x := v.(type) {
			case string:
				n, unit = utf8.RuneCountInString(x), "characters"
			case []any:
				n, unit = len(x), "items"
			case map[string]any:
				n, unit = len(x), "members"
			default:
				return fmt.Sprintf("%s has no length", show(v)), nil
			}
			switch {
			case d.MinLength != nil && n < *d.MinLength:
				return fmt.Sprintf("%d %s, fewer than %d", n, unit, *d.MinLength), nil
			case d.MaxLength != nil && n > *d.MaxLength:
				return fmt.Sprintf("%d %s, more than %d", n, unit, *d.MaxLength), nil
			}
			return "", nil
		})
	}
	if d.Expr != "" {
		if lang == nil {
			return checker{}, errors.New(`the "expr" needs an expression language (ptool.WithLanguage; CEL is package ptool/celcheck)`)
		}
		prog, err := lang.Compile(d.Expr)
		if err != nil {
			return checker{}, fmt.Errorf("the expr: %w", err)
		}
		conds = append(conds, func(ctx context.Context, v, in, out any) (string, error) {
			ok, err := prog(ctx, map[string]any{"input": in, "output": out, "value": v})
			switch {
			case err != nil:
				return fmt.Sprintf("%s could not be checked: %v", d.Expr, err), nil
			case !ok:
				return d.Expr + " is false", nil
			}
			return "", nil
		})
	}
	if len(conds) == 0 {
		return checker{}, errors.New("it checks nothing: give pattern, min, max, enum, min_length, max_length or expr")
	}
	toks := tokensOf(path)
	return checker{fn: func(ctx context.Context, a *checkArgs) error {
		in, out := a.values()
		var msgs []string
		var err error
		walkPointer(out, toks, "", func(at string, v any) bool {
			for _, cond := range conds {
				var msg string
				if msg, err = cond(ctx, v, in, out); err != nil {
					return false
				}
				if msg == "" {
					continue
				}
				if d.Message != "" {
					msg = d.Message
				}
				if at != "" {
					msg = at + ": " + msg
				}
				msgs = append(msgs, msg)
				break
			}
			return ctx.Err() == nil
		})
		switch {
		case err != nil:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case len(msgs) > 0:
			return errors.New(strings.Join(msgs, "; "))
		}
		return nil
	}}, nil
}

// tokensOf splits a JSON Pointer into its unescaped tokens.
func tokensOf(ptr string) []string {
	if ptr == "" {
		return nil
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

// walkPointer calls yield with each value at toks in v and where it is,
// a * token standing for every item or member (in key order); a value not
// there yields nothing. It stops when yield returns false.
func walkPointer(v any, toks []string, at string, yield func(at string, v any) bool) bool {
	if len(toks) == 0 {
		return yield(at, v)
	}
	tok, rest := toks[0], toks[1:]
	switch x := v.(type) {
	case map[string]any:
		if tok == "*" {
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if !walkPointer(x[k], rest, at+"/"+escapeToken(k), yield) {
					return false
				}
			}
			return true
		}
		if e, ok := x[tok]; ok {
			return walkPointer(e, rest, at+"/"+escapeToken(tok), yield)
		}
	case []any:
		if tok == "*" {
			for i, e := range x {
				if !walkPointer(e, rest, at+"/"+strconv.Itoa(i), yield) {
					return false
				}
			}
			return true
		}
		if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(x) {
			return walkPointer(x[i], rest, at+"/"+tok, yield)
		}
	}
	return true
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// show writes a JSON value for a message, cut short when long.
func show(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSpace(b.String())
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:77]) + "..."
	}
	return s
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
