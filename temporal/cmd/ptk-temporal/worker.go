package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/worker"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/ptkdirs"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/catalog"
	"github.com/ptkit/ptk/llm/openai"
	"github.com/ptkit/ptk/mcp"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/tools/fs"
	"github.com/ptkit/ptk/tools/shell"
	"github.com/ptkit/ptk/trace"

	ptktemporal "github.com/ptkit/ptk/temporal"
)

const defaultBaseURL = "http://localhost:11434/v1"

type workerFlags struct {
	conn
	model, models, baseURL, apiKey string
	workspace, tools, mcp, policy  string
	approval, store, ptools        string
	sandbox                        bool
}

func newWorkerCmd() *cobra.Command {
	var f workerFlags
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT [flags]",
		Short: "Run ptk's workflows and activities for a Temporal task queue",
		Long: `worker registers ptk's workflows (agent runs, ReAct runs, workflows of
ptools) and their activities (model calls, tool calls, ptool calls, records)
with the Temporal server, and runs them until it is stopped (Ctrl-C or
SIGTERM: it finishes the calls it is running first).

Its models are those ptk run knows (--model names the default one; a run
may name another), its tools ptk's built-ins over --workspace (--tools
picks some) and the tools of the MCP servers of --mcp. Calls to tools that
change something run as --approval says (ask: a run waits for 'ptk runs
approve'; auto-edit, yolo, plan), after the rules of --policy.

Runs are recorded in the trace store (--trace-store: a SQLite file, or a
postgres:// URL that every worker shares), and so is the ledger that keeps a
tool that changes something from running twice for one call when a worker
dies in the middle of it: workers on several machines need PostgreSQL.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorker(cmd, f) },
	}
	f.conn.flags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "the default model: from the catalog, else a model of the server at --base-url (env PTK_MODEL)")
	fl.StringVar(&f.models, "models", "", "a model catalog file laid over the built-in one (env PTK_MODELS)")
	fl.StringVar(&f.baseURL, "base-url", "", "the OpenAI-compatible API of models not in the catalog (env PTK_BASE_URL; default "+defaultBaseURL+")")
	fl.StringVar(&f.apiKey, "api-key", "", "API key (env PTK_API_KEY, then OPENAI_API_KEY)")
	fl.StringVar(&f.workspace, "workspace", ".", "the folder the tools work in; file tools cannot leave it")
	fl.StringVar(&f.tools, "tools", "", "comma-separated built-in tools (default: all)")
	fl.StringVar(&f.mcp, "mcp", "", "an MCP configuration file whose servers' tools runs may call")
	fl.StringVar(&f.policy, "policy", "", "a policy file that allows or denies calls")
	fl.StringVar(&f.ptools, "ptools", "", "a ptools file (as ptk workflow reads it) whose ptools workflows and ReAct runs may call")
	fl.StringVar(&f.approval, "approval", "ask", "calls that change something: ask (wait for ptk runs approve), auto-edit, yolo or plan")
	fl.StringVar(&f.store, "trace-store", "", "the trace store: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default ptk's traces.db)")
	fl.BoolVar(&f.sandbox, "sandbox", false, "run bash under bubblewrap: system read-only, workspace writable, no network")
	return cmd
}

func runWorker(cmd *cobra.Command, f workerFlags) error {
	preset, err := tool.ParsePreset(f.approval)
	if err != nil {
		return usageError{err}
	}
	w := &ptktemporal.Worker{Preset: preset}
	cat, err := workerCatalog(f)
	if err != nil {
		return usageError{err}
	}
	w.Model = modelResolver(f, cat)
	root, tools, closeTools, err := workerTools(cmd, f, cat.KeyEnvs())
	if err != nil {
		return err
	}
	defer closeTools()
	w.Tools = tools
	w.Instructions = "You are a coding assistant working in the folder " + root + ". " +
		"Use the tools to look at the files before you answer or change them; paths are relative to that folder. " +
		"Make the smallest change that does the job, and check it (build, tests) when you can. " +
		"When you have done what was asked, answer the user directly and concisely."
	if f.ptools != "" {
		if w.PTools, err = loadPTools(f.ptools, w.Model); err != nil {
			return usageError{err}
		}
	}
	if f.policy != "" {
		if w.Policy, err = tool.LoadPolicy(f.policy); err != nil {
			return usagef("--policy: %v", err)
		}
	}
	dsn := first(f.store, os.Getenv("PTK_TRACE_DB"))
	if dsn == "" {
		if dsn, err = trace.DefaultPath(); err != nil {
			return usageError{err}
		}
	}
	ctx := cmd.Context()
	if w.Store, err = trace.Open(ctx, dsn); err != nil {
		return usageError{err}
	}
	defer w.Store.Close()
	if w.Ledger, err = ptktemporal.OpenLedger(ctx, dsn); err != nil {
		return usageError{err}
	}
	defer w.Ledger.Close()

	c, err := f.conn.dial(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	wk := worker.New(c, f.taskQueue(), worker.Options{})
	w.Register(wk)
	if err := wk.Start(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "ptk worker: task queue %s at %s, %d tools, trace store %s\n", f.taskQueue(), first(f.hostPort, os.Getenv("PTK_TEMPORAL_ADDRESS")), len(tools), w.Store.Name())
	<-ctx.Done()
	wk.Stop()
	return nil
}

// modelResolver resolves the models runs name, as ptk run does: a name of
// the catalog, else a model of the OpenAI-compatible server at the base
// URL; "" is the default model. Each model is made once.
func modelResolver(f workerFlags, cat *catalog.Catalog) func(string) (llm.Model, error) {
	def := first(f.model, os.Getenv("PTK_MODEL"), cat.DefaultModel)
	baseURL := first(f.baseURL, os.Getenv("PTK_BASE_URL"))
	apiKey := first(f.apiKey, os.Getenv("PTK_API_KEY"))
	var mu sync.Mutex
	made := map[string]llm.Model{}
	return func(name string) (llm.Model, error) {
		if name == "" {
			name = def
		}
		if name == "" {
			return nil, errors.New("no model named: the run names none and the worker has no --model")
		}
		mu.Lock()
		defer mu.Unlock()
		if m, ok := made[name]; ok {
			return m, nil
		}
		m, err := cat.Resolve(name, catalog.Options{BaseURL: baseURL, APIKey: apiKey})
		if errors.Is(err, catalog.ErrUnknown) {
			var opts []openai.Option
			if key := first(apiKey, os.Getenv("OPENAI_API_KEY")); key != "" {
				opts = append(opts, openai.WithAPIKey(key))
			}
			m, err = catalog.Named(openai.New(first(baseURL, defaultBaseURL), opts...), name), nil
		}
		if err != nil {
			return nil, err
		}
		made[name] = m
		return m, nil
	}
}

// workerCatalog is the built-in model catalog with $PTK_MODELS's and
// --models' laid over it.
func workerCatalog(f workerFlags) (*catalog.Catalog, error) {
	cat := catalog.Default()
	for _, file := range []string{os.Getenv("PTK_MODELS"), f.models} {
		if file == "" {
			continue
		}
		over, err := catalog.Load(file)
		if err != nil {
			return nil, fmt.Errorf("model catalog %v", err)
		}
		cat = cat.Merge(over)
	}
	return cat, nil
}

// workerTools opens the workspace and returns the built-in tools named by
// --tools, and the MCP servers' tools.
//
// hidden names the variables bash and the stdio MCP servers never get,
// whatever their names look like: the catalog's key variables
// ([catalog.Catalog.KeyEnvs]).
func workerTools(cmd *cobra.Command, f workerFlags, hidden []string) (root string, tools []ptk.Tool, closeFn func(), err error) {
	if root, err = filepath.Abs(f.workspace); err != nil {
		return "", nil, nil, usagef("--workspace %s: %v", f.workspace, err)
	}
	// As ptk's own: the file tools never write ptk's folders, and bash's
	// commands get no variable that looks like a secret but those the
	// user names in PTK_PASS_ENV.
	ws, err := fs.New(root, fs.WithProtected(ptkdirs.Folders()...))
	if err != nil {
		return "", nil, nil, usagef("--workspace %s: %v", f.workspace, err)
	}
	shellOpts := []shell.Option{shell.WithHiddenEnv(hidden...), shell.WithPassEnv(splitList(os.Getenv("PTK_PASS_ENV"))...), shell.WithProtected(ptkdirs.Folders()...)}
	if f.sandbox {
		shellOpts = append(shellOpts, shell.WithSandbox())
	}
	sh, err := shell.New(root, shellOpts...)
	if err != nil {
		ws.Close()
		return "", nil, nil, usageError{err}
	}
	reg, err := tool.NewRegistry(append(append(ws.Tools(), ws.EditTools()...), sh.Tool())...)
	if err != nil {
		ws.Close()
		return "", nil, nil, err
	}
	tools = reg.Tools()
	if names := splitList(f.tools); len(names) > 0 {
		if tools, err = reg.Select(names...); err != nil {
			ws.Close()
			return "", nil, nil, usagef("--tools: %v", err)
		}
	}
	closeFn = func() { ws.Close() }
	if f.mcp != "" {
		cfg, err := mcp.LoadConfig(f.mcp)
		if err != nil {
			ws.Close()
			return "", nil, nil, usagef("--mcp: %v", err)
		}
		logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
		cl, err := mcp.Start(context.WithoutCancel(cmd.Context()), cfg, mcp.Options{Logger: logger, HiddenEnv: hidden})
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "ptk: %v; the tools of the servers that did not start are left out\n", err)
		}
		tools = append(tools, cl.Tools()...)
		closeFn = func() { cl.Close(); ws.Close() }
	}
	return root, tools, closeFn, nil
}

// loadPTools reads a ptools file into a registry, each ptool with the
// model its definition names (the worker's default for none).
func loadPTools(file string, model func(string) (llm.Model, error)) (*ptool.Registry, error) {
	defs, err := ptool.ReadDefs(file)
	if err != nil {
		return nil, err
	}
	reg := ptool.NewRegistry()
	for _, d := range defs {
		m, err := model(d.Model)
		if err != nil {
			return nil, fmt.Errorf("%s: ptool %s: %w", file, d.Name, err)
		}
		p, err := d.New(ptool.WithModel(m))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if err := reg.Register(p); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

func splitList(s string) []string {
	var out []string
	for n := range strings.SplitSeq(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
