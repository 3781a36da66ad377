package catalog

import (
	"fmt"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic"
	"github.com/ptkit/ptk/llm/completion"
	"github.com/ptkit/ptk/llm/gemini"
	"github.com/ptkit/ptk/llm/ollama"
	"github.com/ptkit/ptk/llm/openai"
)

// builders make a client for each API.
var builders = map[string]func(base, key string, o Options) llm.Model{
	"openai": func(base, key string, o Options) llm.Model {
		var opts []openai.Option
		if key != "" {
			opts = append(opts, openai.WithAPIKey(key))
		}
		if o.AskWindow {
			opts = append(opts, openai.WithWindowProbe())
		}
		return openai.New(base, opts...)
	},
	"anthropic": func(base, key string, _ Options) llm.Model {
		var opts []anthropic.Option
		if key != "" {
			opts = append(opts, anthropic.WithAPIKey(key))
		}
		return anthropic.New(base, opts...)
	},
	"gemini": func(base, key string, _ Options) llm.Model {
		var opts []gemini.Option
		if key != "" {
			opts = append(opts, gemini.WithAPIKey(key))
		}
		return gemini.New(base, opts...)
	},
	"llamacpp": func(base, key string, _ Options) llm.Model {
		return completion.LlamaCpp(base, completionOpts(key)...)
	},
	"completions": func(base, key string, _ Options) llm.Model {
		return completion.OpenAI(base, completionOpts(key)...)
	},
	"ollama": func(base, _ string, o Options) llm.Model {
		var opts []ollama.Option
		if o.NumCtx > 0 {
			opts = append(opts, ollama.WithNumCtx(o.NumCtx))
		}
		return ollama.New(base, opts...)
	},
}

func completionOpts(key string) []completion.Option {
	if key == "" {
		return nil
	}
	return []completion.Option{completion.WithAPIKey(key)}
}

// APIs returns the wire formats a provider may use.
func APIs() []string {
	return []string{"openai", "anthropic", "gemini", "llamacpp", "completions", "ollama"}
}

// Build returns a client for api at base with key; o.NumCtx goes to an
// Ollama client.
func Build(api, base, key string, o Options) (llm.Model, error) {
	b, ok := builders[api]
	if !ok {
		return nil, fmt.Errorf("no client for the %q API", api)
	}
	return b(base, key, o), nil
}
