// Package catalog is ptk's model catalog, in the seed design's LLMS.json
// shape: models by name with their provider, model id, prices, context
// window, output cap, tool protocol and streaming; providers by name with
// their API, base URL and the environment variable that holds the key. A
// name resolves to a ready llm.Model that prices its calls and says
// whether it takes native tools.
//
// The catalog ptk ships (Default) is overlaid by the user's: ptk loads
// models.json from its config folder, then $PTK_MODELS, then --models FILE;
// a later file replaces a model or a provider of the same name, entry by
// entry.
package catalog

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/ptkit/ptk/llm"
)

// Catalog is a set of models and the providers that serve them.
type Catalog struct {
	// DefaultModel is the model used when none is named.
	DefaultModel string              `json:"default_model,omitempty"`
	Models       map[string]Model    `json:"models"`
	Providers    map[string]Provider `json:"providers"`
}

// Model is one model of the catalog.
type Model struct {
	// Provider names the provider that serves it.
	Provider string `json:"provider"`
	// ModelID is the model's name at the provider.
	ModelID string `json:"model_id"`
	// Cost is the price in US dollars per million tokens.
	Cost llm.Price `json:"cost"`
	// ContextWindow and MaxOutput are in tokens (0: unknown).
	ContextWindow int `json:"context_window,omitempty"`
	MaxOutput     int `json:"max_output,omitempty"`
	// ToolProtocol is "native" when the model calls tools through the
	// provider's API, "ptk" when it is taught the text protocol.
	ToolProtocol string `json:"tool_protocol"`
	// Streaming reports that the provider streams the model's answers.
	Streaming bool `json:"streaming"`
}

// Provider is one API endpoint.
type Provider struct {
	// API is the wire format: "openai" (Chat Completions, the default),
	// "anthropic", "gemini", "llamacpp" (llama.cpp's /completion),
	// "completions" (the legacy /v1/completions), "ollama" (Ollama's
	// native /api/chat, which takes num_ctx per request) or "browser" (a
	// chat page in a browser, llm/browser: a model's model_id names its
	// site, a built-in one or a site file).
	API string `json:"api,omitempty"`
	// APIBase is the base URL. For the browser API, it is where the
	// browser is: its remote debugging address (http://127.0.0.1:9222), or
	// a profile directory to start one with; $PTK_BROWSER replaces it.
	APIBase string `json:"api_base"`
	// APIKeyEnv names the environment variable that holds the API key
	// (empty: no key).
	APIKeyEnv string `json:"api_key_env,omitempty"`
}

//go:embed default.json
var defaultJSON []byte

// Default returns the catalog ptk ships: common hosted models with their
// published prices, and local ones (Ollama, llama.cpp) at no cost.
func Default() *Catalog {
	c, err := Parse(defaultJSON)
	if err != nil {
		panic("catalog: the embedded default catalog is invalid: " + err.Error())
	}
	return c
}

