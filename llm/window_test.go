package llm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ptkit/ptk/llm"
)

// windowModel is a model that tells its window for the name it is asked.
type windowModel struct {
	echoModel
	w   map[string]llm.Window
	err error
}

func (m windowModel) ContextWindow(_ context.Context, model string) (llm.Window, error) {
	return m.w[model], m.err
}

type echoModel struct{}

func (echoModel) Generate(context.Context, llm.Request) (*llm.Response, error) {
	return &llm.Response{Content: "ok"}, nil
}

func TestContextWindowOf(t *testing.T) {
	ctx := context.Background()
	small := windowModel{w: map[string]llm.Window{"m": {Tokens: 4096, Trained: 40960, Source: "Ollama num_ctx"}}}
	large := windowModel{w: map[string]llm.Window{"m": {Tokens: 128000, Source: "catalog"}}}
	broken := windowModel{err: errors.New("no answer")}

	if w, err := llm.ContextWindowOf(ctx, echoModel{}, "m"); err != nil || w.Known() {
		t.Errorf("a model that cannot tell: %+v, %v", w, err)
	}
	// Found through a wrapper.
	if w, _ := llm.ContextWindowOf(ctx, llm.Priced(small, llm.Price{Input: 1}), "m"); w.Tokens != 4096 || w.Trained != 40960 {
		t.Errorf("through Priced: %+v", w)
	}
	// A fallback's is the smallest known; one model failing to tell does
	// not hide the others'.
	if w, err := llm.ContextWindowOf(ctx, llm.Fallback(large, broken, small), "m"); err != nil || w.Tokens != 4096 {
		t.Errorf("fallback: %+v, %v", w, err)
	}
	if _, err := llm.ContextWindowOf(ctx, llm.Fallback(broken, echoModel{}), "m"); err == nil {
		t.Error("a fallback none of whose models can tell hides the error")
	}
	// Fixed: the user's size, and what the model was trained for.
	w, err := llm.ContextWindowOf(ctx, llm.Fixed(small, 8192, "--context"), "m")
	if err != nil || w != (llm.Window{Tokens: 8192, Trained: 40960, Source: "--context"}) {
		t.Errorf("Fixed: %+v, %v", w, err)
	}
	if r, err := llm.Fixed(small, 8192, "--context").Generate(ctx, llm.Request{}); err != nil || r.Content != "ok" {
		t.Errorf("Fixed does not answer as its model: %+v, %v", r, err)
	}
}
