package ptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/lenient"
)

// Distilled is a function that plain code answers first, falling back to a
// ptool when the code is not sure. It is safe for concurrent calls.
type Distilled[In, Out any] struct {
	code     func(context.Context, In) (Out, error)
	fallback *PTool[In, Out]
	stats    *counters
}

type counters struct {
	calls, code, fellBack, model, failed atomic.Int64
}

// Stats counts a distilled function's calls by how they ended.
type Stats struct {
	// Calls is every call.
	Calls int64 `json:"calls"`
	// Code is the calls the code answered.
	Code int64 `json:"code"`
	// FellBack is the calls where the code was not sure (ErrFallback).
	FellBack int64 `json:"fell_back"`
	// Model is the calls the fallback ptool answered.
	Model int64 `json:"model"`
	// Failed is the calls that returned an error: the code's own, its
	// panic, an answer that does not fit the output schema, or the
	// fallback's.
	Failed int64 `json:"failed"`
}

// Distill returns a function that calls code first: what it returns is the
// answer, checked against fallback's output schema like a model's. When
// code returns an error matching ErrFallback, fallback answers instead. Any
// other error, and a panic (as an error), is a bug in the code and is
// returned, never hidden by a fallback. Each call's Record goes to
// fallback's observer, with Source saying who answered.
func Distill[In, Out any](code func(context.Context, In) (Out, error), fallback *PTool[In, Out]) *Distilled[In, Out] {
	if code == nil || fallback == nil {
		panic("ptool.Distill: nil code or fallback")
	}
	return &Distilled[In, Out]{code: code, fallback: fallback, stats: &counters{}}
}

// Stats returns the counts of the calls made so far.
func (d *Distilled[In, Out]) Stats() Stats {
	return Stats{Calls: d.stats.calls.Load(), Code: d.stats.code.Load(), FellBack: d.stats.fellBack.Load(),
		Model: d.stats.model.Load(), Failed: d.stats.failed.Load()}
}

// Spec returns the fallback's Spec: the function the code stands in for.
func (d *Distilled[In, Out]) Spec() *Spec { return d.fallback.Spec() }

// Info describes the function as a tool, as its fallback does.
func (d *Distilled[In, Out]) Info() ptk.ToolInfo { return d.fallback.Info() }

// Run calls the function as a tool (see PTool.Run).
func (d *Distilled[In, Out]) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	return runTool(ctx, d.Spec(), args, func(ctx context.Context, args json.RawMessage) (any, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		return d.Call(ctx, in)
	})
}

// CallJSON calls the function with its input as JSON and returns the
// output as JSON, with the call's record (Source says who answered).
func (d *Distilled[In, Out]) CallJSON(ctx context.Context, input json.RawMessage) (json.RawMessage, *Record, error) {
	var in In
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, nil, fmt.Errorf("%s: the input: %w", d.Spec().Name, err)
	}
	_, rec, err := d.CallRecord(ctx, in)
	if err != nil {
		return nil, rec, err
	}
	return rec.Output, rec, nil
}

// Call answers in with the code, or with the fallback ptool when the code
// is not sure.
func (d *Distilled[In, Out]) Call(ctx context.Context, in In) (Out, error) {
	out, _, err := d.CallRecord(ctx, in)
	return out, err
}

// CallRecord is Call that also returns the call's Record.
func (d *Distilled[In, Out]) CallRecord(ctx context.Context, in In) (Out, *Record, error) {
	d.stats.calls.Add(1)
	f := d.fallback.fn
	raw, err := encodeInput(in)
	if err != nil {
		d.stats.failed.Add(1)
		var zero Out
		return zero, nil, err
	}
	rec := &Record{PTool: f.spec.Name, Input: raw, Source: SourceCode, Start: time.Now()}
	out, err := d.runCode(ctx, in)
	if errors.Is(err, ErrFallback) {
		d.stats.fellBack.Add(1)
		var mout Out
		rec.Source, rec.FellBack = SourceModel, true
		err = f.ask(ctx, rec, raw, in, &mout, nil)
		if err != nil {
			d.stats.failed.Add(1)
		} else {
			d.stats.model.Add(1)
		}
		f.finish(rec, err)
		return mout, rec, err
	}
	if err == nil {
		rec.Output, err = d.checkOut(out)
	}
	if err == nil && len(f.cfg.checks) > 0 {
		v := f.runChecks(ctx, &checkArgs{in: in, out: &out, inJSON: raw, outJSON: rec.Output})
		switch {
		case v.stop != nil:
			err = v.stop
		case v.problems != nil || v.hints != nil:
			err = fmt.Errorf("%s: the distilled code's answer fails its checks: %s", f.spec.Name, strings.Join(append(v.problems, v.hints...), "; "))
		}
	}
	if err != nil {
		d.stats.failed.Add(1)
		var zero Out
		f.finish(rec, err)
		return zero, rec, err
	}
	d.stats.code.Add(1)
	f.finish(rec, nil)
	return out, rec, nil
}

// runCode runs the code, turning a panic into an error.
func (d *Distilled[In, Out]) runCode(ctx context.Context, in In) (out Out, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: the distilled code panicked: %v\n%s", d.fallback.fn.spec.Name, r, debug.Stack())
		}
	}()
	return d.code(ctx, in)
}

// checkOut checks the code's answer against the output schema, as a
// model's would be.
func (d *Distilled[In, Out]) checkOut(out Out) (json.RawMessage, error) {
	s := d.fallback.fn.spec
	raw, err := encodeInput(out)
	if err != nil {
		return nil, fmt.Errorf("%s: the distilled code's answer: %w", s.Name, err)
	}
	// a nil slice or map is encoded as null: in Go it is empty
	switch v := reflect.ValueOf(out); {
	case v.Kind() == reflect.Slice && v.IsNil():
		raw = json.RawMessage("[]")
	case v.Kind() == reflect.Map && v.IsNil():
		raw = json.RawMessage("{}")
	}
	if n, _, err := lenient.Parse(raw); err == nil && s.out.Quick(n) {
		return raw, nil // certainly valid, without the full validator
	}
	if err := s.out.Validate(raw); err != nil {
		return nil, fmt.Errorf("%s: the distilled code's answer does not fit the output schema: %w", s.Name, err)
	}
	return raw, nil
}
