package ptool

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
)

// ExampleStore holds recorded calls of ptools: trace.Store is one.
type ExampleStore interface {
	// PtoolExamples returns up to n good recorded calls of the ptool name,
	// best first.
	PtoolExamples(ctx context.Context, name string, n int) ([]Example, error)
}

// WithStoredExamples shows the model up to n good recorded calls of the
// ptool from s as examples (a small BootstrapFewShot, in DSPy's terms),
// after the examples WithExample gives. trace.Store picks them: calls a
// model answered without an error, the newest, one per input. They are
// read on the first call and kept for the ptool's life; one that does not
// fit the ptool's schemas is left out, and a call's own input is never
// among the examples it is shown. A store that cannot be read is tried
// again on the next call, which goes on without them.
func WithStoredExamples(s ExampleStore, n int) Option {
	return func(c *config) { c.store, c.storedN = s, n }
}

// stored is what a ptool read from its ExampleStore.
type stored struct {
	mu     sync.Mutex
	loaded bool
	// examples are the usable ones, best first: one more than shown, so
	// that a call whose input is among the first still gets n.
	examples []Example
	// spec is the spec with the first n of them, its prompts rendered.
	spec *Spec
}

// promptSpec returns the spec whose prompt a call of input raw is given:
// the ptool's, with its stored examples.
func (f *fn) promptSpec(ctx context.Context, raw []byte) (*Spec, error) {
	if f.cfg.store == nil || f.cfg.storedN <= 0 {
		return f.spec, nil
	}
	st := f.stored
	st.mu.Lock()
	if !st.loaded {
		// more than shown: some may not fit, or repeat WithExample's
		if exs, err := f.cfg.store.PtoolExamples(ctx, f.spec.Name, 2*f.cfg.storedN+len(f.spec.Examples)+1); err == nil {
			st.examples = f.spec.usable(exs)
			first := st.examples[:min(len(st.examples), f.cfg.storedN)]
			if st.spec, err = f.spec.withExamples(first); err != nil {
				st.mu.Unlock()
				return nil, err
			}
			st.loaded = true
		}
	}
	sp, exs := st.spec, st.examples
	st.mu.Unlock()
	if sp == nil {
		return f.spec, nil
	}
	in := compact(raw)
	for i, e := range exs[:min(len(exs), f.cfg.storedN)] {
		if bytes.Equal(e.Input, in) {
			// never the call's own answer
			others := slices.Delete(slices.Clone(exs), i, i+1)
			return f.spec.withExamples(others[:min(len(others), f.cfg.storedN)])
		}
	}
	return sp, nil
}

// usable returns the examples that fit the spec's schemas and are not
// already shown, compact, each input once.
func (s *Spec) usable(exs []Example) []Example {
	seen := map[string]bool{}
	for _, e := range s.Examples {
		seen[string(e.Input)] = true
	}
	var out []Example
	for _, e := range exs {
		e = Example{Input: compact(e.Input), Output: compact(e.Output)}
		if seen[string(e.Input)] || s.in.Validate(e.Input) != nil || s.out.Validate(e.Output) != nil {
			continue
		}
		seen[string(e.Input)] = true
		out = append(out, e)
	}
	return out
}

// withExamples returns a copy of s that also shows exs, its prompts
// rendered.
func (s *Spec) withExamples(exs []Example) (*Spec, error) {
	c := *s
	c.Examples = append(slices.Clone(s.Examples), exs...)
	c.system = map[style]string{}
	for _, st := range []style{styleProtocol, styleJSON, styleTool} {
		var err error
		if c.system[st], err = c.renderSystem(st); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
