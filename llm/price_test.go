package llm

import (
	"math"
	"testing"

	"github.com/ptkit/ptk"
)

// Hand-computed costs, one price field at a time.
func TestPriceCost(t *testing.T) {
	p := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75} // USD per million tokens
	cases := []struct {
		name string
		u    ptk.Usage
		want float64
	}{
		{"input", ptk.Usage{PromptTokens: 1_000_000}, 3},
		{"output", ptk.Usage{CompletionTokens: 2_000}, 0.03},
		{"cache read", ptk.Usage{PromptTokens: 10_000, CacheReadTokens: 10_000}, 0.003},
		{"cache write", ptk.Usage{PromptTokens: 4_000, CacheWriteTokens: 4_000}, 0.015},
		{"all", ptk.Usage{PromptTokens: 12_000, CompletionTokens: 500, CacheReadTokens: 8_000, CacheWriteTokens: 1_000}, 3*3e-3 + 8*0.3e-3 + 1*3.75e-3 + 0.5*15e-3},
		{"nothing", ptk.Usage{}, 0},
	}
	for _, c := range cases {
		if got := p.Cost(c.u); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// No cache prices: cached tokens cost as input.
	if got := (Price{Input: 2}).Cost(ptk.Usage{PromptTokens: 1_000_000, CacheReadTokens: 500_000}); got != 2 {
		t.Errorf("cache without a price: %v", got)
	}
}
