package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/acp"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/internal/ptkdirs"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/catalog"
	"github.com/ptkit/ptk/mcp"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/trace"
)

func newACPCmd() *cobra.Command {
	var f runFlags
	var approval, traceDBFlag string
	cmd := &cobra.Command{
		Use:   "acp [flags]",
		Short: "Be the coding agent of an editor, over the Agent Client Protocol (Zed, JetBrains, Neovim, VS Code)",
		Long: `acp makes ptk an agent of the Agent Client Protocol: the editor starts
'ptk acp' and speaks JSON-RPC with it on stdin and stdout. Each session works
in the folder the editor opens (file tools cannot leave it), streams the
answer, shows each tool call with its result (a diff for an edit), and asks
the editor before a call that changes something: allow once, always for that
tool, or reject. The policy file decides first, as in ptk run; then the
session's mode: ask (the default; --approval sets it), auto-edit (edits run
without asking, commands ask) or plan (nothing is changed).

When the editor offers its files and terminals, read_file, edit_file and
write_file go through its buffers (unsaved changes are seen, edits land in
the editor) and bash runs in its terminal; --sandbox keeps bash on this
machine, under bubblewrap. The editor's MCP servers start with the session.
Conversations are kept in the trace store, so the editor can load one after
a restart. /help in a session lists ptk's commands.

The model flags are ptk run's: the editor can switch to any model of the
catalog ('ptk models'). In Zed's settings.json:
  "agent_servers": {"ptk": {"command": "ptk", "args": ["acp", "--model", "qwen3:8b"]}}
docs/editors.md has JetBrains, Neovim and VS Code.

--temporal HOST:PORT runs each prompt turn durably on ptk's workers (ptk
worker, with its model, tools and workspace; ptk-temporal must be installed):
a call the run waits for is the editor's permission request, and the
editor's cancel cancels the run. See docs/temporal.md.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("acp takes no arguments: the editor sends the prompts")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return runACP(cmd, f, approval, traceDBFlag) },
	}
	fl := cmd.Flags()
	addRunFlags(fl, &f)
	// The editor names each session's folder, and asks the user.
	fl.MarkHidden("workspace")
	fl.MarkHidden("yes")
	fl.StringVar(&approval, "approval", "ask", "the mode new sessions start in: ask, auto-edit or plan (the editor can change it)")
	fl.StringVar(&f.temporal.address, "temporal", "", "run each prompt turn durably on ptk's workers of the Temporal server at HOST:PORT (ptk worker, with its model and tools): the calls a run waits for are asked through the editor")
	fl.StringVar(&traceDBFlag, "trace-db", "", "the store that keeps the conversations: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	return cmd
}

func runACP(cmd *cobra.Command, f runFlags, approval, traceDBFlag string) error {
	fl := cmd.Flags()
	if fl.Changed("workspace") {
		return usagef("ptk acp works in the folder of each session, which the editor names; --workspace does not apply")
	}
	if fl.Changed("yes") {
		return usagef("ptk acp asks through the editor; start sessions in auto-edit mode with --approval auto-edit, or allow calls in a policy file (--policy)")
	}
	preset, err := tool.ParsePreset(approval)
	if err != nil || preset == tool.PresetYolo {
		return usagef("--approval must be ask, auto-edit or plan, not %q", approval)
	}
	mode, err := checkRunFlags(f)
	if err != nil {
		return err
	}
	if f.temporal.address != "" {
		return runACPDurable(cmd, f, mode, preset, traceDBFlag)
	}
	cat, err := loadCatalog(f.models)
	if err != nil {
		return usageError{err}
	}
	model := setting(cmd, "model", f.model, cat.DefaultModel, "PTK_MODEL")
	names := splitList(model)
	if len(names) == 0 {
		return usagef("no model named: give --model NAME or set PTK_MODEL ('ptk models' lists the catalog)")
	}
	resolve := func(name string) (llm.Model, error) {
		return resolveModels(cat, choice(cmd, splitList(name), f.baseURL, f.apiKey))
	}
	m, err := resolve(model)
	if err != nil {
		return usageError{err}
	}
	m, done, err := recordOrReplay(m, f.record, f.replay)
	if err != nil {
		return usageError{err}
	}
	defer done()
	policy, policyFile, err := loadPolicy(cmd, f.policy)
	if err != nil {
		return usageError{err}
	}
	mcpTools, stopMCP, err := startMCP(cmd, f.mcp, keyEnvs(cat))
	if err != nil {
		return err
	}
	defer stopMCP()
	stderr := cmd.ErrOrStderr()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, closeStore := acpStore(cmd, traceDBFlag)
	defer closeStore()
	baseURL := setting(cmd, "base-url", f.baseURL, defaultBaseURL, "PTK_BASE_URL")
	cfg := acp.Config{
		Options: agent.Options{
			Model: m, ModelName: model, Mode: mode, StreamModel: true, NativeTools: &llm.NativeTools{},
			MaxCost: f.maxCost, MaxTokens: f.maxTokens, MaxIterations: f.maxIterations, MaxToolCalls: f.maxToolCalls, Timeout: f.timeout,
		},
		Models:     catalogModels(cat),
		Resolve:    resolve,
		Tools:      splitList(f.tools),
		Sandbox:    f.sandbox,
		Protected:  ptkdirs.Folders(),
		ExtraTools: mcpTools,
		Policy:     policy,
		PolicyFile: policyFile,
		Mode:       preset,
		Store:      store,
		MCP:        acpMCPOptions(logger),
		Hint: func(err error) string {
			b := baseURL
			if u := llm.BaseURLOf(m); u != "" {
				b = u
			}
			return configHint(err, b, model)
		},
		Logger:  logger,
		Version: ptkVersion(),
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return acp.Serve(ctx, cfg, cmd.InOrStdin(), cmd.OutOrStdout())
}

// acpStore is where ptk acp keeps the conversations: the trace store, so
// that the editor can load one tomorrow; without a store they last as
// long as the process.
func acpStore(cmd *cobra.Command, traceDBFlag string) (agent.Store, func()) {
	db, err := traceDB(cmd, traceDBFlag)
	if err == nil {
		var ts *trace.Store
		if ts, err = trace.Open(cmd.Context(), db); err == nil {
			return ts, func() { ts.Close() }
		}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "ptk acp: the conversations are kept in memory only: %v\n", err)
	return &agent.MemoryStore{}, func() {}
}

// runACPDurable is ptk acp --temporal: each prompt turn is a durable run on
// ptk's workers (their model, tools and workspace), driven through
// ptk-temporal; the session approves the calls the run waits for as it
// approves its own (the policy, the session's mode, then
// session/request_permission to the editor), and the editor's
// session/cancel cancels the run.
func runACPDurable(cmd *cobra.Command, f runFlags, mode agent.Mode, preset tool.Preset, traceDBFlag string) error {
	flags, err := f.temporal.runArgs(cmd, []string{"model", "mode", "tools", "max-iterations", "max-tool-calls", "max-cost", "max-tokens", "timeout"},
		[]string{"approval", "policy", "trace-db"})
	if err != nil {
		return err
	}
	policy, policyFile, err := loadPolicy(cmd, f.policy)
	if err != nil {
		return usageError{err}
	}
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, closeStore := acpStore(cmd, traceDBFlag)
	defer closeStore()
	model := f.model
	if model == "" {
		model = "the workers' model"
	}
	runner := newDurableRunner(flags)
	runner.sendPreset = true // the session's mode
	cfg := acp.Config{
		Options: agent.Options{Model: workersModel{}, ModelName: model, Mode: mode,
			MaxCost: f.maxCost, MaxTokens: f.maxTokens, MaxIterations: f.maxIterations, MaxToolCalls: f.maxToolCalls, Timeout: f.timeout},
		Policy: policy, PolicyFile: policyFile, Mode: preset, Store: store,
		MCP: acpMCPOptions(logger), Logger: logger, Version: ptkVersion(),
		Run: runner.Stream,
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return acp.Serve(ctx, cfg, cmd.InOrStdin(), cmd.OutOrStdout())
}

// catalogModels are the catalog's models, for the editor's model picker.
func catalogModels(c *catalog.Catalog) []acp.Model {
	var out []acp.Model
	for _, name := range c.Names() {
		m := c.Models[name]
		desc := m.Provider
		if m.ToolProtocol != "" {
			desc += ", tools: " + m.ToolProtocol
		}
		if m.Cost.Input > 0 || m.Cost.Output > 0 {
			desc += fmt.Sprintf(", $%g/$%g per M tokens", m.Cost.Input, m.Cost.Output)
		}
		out = append(out, acp.Model{Name: name, Description: strings.TrimPrefix(desc, ", ")})
	}
	return out
}

// acpMCPOptions are the options of the editor's MCP servers: what they
// leave out or report goes to the log (stderr, which editors keep).
func acpMCPOptions(logger *slog.Logger) mcp.Options {
	return mcp.Options{Logger: logger}
}

// ptkVersion is the version of the module ptk was built from, or "dev".
func ptkVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
