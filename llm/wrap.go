package llm

import (
	"context"
	"errors"
	"iter"
)

// Priced returns m with its calls priced at p: each Response (and the
// streamed chunk that carries the usage) has its Cost filled in. It keeps
// m's other abilities (streaming, ToolSupporter, BaseURL) and adds a Price
// method that reports p.
func Priced(m Model, p Price) Model {
	return &priced{wrapper: wrapper{m}, price: p}
}

type priced struct {
	wrapper
	price Price
}

var _ Streamer = (*priced)(nil)

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

// wrapper passes on what a wrapped model can do besides Generate.
type wrapper struct{ inner Model }

// SupportsNativeTools reports the wrapped model's answer; true when it does
// not say.
func (w wrapper) SupportsNativeTools() bool {
	if t, ok := w.inner.(ToolSupporter); ok {
		return t.SupportsNativeTools()
	}
	return true
}

// BaseURL reports the wrapped model's base URL, "" when it has none.
func (w wrapper) BaseURL() string {
	if b, ok := w.inner.(interface{ BaseURL() string }); ok {
		return b.BaseURL()
	}
	return ""
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
// stream moves to the next model only before its first chunk. It supports
// native tools only when every model does.
func Fallback(models ...Model) Model {
	return &fallback{models: models}
}

type fallback struct{ models []Model }

var _ Streamer = (*fallback)(nil)

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

func (f *fallback) SupportsNativeTools() bool {
	for _, m := range f.models {
		if t, ok := m.(ToolSupporter); ok && !t.SupportsNativeTools() {
			return false
		}
	}
	return true
}
