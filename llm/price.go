package llm

import "github.com/ptkit/ptk"

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read,omitempty"`
	CacheWrite float64 `json:"cache_write,omitempty"`
}

// Cost returns what usage cost at p, in US dollars. Cached tokens are
// priced at CacheRead and CacheWrite; usage.PromptTokens is taken to
// include them, as OpenAI reports it (providers that report them apart, as
// Anthropic does, add them to PromptTokens when they translate usage).
// A cache price of zero means the cache is priced as input.
func (p Price) Cost(u ptk.Usage) float64 {
	read, write := p.CacheRead, p.CacheWrite
	if read == 0 {
		read = p.Input
	}
	if write == 0 {
		write = p.Input
	}
	plain := max(u.PromptTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	return (float64(plain)*p.Input + float64(u.CacheReadTokens)*read +
		float64(u.CacheWriteTokens)*write + float64(u.CompletionTokens)*p.Output) / 1e6
}
