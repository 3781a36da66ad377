package llm

import (
	"context"
	"errors"
	"iter"
	"strings"
)

// Priced returns m with its calls priced at p: each Response (and the
// streamed chunk that carries the usage) has its Cost filled in. It streams
// (with m's stream when m is a Streamer), reports p as its Price, and
// unwraps to m, so m's other capabilities are found through it ([As],
// [BaseURLOf]).
func Priced(m Model, p Price) Model {
	return &priced{inner: m, price: p}
}

type priced struct {
	inner Model
	price Price
}

var (
	_ Streamer  = (*priced)(nil)
	_ Pricer    = (*priced)(nil)
	_ Unwrapper = (*priced)(nil)
)

// Unwrap returns the priced model.
func (m *priced) Unwrap() Model { return m.inner }

// Price returns the price the calls are priced at.
func (m *priced) Price() Price { return m.price }

func (m *priced) Generate(ctx context.Context, req Request) (*Response, error) {
	resp, err := m.inner.Generate(ctx, req)
	if resp != nil {
		resp.Cost = m.price.Cost(resp.Usage)
	}
	return resp, err
}

func (m *priced) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for ch, err := range StreamFrom(ctx, m.inner, req) {
			if ch.Usage != nil {
				ch.Cost = m.price.Cost(*ch.Usage)
			}
			if !yield(ch, err) || err != nil {
				return
			}
		}
	}
}

// StreamFrom streams m's answer to req, or, when m cannot stream, gives its
// whole answer as one chunk (its calls first, then the text with the usage).
func StreamFrom(ctx context.Context, m Model, req Request) iter.Seq2[Chunk, error] {
	if s, ok := m.(Streamer); ok {
		return s.Stream(ctx, req)
	}
	return func(yield func(Chunk, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(Chunk{}, err)
			return
		}
		for _, ch := range Chunks(resp) {
			if !yield(ch, nil) {
				return
			}
		}
	}
}

// Fallback returns a model that asks models in order: when one fails with
// an error worth trying elsewhere (ErrAuth, ErrModelNotFound,
// ErrRateLimited, ErrServer, ErrConnection — after the model's own
// retries), the next one is asked; the last error is returned when all
// fail. A request the provider rejects (ErrBadRequest,
// ErrToolsUnsupported) or a canceled context is not tried elsewhere. A
// stream moves to the next model only before its first chunk.
//
// What it can do is what the set of models can, found through each with
// [As]:
//   - it takes native tools only when every model does (ToolSupporter);
//   - its price ([PriceOf]) is the lowest of its models' prices, input,
//     output and cache each at its minimum, so that what it reports is a
//     lower bound of what the next call costs whichever model answers: a
//     budget that looks ahead (agent's MaxCost) never stops a call that
//     could have fitted. A model whose price is unknown may be free (a
//     local server), so when some models have a price and others do not,
//     the price is zero; when none has one, neither has the fallback;
//   - its base URL ([BaseURLOf]) is its models' when they all talk to the
//     same server, "" otherwise, as it then talks to no one server;
//   - any other capability (TextCompleter, …) is the first model's that
//     has it: Unwrap returns the models, in order.
func Fallback(models ...Model) Model {
	f := &fallback{models: models}
	p, ok := lowestPrice(models)
	if !ok {
		return f
	}
	return &pricedFallback{f, p}
}

type fallback struct{ models []Model }

// pricedFallback is a fallback of which at least one model has a price.
// It must not leave the price to As, which would find the first model's.
type pricedFallback struct {
	*fallback
	price Price
}

var (
	_ Streamer      = (*fallback)(nil)
	_ ToolSupporter = (*fallback)(nil)
	_ BaseURLer     = (*fallback)(nil)
	_ ModelIDer     = (*fallback)(nil)
	_ Pricer        = (*pricedFallback)(nil)
)

// Unwrap returns the models, in the order they are asked.
func (f *fallback) Unwrap() []Model { return f.models }

// Price is the lowest of the models' prices: a lower bound of a call's cost.
func (f *pricedFallback) Price() Price { return f.price }

// ModelID is the models' ids, in order, joined by commas.
func (f *fallback) ModelID() string {
	ids := make([]string, len(f.models))
	for i, m := range f.models {
		ids[i] = ModelIDOf(m)
	}
	return strings.Join(ids, ",")
}

// BaseURL is the models' base URL when they share one, "" otherwise.
func (f *fallback) BaseURL() string {
	base := ""
	for i, m := range f.models {
		b := BaseURLOf(m)
		if i > 0 && b != base {
			return ""
		}
		base = b
	}
	return base
}

// lowestPrice is each part of the models' prices at its minimum, a model
// with no price counting as free; ok is false when no model has a price.
func lowestPrice(models []Model) (low Price, ok bool) {
	priced := 0
	for i, m := range models {
		p, known := PriceOf(m)
		if known {
			priced++
		}
		if i == 0 {
			low = p
			continue
		}
		// A cache price of zero means "priced as input" (Price.Cost):
		// make it explicit before taking the minimum.
		low.CacheRead = min(cacheOr(low.CacheRead, low.Input), cacheOr(p.CacheRead, p.Input))
		low.CacheWrite = min(cacheOr(low.CacheWrite, low.Input), cacheOr(p.CacheWrite, p.Input))
		low.Input = min(low.Input, p.Input)
		low.Output = min(low.Output, p.Output)
	}
	return low, priced > 0
}

func cacheOr(cache, input float64) float64 {
	if cache == 0 {
		return input
	}
	return cache
}

// worthTryingElsewhere reports whether another model may succeed where one
// failed with err.
func worthTryingElsewhere(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	for _, k := range []error{ErrAuth, ErrModelNotFound, ErrRateLimited, ErrServer, ErrConnection} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

func (f *fallback) Generate(ctx context.Context, req Request) (*Response, error) {
	var err error
	for _, m := range f.models {
		var resp *Response
		if resp, err = m.Generate(ctx, req); err == nil || !worthTryingElsewhere(ctx, err) {
			return resp, err
		}
	}
	if err == nil {
		err = &Error{Kind: ErrBadRequest, Message: "fallback: no models"}
	}
	return nil, err
}

func (f *fallback) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		var last error
		for _, m := range f.models {
			started := false
			last = nil
			for ch, err := range StreamFrom(ctx, m, req) {
				if err != nil {
					last = err
					break
				}
				started = true
				if !yield(ch, nil) {
					return
				}
			}
			if last == nil || started || !worthTryingElsewhere(ctx, last) {
				break
			}
		}
		if last != nil {
			yield(Chunk{}, last)
		}
	}
}

// SupportsNativeTools is true when every model takes native tools (a model
// that does not say counts as taking them).
func (f *fallback) SupportsNativeTools() bool {
	for _, m := range f.models {
		if t, ok := As[ToolSupporter](m); ok && !t.SupportsNativeTools() {
			return false
		}
	}
	return true
}
