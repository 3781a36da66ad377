package catalog

import (
	"testing"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic"
	"github.com/ptkit/ptk/llm/gemini"
	"github.com/ptkit/ptk/llm/ollama"
	"github.com/ptkit/ptk/llm/openai"
)

// TestProviderOf checks the provider each model names, through the
// catalog's wrappers and pricing, as gen_ai.provider.name wants it.
func TestProviderOf(t *testing.T) {
	c := Default()
	getenv := func(string) string { return "key" }
	for _, m := range []struct{ provider, want string }{
		{"openai", "openai"}, {"anthropic", "anthropic"}, {"gemini", "gcp.gemini"}, {"ollama", "ollama"}, {"groq", "groq"}, {"deepseek", "deepseek"},
	} {
		var model string
		for n, e := range c.Models {
			if e.Provider == m.provider {
				model = n
				break
			}
		}
		if model == "" {
			t.Errorf("the default catalog has no model of %s", m.provider)
			continue
		}
		got, err := c.Resolve(model, Options{Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		if p := llm.ProviderOf(got); p != m.want {
			t.Errorf("ProviderOf(%s, of %s) = %q, want %q", model, m.provider, p, m.want)
		}
	}
	for _, c := range []struct {
		m    llm.Model
		want string
	}{
		{openai.New("https://api.openai.com/v1"), "openai"},
		{openai.New("http://localhost:11434/v1"), ""}, // some OpenAI-compatible server
		{anthropic.New("https://api.anthropic.com"), "anthropic"},
		{gemini.New("https://generativelanguage.googleapis.com"), "gcp.gemini"},
		{ollama.New("http://localhost:11434"), "ollama"},
		{Named(ollama.New("http://localhost:11434"), "qwen3:8b"), "ollama"},
		{llm.Priced(anthropic.New("https://api.anthropic.com"), llm.Price{}), "anthropic"},
	} {
		if got := llm.ProviderOf(c.m); got != c.want {
			t.Errorf("ProviderOf(%T at %s) = %q, want %q", c.m, llm.BaseURLOf(c.m), got, c.want)
		}
	}
	if ProviderName("gemini") != "gcp.gemini" || ProviderName("mistral") != "mistral_ai" || ProviderName("ollama") != "ollama" {
		t.Error("ProviderName maps the catalog's keys wrongly")
	}
}
