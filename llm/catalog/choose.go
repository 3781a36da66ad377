package catalog

import (
	"cmp"
	"errors"
	"os"
	"strings"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/openai"
)

// DefaultBaseURL is the OpenAI-compatible server that a model the catalog
// does not have is asked at when no base URL is given: a local Ollama.
const DefaultBaseURL = "http://localhost:11434/v1"

// Choose returns the model names say, as ptk's commands read --model: each
// name of the comma-separated list from the catalog, with o's APIKey and
// BaseURL in place of its provider's when they are set, or, for a name the
// catalog does not have, the model of that name at the OpenAI-compatible
// server o.BaseURL (DefaultBaseURL when empty), with o.APIKey, else
// $OPENAI_API_KEY (spoken to with Ollama's native API when o.API says
// "ollama" for it). Several names make a fallback, tried in order
// (llm.Fallback).
func (c *Catalog) Choose(names string, o Options) (llm.Model, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var models []llm.Model
	for name := range strings.SplitSeq(names, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		m, err := c.Resolve(name, o)
		if errors.Is(err, ErrUnknown) {
			base := cmp.Or(o.BaseURL, DefaultBaseURL)
			var opts []openai.Option
			if o.AskWindow {
				// A model of the user's own server, asked for its window.
				opts = append(opts, openai.WithWindowProbe())
			}
			if key := cmp.Or(o.APIKey, getenv("OPENAI_API_KEY")); key != "" {
				opts = append(opts, openai.WithAPIKey(key))
			}
			var client llm.Model = openai.New(base, opts...)
			if o.API != nil && o.API("openai", base) == "ollama" {
				if oc, berr := Build("ollama", base, "", o); berr == nil {
					client = oc
				}
			}
			m, err = Named(client, name), nil
		}
		if err != nil {
			return nil, err
		}
		models = append(models, m)
	}
	switch len(models) {
	case 0:
		return nil, errors.New("no model named")
	case 1:
		return models[0], nil
	}
	return llm.Fallback(models...), nil
}
