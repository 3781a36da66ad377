package llm

import (
	"context"
	"errors"
	"iter"
)

// Window is a model's context window: how many tokens a request and its
// answer may hold together.
type Window struct {
	// Tokens is the window the model is served with, what a request and its
	// answer must fit; 0 when it is not known.
	Tokens int `json:"tokens"`
	// Trained is the longest context the model was trained for, where the
	// server says (0: unknown). Tokens is less when the server was set up
	// so: Ollama's num_ctx, llama.cpp's --ctx-size, vLLM's --max-model-len.
	Trained int `json:"trained,omitempty"`
	// Source says where Tokens comes from, for a person: "catalog",
	// "Ollama num_ctx", "vLLM max_model_len", "llama.cpp n_ctx", "--context"…
	Source string `json:"source,omitempty"`
}

// Known reports whether the window's size is known.
func (w Window) Known() bool { return w.Tokens > 0 }

// Windower is a Model that can tell its context window: a catalog entry
// (its context_window), a client of a server that reports it (Ollama's
// /api/show, vLLM's max_model_len, llama.cpp's /props).
type Windower interface {
	// ContextWindow returns the window of the named model (the name a
	// request gives; a wrapper set to one model passes its own). A window
	// it cannot tell is the zero Window and no error; an error is a failure
	// to ask.
	ContextWindow(ctx context.Context, model string) (Window, error)
}

// ContextWindowOf returns m's context window for the named model, found
// through wrappers ([As]); the zero Window when no model in the chain can
// tell.
func ContextWindowOf(ctx context.Context, m Model, model string) (Window, error) {
	if w, ok := As[Windower](m); ok {
		return w.ContextWindow(ctx, model)
	}
	return Window{}, nil
}

// Fixed returns m with a context window of tokens whatever m says: what a
// user's --context gives. It unwraps to m.
func Fixed(m Model, tokens int, source string) Model {
	return &fixedWindow{inner: m, w: Window{Tokens: tokens, Source: source}}
}

type fixedWindow struct {
	inner Model
	w     Window
}

var (
	_ Windower  = (*fixedWindow)(nil)
	_ Streamer  = (*fixedWindow)(nil)
	_ Unwrapper = (*fixedWindow)(nil)
)

func (f *fixedWindow) Unwrap() Model { return f.inner }

// ContextWindow is the fixed window, with what m says it was trained for
// when it can tell.
func (f *fixedWindow) ContextWindow(ctx context.Context, model string) (Window, error) {
	w := f.w
	if inner, err := ContextWindowOf(ctx, f.inner, model); err == nil {
		w.Trained = inner.Trained
	}
	return w, nil
}

func (f *fixedWindow) Generate(ctx context.Context, req Request) (*Response, error) {
	return f.inner.Generate(ctx, req)
}

func (f *fixedWindow) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return StreamFrom(ctx, f.inner, req)
}

// ContextWindow of a fallback is the smallest of its models' known
// windows: a request must fit whichever model answers it.
func (f *fallback) ContextWindow(ctx context.Context, model string) (Window, error) {
	var out Window
	var errs []error
	for _, m := range f.models {
		w, err := ContextWindowOf(ctx, m, model)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if w.Known() && (!out.Known() || w.Tokens < out.Tokens) {
			out = w
		}
	}
	if !out.Known() {
		return Window{}, errors.Join(errs...)
	}
	return out, nil
}

var _ Windower = (*fallback)(nil)
