package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/catalog"
	"github.com/ptkit/ptk/llm/ollama"
	"github.com/ptkit/ptk/llm/replay"
)

// loadCatalog returns ptk's catalog with the user's laid over it: the
// models.json in ptk's config folder, then $PTK_MODELS, then file (--models);
// with a browser model browser:NAME for each site file NAME.json in the
// sites folder of ptk's config folder laid over the built-in catalog (a
// copy of a built-in site there, fixed, replaces it).
func loadCatalog(file string) (*catalog.Catalog, error) {
	c := catalog.Default()
	var files []string
	if dir, err := os.UserConfigDir(); err == nil {
		if f := filepath.Join(dir, "ptk", "models.json"); fileExists(f) {
			files = append(files, f)
		}
		c = c.Merge(siteModels(filepath.Join(dir, "ptk", "sites")))
	}
	if f := os.Getenv("PTK_MODELS"); f != "" {
		files = append(files, f)
	}
	if file != "" {
		files = append(files, file)
	}
	for _, f := range files {
		over, err := catalog.Load(f)
		if err != nil {
			return nil, fmt.Errorf("model catalog %v", err)
		}
		c = c.Merge(over)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("model catalog: %w", err)
	}
	return c, nil
}

// keyEnvs names the variables that hold the catalog's API keys (its
// providers' api_key_env), which bash and stdio MCP servers never get
// whatever the names look like: a key under MY_SERVICE says nothing of what
// it is. A nil cat is the catalog without --models (the built-in one, the
// user's models.json and $PTK_MODELS); one that does not load names none,
// as its command reports the error itself when it needs a model.
func keyEnvs(cat *catalog.Catalog) []string {
	if cat == nil {
		var err error
		if cat, err = loadCatalog(""); err != nil {
			return nil
		}
	}
	return cat.KeyEnvs()
}

// siteModels are the browser models of the site files in dir, each
// browser:NAME for NAME.json, served by the catalog's browser provider.
func siteModels(dir string) *catalog.Catalog {
	out := &catalog.Catalog{Models: map[string]catalog.Model{}}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		out.Models["browser:"+name] = catalog.Model{Provider: "browser", ModelID: f, ToolProtocol: "ptk", Streaming: true}
	}
	return out
}

func fileExists(f string) bool {
	_, err := os.Stat(f)
	return err == nil
}

// modelChoice is what --model and the connection flags say.
type modelChoice struct {
	names []string
	// baseURL and apiKey are the flags' or environment's values; the
	// explicit ones override the catalog's.
	baseURL, apiKey                 string
	baseURLExplicit, apiKeyExplicit bool
	// ollama, for the commands that run the agent (run, chat), asks a
	// model's own server for its context window, and speaks Ollama's
	// native API (llm/ollama, which sends num_ctx) to a server found to be
	// Ollama by its /api/version, instead of its OpenAI-compatible one,
	// which takes no context size; numCtx is the size it sends (--context;
	// 0: its own choice).
	ollama bool
	numCtx int
}

// choice is the model choice the command's flags and the environment make
// for names: --base-url (PTK_BASE_URL), --api-key (PTK_API_KEY, then
// OPENAI_API_KEY), and whether each was given explicitly.
func choice(cmd *cobra.Command, names []string, baseURLFlag, apiKeyFlag string) modelChoice {
	return modelChoice{names: names,
		baseURL:         setting(cmd, "base-url", baseURLFlag, defaultBaseURL, "PTK_BASE_URL"),
		apiKey:          setting(cmd, "api-key", apiKeyFlag, "", "PTK_API_KEY", "OPENAI_API_KEY"),
		baseURLExplicit: cmd.Flags().Changed("base-url") || os.Getenv("PTK_BASE_URL") != "",
		apiKeyExplicit:  cmd.Flags().Changed("api-key") || os.Getenv("PTK_API_KEY") != ""}
}

// ollamaServers remembers which base URLs are Ollama's, for the process.
var ollamaServers sync.Map