// Parse reads a catalog and checks it: every model names a provider of the
// catalog (or of one it will be merged over, so a missing provider is only
// checked by Check), a tool protocol of "native" or "ptk", and prices that
// are not negative.
//
// A catalog written for the seed design's LLMS.json loads unchanged: when
// its providers name their key variable "env_key" and none of its models
// says "tool_protocol", it is read as the seed wrote it, with env_key as
// api_key_env, costs in US dollars per 1,000 tokens (so {"input": 0.005}
// is $5 per million), and tool_protocol "native" (an agent in auto mode
// still teaches the text protocol to a model that refuses tools).
func Parse(data []byte) (*Catalog, error) {
	var raw struct {
		DefaultModel string                  `json:"default_model,omitempty"`
		Models       map[string]Model        `json:"models"`
		Providers    map[string]seedProvider `json:"providers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	c := Catalog{DefaultModel: raw.DefaultModel, Models: raw.Models}
	envKey, toolProtocol := false, false
	if raw.Providers != nil {
		c.Providers = make(map[string]Provider, len(raw.Providers))
	}
	for name, p := range raw.Providers {
		if p.EnvKey != "" {
			if p.APIKeyEnv != "" && p.APIKeyEnv != p.EnvKey {
				return nil, fmt.Errorf("provider %q: env_key and api_key_env name different variables", name)
			}
			p.APIKeyEnv, envKey = p.EnvKey, true
		}
		c.Providers[name] = p.Provider
	}
	for _, m := range c.Models {
		toolProtocol = toolProtocol || m.ToolProtocol != ""
	}
	if seed := envKey && !toolProtocol; seed {
		for name, m := range c.Models {
			m.ToolProtocol = "native"
			m.Cost.Input *= 1000
			m.Cost.Output *= 1000
			m.Cost.CacheRead *= 1000
			m.Cost.CacheWrite *= 1000
			c.Models[name] = m
		}
	}
	for name, m := range c.Models {
		switch {
		case m.Provider == "":
			return nil, fmt.Errorf("model %q: no provider", name)
		case m.ToolProtocol != "native" && m.ToolProtocol != "ptk":
			return nil, fmt.Errorf("model %q: tool_protocol must be \"native\" or \"ptk\", not %q", name, m.ToolProtocol)
		case m.Cost.Input < 0 || m.Cost.Output < 0 || m.Cost.CacheRead < 0 || m.Cost.CacheWrite < 0:
			return nil, fmt.Errorf("model %q: a negative price", name)
		}
		if m.ModelID == "" {
			m.ModelID = name
			c.Models[name] = m
		}
	}
	for name, p := range c.Providers {
		if !slices.Contains(APIs(), cmp.Or(p.API, "openai")) {
			return nil, fmt.Errorf("provider %q: api must be one of %s, not %q", name, strings.Join(APIs(), ", "), p.API)
		}
		if p.APIBase == "" {
			return nil, fmt.Errorf("provider %q: no api_base", name)
		}
	}
	return &c, nil
}

// seedProvider is a provider as a catalog file may write it: ptk's fields,
// or the seed design's env_key for api_key_env.
type seedProvider struct {
	Provider
	EnvKey string `json:"env_key,omitempty"`
}

// Load reads a catalog file.
func Load(file string) (*Catalog, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return c, nil
}

// Merge returns a catalog with over's models and providers laid over c's,
// entry by entry, and over's default model if it names one.
func (c *Catalog) Merge(over *Catalog) *Catalog {
	out := &Catalog{DefaultModel: c.DefaultModel, Models: maps.Clone(c.Models), Providers: maps.Clone(c.Providers)}
	if out.Models == nil {
		out.Models = map[string]Model{}
	}
	if out.Providers == nil {
		out.Providers = map[string]Provider{}
	}
	maps.Copy(out.Models, over.Models)
	maps.Copy(out.Providers, over.Providers)
	if over.DefaultModel != "" {
		out.DefaultModel = over.DefaultModel
	}
	return out
}

// Check reports a model whose provider the catalog does not have, and a
// default model it does not have.
func (c *Catalog) Check() error {
	for _, name := range slices.Sorted(maps.Keys(c.Models)) {
		if _, ok := c.Providers[c.Models[name].Provider]; !ok {
			return fmt.Errorf("model %q: no provider %q in the catalog", name, c.Models[name].Provider)
		}
	}
	if c.DefaultModel != "" {
		if _, ok := c.Models[c.DefaultModel]; !ok {
			return fmt.Errorf("default_model %q is not in the catalog", c.DefaultModel)
		}
	}
	return nil
}

// Names returns the models' names, sorted.
func (c *Catalog) Names() []string { return slices.Sorted(maps.Keys(c.Models)) }

// KeyEnvs returns the environment variables that hold the providers' API
// keys (their api_key_env), sorted, each once: what a program that runs a
// model's commands or starts tool servers keeps from them, whatever the
// names look like (a key under MY_SERVICE says nothing of what it is).
func (c *Catalog) KeyEnvs() []string {
	var names []string
	for _, p := range c.Providers {
		if p.APIKeyEnv != "" {
			names = append(names, p.APIKeyEnv)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// ErrUnknown is returned by Resolve for a name the catalog does not have.
var ErrUnknown = errors.New("not in the catalog")

// Options adjust how a model is resolved.
type Options struct {
	// APIKey, when set, is used instead of the provider's key variable.
	APIKey string
	// BaseURL, when set, is used instead of the provider's api_base, for
	// every API but the browser's ($PTK_BROWSER is its).
	BaseURL string
	// Getenv reads the key variable; default os.Getenv.
	Getenv func(string) string
	// API, when set, chooses the API a provider is spoken to with, given
	// the catalog's and the base URL: ptk uses it to speak Ollama's native
	// API to a server it finds is Ollama.
	API func(api, base string) string
	// NumCtx is the context size an Ollama client sends (0: its own
	// choice, see llm/ollama).
	NumCtx int
	// AskWindow makes the OpenAI-compatible client of a model the catalog
	// prices at nothing (one on the user's own server) ask its server for
	// the model's window (openai.WithWindowProbe).
	AskWindow bool
}

// Resolve returns the named model ready to use: a client for its
// provider's API, asking for its model id, pricing its calls, and saying
// whether it takes native tools (llm.ToolSupporter). A name the catalog
// does not have is an error that wraps ErrUnknown.
func (c *Catalog) Resolve(name string, o Options) (llm.Model, error) {
	m, ok := c.Models[name]
	if !ok {
		return nil, fmt.Errorf("model %q: %w", name, ErrUnknown)
	}
	p, ok := c.Providers[m.Provider]
	if !ok {
		return nil, fmt.Errorf("model %q: no provider %q in the catalog", name, m.Provider)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	key := o.APIKey
	if key == "" && p.APIKeyEnv != "" {
		key = getenv(p.APIKeyEnv)
	}
	base := cmp.Or(o.BaseURL, p.APIBase)
	if p.API == "browser" {
		base = p.APIBase // a browser's address is not a server's base URL
	}
	api := cmp.Or(p.API, "openai")
	if o.API != nil {
		api = o.API(api, base)
	}
	local := m.Cost == (llm.Price{})
	client, err := build(api, endpoint{base: base, key: key, id: m.ModelID, getenv: getenv, numCtx: o.NumCtx, askWindow: o.AskWindow && local})
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", name, err)
	}
	e := &entry{named: named{inner: client, id: m.ModelID, provider: ProviderName(m.Provider)}, native: m.ToolProtocol == "native", window: m.ContextWindow, local: local}
	return llm.Priced(e, m.Cost), nil
}

// Named returns m asking for model id in every request, whatever the
// request names: what a fallback of several models needs. It unwraps to m,
// so m's capabilities are found through it ([llm.As]).
func Named(m llm.Model, id string) llm.Model {
	return &named{inner: m, id: id}
}

// named is a provider's client set to one model.
type named struct {
	inner llm.Model
	id    string
	// provider is the catalog's provider, as the GenAI conventions name
	// it ("" for a model named outside the catalog).
	provider string
}

// conventionNames are the OpenTelemetry GenAI conventions' names
// (gen_ai.provider.name) of the providers a catalog may key otherwise.
var conventionNames = map[string]string{
	"gemini":  "gcp.gemini",
	"google":  "gcp.gemini",
	"vertex":  "gcp.vertex_ai",
	"mistral": "mistral_ai",
	"xai":     "x_ai",
	"bedrock": "aws.bedrock",
	"azure":   "azure.ai.openai",
	"watsonx": "ibm.watsonx.ai",
}

// ProviderName is the GenAI conventions' name of a catalog's provider key:
// "gcp.gemini" for "gemini", the key itself where the conventions use it
// ("openai", "anthropic", "deepseek", "groq") or name none ("ollama",
// "llamacpp").
func ProviderName(key string) string {
	if n, ok := conventionNames[key]; ok {
		return n
	}
	return key
}

// ProviderName is the catalog's provider, else its client's
// (llm.ProviderNamer).
func (e *named) ProviderName() string {
	if e.provider != "" {
		return e.provider
	}
	return llm.ProviderOf(e.inner)
}

// entry is a provider's client set to one of the catalog's models, which
// says whether it takes native tools and how large its window is.
type entry struct {
	named
	native bool
	window int
	// local is a model the catalog prices at nothing: served by a server
	// of the user's, whose window is its own setting.
	local bool
}

var (
	_ llm.Streamer      = (*named)(nil)
	_ llm.Unwrapper     = (*named)(nil)
	_ llm.Windower      = (*named)(nil)
	_ llm.ModelIDer     = (*named)(nil)
	_ llm.ProviderNamer = (*named)(nil)
	_ llm.ToolSupporter = (*entry)(nil)
	_ llm.Windower      = (*entry)(nil)
)

// ContextWindow is the window of a model the catalog prices (a hosted one)
// as the catalog says, without asking its provider. A free model is served
// by the user's own server, set up with a context of its own (Ollama's
// num_ctx, llama.cpp's --ctx-size), which the server is asked for first;
// the catalog's number is then what the model was trained for.
func (e *entry) ContextWindow(ctx context.Context, model string) (llm.Window, error) {
	catalog := llm.Window{Tokens: e.window, Trained: e.window, Source: "the catalog"}
	if !e.local && e.window > 0 {
		return catalog, nil
	}
	w, err := e.named.ContextWindow(ctx, model)
	if err != nil || !w.Known() {
		if e.window > 0 {
			return catalog, nil
		}
		return w, err
	}
	w.Trained = max(w.Trained, e.window)
	return w, nil
}

// ContextWindow asks the client for the window of the model it is set to.
func (e *named) ContextWindow(ctx context.Context, _ string) (llm.Window, error) {
	return llm.ContextWindowOf(ctx, e.inner, e.id)
}

// SupportsNativeTools is what the catalog says (tool_protocol "native").
func (e *entry) SupportsNativeTools() bool { return e.native }

// Unwrap returns the provider's client.
func (e *named) Unwrap() llm.Model { return e.inner }

// ModelID is the model id it asks for.
func (e *named) ModelID() string { return e.id }

func (e *named) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	req.Model = e.id
	return e.inner.Generate(ctx, req)
}

func (e *named) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	req.Model = e.id
	return llm.StreamFrom(ctx, e.inner, req)
}
