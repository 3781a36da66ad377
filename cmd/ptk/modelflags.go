package main

import (
	"io"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptkit/ptk/internal/outfile"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/replay"
	"github.com/ptkit/ptk/ptool"
)

// modelFlags are the flags of the commands that call ptools ('ptk ptool
// call' and 'eval', 'ptk workflow plan' and 'run', 'ptk react'): which
// model answers, how, and whether its calls are recorded to a file or
// replayed from one.
type modelFlags struct {
	baseURL, apiKey, model, models string
	record, replay                 string
	mode                           string
	maxAttempts                    int
	stream                         bool
}

func (m *modelFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&m.baseURL, "base-url", "", "the model's OpenAI-compatible API (env PTK_BASE_URL; default "+defaultBaseURL+")")
	fl.StringVar(&m.apiKey, "api-key", "", "API key (env PTK_API_KEY, then OPENAI_API_KEY)")
	fl.StringVar(&m.model, "model", "", "model name, as for 'ptk run' (env PTK_MODEL; default each ptool's own, then the catalog's default)")
	fl.StringVar(&m.models, "models", "", "a model catalog file laid over the built-in one (env PTK_MODELS)")
	fl.StringVar(&m.mode, "mode", "", "how ptools ask for answers: auto, structured or protocol (default each ptool's own, else auto)")
	fl.IntVar(&m.maxAttempts, "max-attempts", 0, "most model calls for one ptool answer (default each ptool's own, else 3)")
	fl.StringVar(&m.record, "record", "", "append every model request and response to FILE as JSON lines")
	fl.StringVar(&m.replay, "replay", "", "answer model requests from a file made by --record, without the network")
	fl.BoolVar(&m.stream, "stream", false, "ask the models to stream")
}

// ptoolOptions are the options the flags give every ptool, after what its
// definition says.
func (m *modelFlags) ptoolOptions() []ptool.Option {
	opts := []ptool.Option{ptool.WithStream(m.stream)}
	if m.mode != "" {
		opts = append(opts, ptool.WithMode(ptool.Mode(m.mode)))
	}
	if m.maxAttempts > 0 {
		opts = append(opts, ptool.WithMaxAttempts(m.maxAttempts))
	}
	return opts
}

// modelSet resolves model names as the flags say, one model per name, each
// recorded to the one --record file or all answered by the --replay file.
type modelSet struct {
	// resolve gives the model for a ptool that names name: --model's (or
	// PTK_MODEL's) when given, else name's, else the catalog's default.
	resolve func(name string) (llm.Model, error)
	// named gives the model name names, whatever --model says.
	named func(name string) (llm.Model, error)
	close func()
	// keys names the catalog's key variables, which bash never gets.
	keys []string
}

// open checks the flags and opens what --record and --replay name. Close
// the set when the command is done.
func (m *modelFlags) open(cmd *cobra.Command) (*modelSet, error) {
	switch ptool.Mode(m.mode) {
	case "", ptool.ModeAuto, ptool.ModeStructured, ptool.ModeProtocol:
	default:
		return nil, usagef("--mode must be auto, structured or protocol, not %q", m.mode)
	}
	if m.maxAttempts < 0 {
		return nil, usagef("--max-attempts must be at least 1")
	}
	if m.record != "" && m.replay != "" {
		return nil, usagef("--record and --replay cannot be used together")
	}
	cat, err := loadCatalog(m.models)
	if err != nil {
		return nil, usageError{err}
	}
	override := setting(cmd, "model", m.model, "", "PTK_MODEL")
	set := &modelSet{close: func() {}, keys: keyEnvs(cat)}
	if m.replay != "" {
		p, err := replay.Open(m.replay)
		if err != nil {
			return nil, usagef("--replay: %v", err)
		}
		set.resolve = func(string) (llm.Model, error) { return p, nil }
		set.named = set.resolve
		return set, nil
	}
	var w io.Writer
	if m.record != "" {
		f, err := outfile.OpenAppend(m.record)
		if err != nil {
			return nil, usagef("--record: %v", err)
		}
		w = &lockedWriter{w: f}
		set.close = func() { f.Close() }
	}
	var mu sync.Mutex
	cache := map[string]llm.Model{}
	set.named = func(name string) (llm.Model, error) {
		if name == "" {
			name = cat.DefaultModel
		}
		mu.Lock()
		defer mu.Unlock()
		if mod, ok := cache[name]; ok {
			return mod, nil
		}
		mod, err := resolveModels(cat, choice(cmd, splitList(name), m.baseURL, m.apiKey))
		if err != nil {
			return nil, usageError{err}
		}
		if w != nil {
			mod = replay.Record(mod, w)
		}
		cache[name] = mod
		return mod, nil
	}
	set.resolve = func(name string) (llm.Model, error) {
		if override != "" {
			name = override
		}
		return set.named(name)
	}
	return set, nil
}

// lockedWriter lets the recorders of several models write one file a line
// at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