// isOllama reports whether the server at base is Ollama (GET /api/version),
// asking once per base URL.
func isOllama(base string) bool {
	if v, ok := ollamaServers.Load(base); ok {
		return v.(bool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := ollama.Detect(ctx, base, nil)
	ollamaServers.Store(base, err == nil)
	return err == nil
}

// resolveModels turns --model NAME[,NAME...] into one model: each name
// through the catalog, or, when the catalog does not have it, as a model
// of the OpenAI-compatible server at the base URL; several names make a
// fallback, tried in order (catalog.Choose, with the connection flags that
// were given explicitly).
func resolveModels(c *catalog.Catalog, ch modelChoice) (llm.Model, error) {
	o := catalog.Options{BaseURL: ch.baseURL, APIKey: ch.apiKey, NumCtx: ch.numCtx, AskWindow: ch.ollama}
	if ch.ollama {
		o.API = func(api, base string) string {
			if api == "openai" && isOllama(base) {
				return "ollama"
			}
			return api
		}
	}
	if !ch.baseURLExplicit {
		o.BaseURL = ""
	}
	if !ch.apiKeyExplicit {
		o.APIKey = ""
	}
	m, err := c.Choose(strings.Join(ch.names, ","), o)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func newModelsCmd() *cobra.Command {
	var file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "models [--models FILE] [--json]",
		Short: "List the model catalog: providers, capabilities and prices",
		Long: `models lists the models ptk knows by name, from its built-in catalog with
yours laid over it (models.json in ptk's config folder, $PTK_MODELS, --models
FILE). Prices are US dollars per million tokens. "tools" says how the model
calls tools: native (the provider's function calling) or ptk (the text
protocol). The default model is marked with *.

A catalog file has the shape
  {"default_model": "mine",
   "providers": {"local": {"api": "openai", "api_base": "http://localhost:8000/v1", "api_key_env": "LOCAL_KEY"}},
   "models": {"mine": {"provider": "local", "model_id": "qwen3-32b", "cost": {"input": 0, "output": 0},
              "context_window": 32768, "max_output": 8192, "tool_protocol": "native", "streaming": true}}}
api is openai, anthropic, gemini, llamacpp, completions, ollama (Ollama's
native API; ptk run and chat also use it for an openai provider whose
server they find is Ollama, since it takes the context size per request)
or browser.

browser:NAME models are chat web pages (ChatGPT, Claude, Gemini, AI
Studio) driven in your own browser, signed in by you: the browser
provider's api_base is the browser's debugging address
(http://127.0.0.1:9222) or a profile directory for ptk to start one with
($PTK_BROWSER replaces it). Their selectors are maintained by hand and
break when a site changes its page; a site file NAME.json in the sites
folder of ptk's config folder adds browser:NAME (or replaces it). A site's terms may
forbid automated use: see docs/browser.md.

With --json, stdout is one JSON array, a model an object, sorted by name:
  [{"name": "gpt-4o-mini", "default": false, "provider": "openai", "api": "openai",
    "base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY",
    "model_id": "gpt-4o-mini", "tools": "native", "streaming": true,
    "context_window": 128000, "max_output": 16384,
    "cost": {"input": 0.15, "output": 0.6, "cache_read": 0.075, "cache_write": 0}}, …]
Unknown sizes are 0; prices are US dollars per million tokens.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("models takes no arguments")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := loadCatalog(file)
			if err != nil {
				return usageError{err}
			}
			if asJSON {
				return writeModelsJSON(cmd.OutOrStdout(), c)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 8, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tPROVIDER\tMODEL ID\tTOOLS\tSTREAM\tCONTEXT\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE")
			for _, name := range c.Names() {
				m := c.Models[name]
				mark := ""
				if name == c.DefaultModel {
					mark = "*"
				}
				fmt.Fprintf(w, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, mark, m.Provider, m.ModelID, m.ToolProtocol,
					yesNo(m.Streaming), tokens(m.ContextWindow), usd(m.Cost.Input), usd(m.Cost.Output), usd(m.Cost.CacheRead), usd(m.Cost.CacheWrite))
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&file, "models", "", "a catalog file laid over the others")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the catalog as a JSON array")
	return cmd
}

// modelJSON is a model as 'ptk models --json' prints it: every field
// always there, so that a script can rely on the shape.
type modelJSON struct {
	Name          string        `json:"name"`
	Default       bool          `json:"default"`
	Provider      string        `json:"provider"`
	API           string        `json:"api"`
	BaseURL       string        `json:"base_url"`
	APIKeyEnv     string        `json:"api_key_env"`
	ModelID       string        `json:"model_id"`
	Tools         string        `json:"tools"`
	Streaming     bool          `json:"streaming"`
	ContextWindow int           `json:"context_window"`
	MaxOutput     int           `json:"max_output"`
	Cost          modelCostJSON `json:"cost"`
}

type modelCostJSON struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
}

func writeModelsJSON(w io.Writer, c *catalog.Catalog) error {
	out := []modelJSON{}
	for _, name := range c.Names() {
		m := c.Models[name]
		p := c.Providers[m.Provider]
		api := p.API
		if api == "" {
			api = "openai"
		}
		out = append(out, modelJSON{Name: name, Default: name == c.DefaultModel, Provider: m.Provider, API: api,
			BaseURL: p.APIBase, APIKeyEnv: p.APIKeyEnv, ModelID: m.ModelID, Tools: m.ToolProtocol, Streaming: m.Streaming,
			ContextWindow: m.ContextWindow, MaxOutput: m.MaxOutput,
			Cost: modelCostJSON{m.Cost.Input, m.Cost.Output, m.Cost.CacheRead, m.Cost.CacheWrite}})
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func tokens(n int) string {
	switch {
	case n == 0:
		return "-"
	case n >= 1_000_000 && n%1_000_000 < 100_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func usd(p float64) string {
	if p == 0 {
		return "-"
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("$%.3f", p), "0"), ".")
}

// recordOrReplay wraps m for --record FILE, or replaces it for --replay
// FILE (no network: every answer comes from the file). Call done when the
// run is over.
func recordOrReplay(m llm.Model, record, replayFile string) (_ llm.Model, done func() error, err error) {
	nothing := func() error { return nil }
	switch {
	case record != "" && replayFile != "":
		return nil, nil, errors.New("--record and --replay cannot be used together")
	case replayFile != "":
		p, err := replay.Open(replayFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--replay: %w", err)
		}
		return p, nothing, nil
	case record != "":
		rec, f, err := replay.RecordFile(m, record)
		if err != nil {
			return nil, nil, fmt.Errorf("--record: %w", err)
		}
		return rec, f.Close, nil
	}
	return m, nothing, nil
}
