package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic"
	"github.com/ptkit/ptk/llm/browser"
	"github.com/ptkit/ptk/llm/completion"
	"github.com/ptkit/ptk/llm/gemini"
	"github.com/ptkit/ptk/llm/ollama"
	"github.com/ptkit/ptk/llm/openai"
)

// endpoint is what a client is made from: the provider's base URL and
// key, the model's id, and the environment.
type endpoint struct {
	base, key, id string
	getenv        func(string) string
	// numCtx is the context size an Ollama client sends (Options.NumCtx);
	// askWindow makes an OpenAI-compatible client ask its server for the
	// window (Options.AskWindow, for a free model).
	numCtx    int
	askWindow bool
}

// builders make a client for each API.
var builders = map[string]func(e endpoint) (llm.Model, error){
	"openai": func(e endpoint) (llm.Model, error) {
		var opts []openai.Option
		if e.key != "" {
			opts = append(opts, openai.WithAPIKey(e.key))
		}
		if e.askWindow {
			opts = append(opts, openai.WithWindowProbe())
		}
		return openai.New(e.base, opts...), nil
	},
	"anthropic": func(e endpoint) (llm.Model, error) {
		var opts []anthropic.Option
		if e.key != "" {
			opts = append(opts, anthropic.WithAPIKey(e.key))
		}
		return anthropic.New(e.base, opts...), nil
	},
	"gemini": func(e endpoint) (llm.Model, error) {
		var opts []gemini.Option
		if e.key != "" {
			opts = append(opts, gemini.WithAPIKey(e.key))
		}
		return gemini.New(e.base, opts...), nil
	},
	"llamacpp": func(e endpoint) (llm.Model, error) {
		return completion.LlamaCpp(e.base, completionOpts(e.key)...), nil
	},
	"completions": func(e endpoint) (llm.Model, error) {
		return completion.OpenAI(e.base, completionOpts(e.key)...), nil
	},
	"browser": browserModel,
	"ollama": func(e endpoint) (llm.Model, error) {
		var opts []ollama.Option
		if e.numCtx > 0 {
			opts = append(opts, ollama.WithNumCtx(e.numCtx))
		}
		return ollama.New(e.base, opts...), nil
	},
}

func completionOpts(key string) []completion.Option {
	if key == "" {
		return nil
	}
	return []completion.Option{completion.WithAPIKey(key)}
}

// browserModel is a chat page: the model's id names the site (a built-in
// site or a site file), the base where the browser is: its debugging
// address (http://127.0.0.1:9222), or a profile directory to start one
// with, $PTK_BROWSER in place of either. $PTK_BROWSER_EXEC names the browser
// to start and $PTK_BROWSER_FLAGS adds to its command line.
func browserModel(e endpoint) (llm.Model, error) {
	site, err := browser.FindSite(e.id)
	if err != nil {
		return nil, err
	}
	where := e.base
	if v := e.getenv("PTK_BROWSER"); v != "" {
		where = v
	}
	var b *browser.Browser
	if strings.Contains(where, "://") {
		b, err = browser.Attach(where)
	} else {
		if rest, ok := strings.CutPrefix(where, "~"+string(filepath.Separator)); ok {
			home, herr := os.UserHomeDir()
			if herr != nil {
				return nil, herr
			}
			where = filepath.Join(home, rest)
		}
		b, err = browser.Launch(browser.LaunchOptions{ProfileDir: where, Exec: e.getenv("PTK_BROWSER_EXEC"), Flags: strings.Fields(e.getenv("PTK_BROWSER_FLAGS"))})
	}
	if err != nil {
		return nil, err
	}
	return browser.New(site, b), nil
}

// APIs returns the wire formats a provider may use.
func APIs() []string {
	return []string{"openai", "anthropic", "gemini", "llamacpp", "completions", "browser", "ollama"}
}

// Build returns a client for api at base with key (a model of the server
// at base, outside the catalog); o.NumCtx goes to an Ollama client.
func Build(api, base, key string, o Options) (llm.Model, error) {
	return build(api, endpoint{base: base, key: key, getenv: os.Getenv, numCtx: o.NumCtx, askWindow: o.AskWindow})
}

func build(api string, e endpoint) (llm.Model, error) {
	b, ok := builders[api]
	if !ok {
		return nil, fmt.Errorf("no client for the %q API", api)
	}
	return b(e)
}
