package llm_test

import (
	"testing"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
)

type withBase struct{ llm.Model }

func (withBase) BaseURL() string { return "http://model.test/v1" }

func TestCapabilitiesThroughWrappers(t *testing.T) {
	p := llm.Price{Input: 1, Output: 2}
	inner := withBase{llmtest.New()}
	m := llm.Priced(inner, p)
	if got, ok := llm.PriceOf(m); !ok || got != p {
		t.Errorf("PriceOf(Priced) = %v, %v", got, ok)
	}
	if got := llm.BaseURLOf(m); got != "http://model.test/v1" {
		t.Errorf("BaseURLOf(Priced) = %q", got)
	}
	if _, ok := llm.PriceOf(inner); ok {
		t.Error("PriceOf found a price on a model that has none")
	}
}
