package otlp

import (
	"testing"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic"
	"github.com/ptkit/ptk/llm/catalog"
	"github.com/ptkit/ptk/llm/gemini"
	"github.com/ptkit/ptk/llm/ollama"
	"github.com/ptkit/ptk/llm/openai"
)

// TestProviderNamesPinned: the provider names ptk's clients and catalog
// give (llm.ProviderOf) are the values pinned here, so that a backend
// reading gen_ai.provider.name finds the conventions' names.
func TestProviderNamesPinned(t *testing.T) {
	for _, c := range []struct {
		m    llm.Model
		want string
	}{
		{openai.New("https://api.openai.com/v1"), ProviderOpenAI},
		{anthropic.New("https://api.anthropic.com"), ProviderAnthropic},
		{gemini.New("https://generativelanguage.googleapis.com"), ProviderGemini},
		{ollama.New("http://localhost:11434"), ProviderOllama},
	} {
		if got := llm.ProviderOf(c.m); got != c.want {
			t.Errorf("ProviderOf(%T) = %q, want %q", c.m, got, c.want)
		}
	}
	for key, want := range map[string]string{"openai": ProviderOpenAI, "anthropic": ProviderAnthropic, "gemini": ProviderGemini,
		"google": ProviderGemini, "vertex": ProviderVertexAI, "bedrock": ProviderBedrock, "azure": ProviderAzure, "mistral": ProviderMistral,
		"xai": ProviderXAI, "deepseek": ProviderDeepSeek, "groq": ProviderGroq, "watsonx": ProviderWatsonx, "ollama": ProviderOllama} {
		if got := catalog.ProviderName(key); got != want {
			t.Errorf("catalog.ProviderName(%q) = %q, want %q", key, got, want)
		}
	}
}
