package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/checkpoint"
	"github.com/ptkit/ptk/internal/ptkdirs"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/browser"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/tools/fs"
	"github.com/ptkit/ptk/tools/shell"
)

const defaultBaseURL = "http://localhost:11434/v1"

type runFlags struct {
	baseURL, apiKey, model, mode, workspace, tools, policy string
	models, record, replay, mcp                            string
	maxCost                                                float64
	maxTokens, contextWindow                               int
	maxIterations, maxToolCalls                            int
	timeout                                                time.Duration
	stream, yes, asJSON, sandbox                           bool
	outputFormat, outputSchema                             string
	trace                                                  traceFlags
	approval                                               string
	noCheckpoint                                           bool
	temporal                                               temporalFlags
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] [PROMPT | -]",
		Short: "Ask a model to do something, with tools, and print its answer",
		Long: `run gives PROMPT to a model with ptk's built-in tools over the workspace
(read_file, list_dir, glob, grep, write_file, edit_file, bash), runs the calls
the model makes, feeds the results back, and prints the model's final answer
on stdout. While it works, stderr shows each model call, each tool call and
its result.

The read-only tools run freely. write_file, edit_file and bash need approval:
--yes gives it; on a terminal you are asked (yes, no, or always for that
tool); with neither, the call is denied and the model is told how you can
allow it. A policy file allows or denies calls by tool, path and command
prefix (the last matching rule wins):
  {"rules": [{"tool": "bash", "command": "go test", "action": "allow"},
             {"tool": "write_file", "path": "docs/**", "action": "allow"},
             {"tool": "bash", "command": "git push", "action": "deny"}]}
An allow rule for a command never allows the flags that make it run another
program (go test -exec, git -c, find -exec, xargs …; "allow_flags": ["-delete"]
opens one), and a question says which rule came near and why it did not apply.
File tools cannot leave the workspace. bash can: it runs with your rights.
--sandbox runs it under bubblewrap (bwrap) as nobody without capabilities,
with no network, the system read-only, the workspace writable, and neither
your home directory nor the rest of the machine there.

--model names a model of the catalog ('ptk models': OpenAI, Anthropic,
Gemini, DeepSeek, Groq, local Ollama and llama.cpp models, and yours), which
says its provider, key variable and prices; any other name is a model of the
OpenAI-compatible server at --base-url (Ollama by default, at
` + defaultBaseURL + `; a llama.cpp or vLLM server...). a,b asks b when a fails.

  ptk run --model qwen3:8b "What does this repository do?"
  git diff | ptk run "Review this change"
  ANTHROPIC_API_KEY=... ptk run --model claude-sonnet-4 "Fix the failing test"
  PTK_BASE_URL=http://localhost:8080/v1 ptk run --model any "List the Go files"

PROMPT is the arguments; standard input, when it is a pipe or a file, is
added after them (a blank line between), and is the whole prompt when no
argument or "-" is given. Ctrl-C stops the run (exit status 130); a second
Ctrl-C stops ptk at once.

--max-cost and --max-tokens are the run's budget; --record FILE keeps every
model call, --replay FILE answers from it without the network.

--mode ptk teaches the model ptk's text protocol (works with any model),
native uses the provider's function calling, auto (the default) uses native
and falls back to ptk when the provider rejects tools.

--context N gives the model's context window in tokens (sent to Ollama as
num_ctx); without it ptk asks the catalog or the server (Ollama, vLLM,
llama.cpp). Each request is counted before it is sent; past 80% of the
window the older turns are replaced by notes the model writes.

--output-format says what stdout holds: text (the answer), json (one
object: {"success":…,"content":"…","iterations":N,"tool_calls":[…],
"total_tool_calls":N,"error":{"code":"…","message":"…"}|null,"usage":{…},
"cost":X,"duration_ms":N,"denied":[{"tool":"…","args":{…},"reason":"…"}],
"invalid":[{"tool":"…","args":{…},"error":{"code":"…","message":"…"}}]};
--json is the same), or stream-json (one JSON event per line as the run
goes, ending with the result; the schema is docs/headless.schema.json).
--output-schema FILE makes the final answer a JSON value of that JSON
Schema (in "output", and alone on stdout as text). With --temporal, json
and stream-json print the durable run's in these same shapes.

In the final object, denied lists the calls that were not allowed (a policy, no --yes, the user's
no), with the reason the model was given; invalid the calls that could not
run as written (an unknown tool, arguments that do not fit). A model that
keeps asking for a call that was denied ends the run with TOOL_CALL_DENIED.

Exit status: 0 answered, 1 the run failed, 2 a usage or configuration
error (no model answering at the base URL, a wrong API key, an unknown
model), 3 a limit stopped the run (iterations, tool calls, budget,
timeout, context window), 130 interrupted.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.temporal.address != "" && !f.temporal.detach && (f.asJSON || f.outputFormat != formatText) {
				return runDurable(cmd, f, args)
			}
			if f.temporal.address != "" || f.temporal.detach {
				return f.temporal.handOffRun(cmd, []string{"run"}, []string{"detach", "model", "mode", "tools",
					"max-iterations", "max-tool-calls", "max-cost", "max-tokens", "timeout", "json", "yes"}, args)
			}
			prompt, err := promptFrom(cmd.InOrStdin(), args, "run needs a prompt",
				`ptk run --model qwen3:8b "What does this repository do?", or git diff | ptk run "Review this change"`)
			if err != nil {
				return err
			}
			return runRun(cmd, f, prompt)
		},
	}
	fl := cmd.Flags()
	addRunFlags(fl, &f)
	fl.BoolVar(&f.stream, "stream", false, "ask the model to stream, and show its text as it comes")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object (--output-format json)")
	fl.StringVar(&f.outputFormat, "output-format", formatText, "what stdout holds: text, json (one object) or stream-json (one event per line)")
	fl.StringVar(&f.outputSchema, "output-schema", "", "a JSON Schema FILE the final answer must be a JSON value of")
	addTurnFlags(fl, &f)
	addTraceFlags(fl, &f.trace, true)
	f.temporal.add(fl)
	return cmd
}

// addRunFlags registers the flags ptk run and ptk chat share: the model,
// the budget, the tools and what may run.
func addRunFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.baseURL, "base-url", "", "the model's OpenAI-compatible API (env PTK_BASE_URL; default "+defaultBaseURL+")")
	fl.StringVar(&f.apiKey, "api-key", "", "API key (env PTK_API_KEY, then OPENAI_API_KEY)")
	fl.StringVar(&f.model, "model", "", "model name: from the catalog ('ptk models'), else a model of the server at --base-url; a,b tries b when a fails (env PTK_MODEL; default the catalog's default)")
	fl.StringVar(&f.models, "models", "", "a model catalog file laid over the built-in one (env PTK_MODELS)")
	fl.Float64Var(&f.maxCost, "max-cost", 0, "budget of the run in US dollars (0: none)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "budget of the run in tokens, prompt and completion summed (0: none)")
	fl.IntVar(&f.contextWindow, "context", 0, "the model's context window in tokens (sent to Ollama as num_ctx; 0: ask the catalog or the server)")
	fl.StringVar(&f.record, "record", "", "append every model request and response to FILE as JSON lines")
	fl.StringVar(&f.replay, "replay", "", "answer model requests from a file made by --record, without the network")
	fl.StringVar(&f.mode, "mode", "auto", "how the model calls tools: ptk, native or auto")
	fl.StringVar(&f.workspace, "workspace", ".", "the folder the tools work in; file tools cannot leave it")
	fl.StringVar(&f.tools, "tools", "", "comma-separated tools to give the model (default: all built-ins)")
	fl.IntVar(&f.maxIterations, "max-iterations", agent.DefaultMaxIterations, "most model calls in the run")
	fl.IntVar(&f.maxToolCalls, "max-tool-calls", agent.DefaultMaxToolCalls, "most tool calls in the run")
	fl.DurationVar(&f.timeout, "timeout", 0, "time limit for the whole run, e.g. 5m (default none)")
	addApprovalFlags(fl, &f.yes, &f.policy, &f.sandbox)
	mcpFlag(fl, &f.mcp)
}

// addApprovalFlags registers the flags that say what may run without
// asking, as ptk run, ptk chat and ptk react share them.
func addApprovalFlags(fl *pflag.FlagSet, yes *bool, policy *string, sandbox *bool) {
	fl.BoolVar(yes, "yes", false, "approve the calls that need approval (write_file, edit_file, bash) without asking")
	fl.StringVar(policy, "policy", "", "a policy file that allows or denies calls (default: policy.json in ptk's config folder, if there is one)")
	fl.BoolVar(sandbox, "sandbox", false, "run bash under bubblewrap: system read-only, workspace writable, no network")
}

// setting returns a flag's value when it was given, else the first
// non-empty environment variable, else def.
func setting(cmd *cobra.Command, flag, val string, def string, env ...string) string {
	if cmd.Flags().Changed(flag) {
		return val
	}
	for _, e := range env {
		if v := os.Getenv(e); v != "" {
			return v
		}
	}
	return def
}

// runSetup is what ptk run and ptk chat make of their shared flags: the
// run's options (all but the Approver), the policy, and what the model
// hint needs.
type runSetup struct {
	opts           agent.Options
	tools          []ptk.Tool
	policy         *tool.Policy
	policyFile     string
	preset         tool.Preset
	baseURL, model string
	// workspace is the workspace's absolute path.
	workspace string
	// checkpoints and guard take a checkpoint before a turn changes the
	// workspace (nil with --no-checkpoint, or when checkpointErr says why
	// not).
	checkpoints   *checkpoint.Store
	guard         *checkpoint.Guard
	checkpointErr error
	// resolve finds models by name as --model does.
	resolve func(names []string) (llm.Model, error)
	// close closes the workspace and the record file.
	close func()
	// runner, when set, runs the turns durably on Temporal (ptk chat
	// --temporal): the model and the tools are the workers'.
	runner *durableRunner
}

// hint turns a failed run's error into the one-line fix configHint gives,
// or "".
func (s *runSetup) hint(err error) string {
	baseURL := s.baseURL
	if b := llm.BaseURLOf(s.opts.Model); b != "" {
		baseURL = b // the server the model really is at
	}
	return configHint(err, baseURL, s.model)
}

// prepareRun checks the shared flags and builds the run's setup.
func prepareRun(cmd *cobra.Command, f runFlags) (*runSetup, error) {
	baseURL := setting(cmd, "base-url", f.baseURL, defaultBaseURL, "PTK_BASE_URL")
	cat, err := loadCatalog(f.models)
	if err != nil {
		return nil, usageError{err}
	}
	model := setting(cmd, "model", f.model, cat.DefaultModel, "PTK_MODEL")
	names := splitList(model)
	if len(names) == 0 {
		return nil, usagef("no model named: give --model NAME or set PTK_MODEL ('ptk models' lists the catalog; for Ollama, 'ollama list' shows the models you have)")
	}
	mode, err := checkRunFlags(f)
	if err != nil {
		return nil, err
	}
	preset, err := approvalPreset(cmd, f.approval, f.yes)
	if err != nil {
		return nil, err
	}
	keys := keyEnvs(cat)
	root, tools, closeBuiltins, err := builtinTools(f.workspace, f.tools, f.sandbox, keys)
	if err != nil {
		return nil, err
	}
	mcpTools, stopMCP, err := startMCP(cmd, f.mcp, keys)
	if err != nil {
		closeBuiltins()
		return nil, err
	}
	closeTools := func() { stopMCP(); closeBuiltins() }
	tools = append(tools, mcpTools...)
	var cps *checkpoint.Store
	var guard *checkpoint.Guard
	var cpErr error
	if !f.noCheckpoint {
		tools, cps, guard, cpErr = openCheckpoints(cmd.Context(), root, tools)
	}
	policy, policyFile, err := loadPolicy(cmd, f.policy)
	if err != nil {
		closeTools()
		return nil, usageError{err}
	}
	resolve := func(names []string) (llm.Model, error) {
		ch := choice(cmd, names, f.baseURL, f.apiKey)
		ch.numCtx = f.contextWindow
		ch.ollama = f.replay == "" // a replay asks no server
		return resolveModels(cat, ch)
	}
	m, err := resolve(names)
	if err != nil {
		closeTools()
		return nil, usageError{err}
	}
	m, done, err := recordOrReplay(m, f.record, f.replay)
	if err != nil {
		closeTools()
		return nil, usageError{err}
	}
	if f.contextWindow > 0 {
		m = llm.Fixed(m, f.contextWindow, "--context")
	}
	opts := agent.Options{
		Model:         m,
		ModelName:     strings.Join(names, ","),
		MaxCost:       f.maxCost,
		MaxTokens:     f.maxTokens,
		Tools:         tools,
		Mode:          mode,
		MaxIterations: f.maxIterations,
		MaxToolCalls:  f.maxToolCalls,
		Timeout:       f.timeout,
		Instructions:  instructions(root),
	}
	return &runSetup{opts: opts, tools: tools, policy: policy, policyFile: policyFile, preset: preset, workspace: root,
		checkpoints: cps, guard: guard, checkpointErr: cpErr,
		baseURL: baseURL, model: model, resolve: resolve, close: func() { done(); closeTools() }}, nil
}

// checkRunFlags checks the run flags' limits and mode.
func checkRunFlags(f runFlags) (agent.Mode, error) {
	if f.maxCost < 0 || f.maxTokens < 0 {
		return "", usagef("--max-cost and --max-tokens must not be negative")
	}
	mode := agent.Mode(f.mode)
	switch mode {
	case agent.ModeAuto, agent.ModePTK, agent.ModeNative:
	default:
		return "", usagef("--mode must be ptk, native or auto, not %q", f.mode)
	}
	if f.maxIterations < 1 || f.maxToolCalls < 1 {
		return "", usagef("--max-iterations and --max-tool-calls must be at least 1")
	}
	if f.timeout < 0 {
		return "", usagef("--timeout must not be negative")
	}
	if f.contextWindow < 0 || f.contextWindow > 0 && f.contextWindow < 512 {
		return "", usagef("--context must be a window of at least 512 tokens, not %d", f.contextWindow)
	}
	return mode, nil
}

// outputFormat is the format --output-format and --json say.
func outputFormat(cmd *cobra.Command, f runFlags) (string, error) {
	format := f.outputFormat
	if f.asJSON {
		if cmd.Flags().Changed("output-format") && format != formatJSON {
			return "", usagef("--json and --output-format %s disagree", format)
		}
		format = formatJSON
	}
	switch format {
	case formatText, formatJSON, formatStreamJSON:
	default:
		return "", usagef("--output-format must be text, json or stream-json, not %q", format)
	}
	return format, nil
}

func runRun(cmd *cobra.Command, f runFlags, prompt string) error {
	format, err := outputFormat(cmd, f)
	if err != nil {
		return err
	}
	var answer *ptool.AnswerReader
	if f.outputSchema != "" {
		data, err := os.ReadFile(f.outputSchema)
		if err != nil {
			return usagef("--output-schema: %v", err)
		}
		if answer, err = ptool.NewAnswerReader(data); err != nil {
			return usagef("--output-schema %s: %v", f.outputSchema, err)
		}
	}
	s, err := prepareRun(cmd, f)
	if err != nil {
		return err
	}
	defer s.close()
	opts := s.opts
	opts.StreamModel = f.stream
	var output json.RawMessage
	if answer != nil {
		opts.Instructions += "\n\n" + answer.Instructions()
		opts.Answer = func(text string) (string, error) {
			v, err := answer.Read(text)
			if err != nil {
				return "", err
			}
			output = v
			return string(v), nil
		}
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	stderr := cmd.ErrOrStderr()
	out := cmd.OutOrStdout()
	var pr *progress
	var sw *streamWriter
	switch format {
	case formatText:
		pr = newProgress(stderr, f.stream)
		defer pr.stopSpinner()
	case formatStreamJSON:
		sw = newStreamWriter(out)
		var window *int
		if f.contextWindow > 0 {
			window = &f.contextWindow
		}
		tools := []string{}
		for _, t := range s.tools {
			tools = append(tools, t.Info().Name)
		}
		sw.write(streamInit{Type: "init", Version: streamVersion, Model: opts.ModelName, Mode: string(opts.Mode), Workspace: s.workspace, Tools: tools, ContextWindow: window})
	}
	stdin := cmd.InOrStdin()
	opts.Instructions = joinText(opts.Instructions, s.preset.Instructions())
	approver := &cliApprover{policy: s.policy, policyFile: s.policyFile, tools: approvalTools(s.tools), preset: s.preset,
		ask: isTerminal(stdin) && isTerminal(stderr), in: bufio.NewReader(stdin), out: stderr, pr: pr}
	opts.Approver = approver
	observe, stopRecording, err := agentRecorder(cmd, f.trace, &opts, prompt)
	if err != nil {
		return err
	}
	defer stopRecording()
	var res *agent.Result
	var runErr error
	s.beginTurn(ctx, opts, prompt)
	iteration := 0
	if sw != nil {
		approver.asked = func(c ptk.Call) { sw.approval("asked", iteration, -1, &c, "") }
	}
	for e, err := range agent.Stream(ctx, agent.Prompt(prompt), opts) {
		observe(e, err)
		iteration = e.Iteration
		if pr != nil {
			pr.event(e)
		}
		if sw != nil {
			sw.event(e)
		}
		if e.Kind == agent.EventDone {
			res, runErr = e.Run, err
		}
	}
	s.endTurn(stderr, res)
	hint := ""
	if runErr != nil {
		hint = s.hint(runErr)
	}
	exit := runExitCode(runErr)
	if hint != "" {
		exit = exitUsageError
	}
	if err := writeResult(out, sw, format, res, output, exit, runErr); err != nil {
		return err
	}
	switch {
	case runErr == nil:
		return nil
	case hint != "":
		return usageError{errors.New(hint)}
	case exit != exitRunFailed:
		return exitError{exit, runErr}
	}
	return runErr
}

// writeResult writes the run's result on stdout as format says: the
// answer (text), one JSON object (json), or the stream's last lines
// (stream-json, to sw).
func writeResult(out io.Writer, sw *streamWriter, format string, res *agent.Result, output json.RawMessage, exit int, runErr error) error {
	switch format {
	case formatJSON:
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		return enc.Encode(resultJSON(res, output, exit, false))
	case formatStreamJSON:
		if res.Error != nil {
			sw.write(map[string]any{"type": "error", "code": res.Error.Code, "message": res.Error.Message})
		}
		sw.write(resultJSON(res, output, exit, true))
	default:
		if res.Success || errors.Is(runErr, agent.ErrConversationChanged) {
			// An answer whose exchange the conversation could not keep is
			// still the answer: it is printed, and the error says the rest.
			fmt.Fprintln(out, strings.TrimRight(res.Content, "\n"))
		}
	}
	return nil
}

// loadPolicy reads the policy file named by --policy, or the one in ptk's
// config folder when there is one. It never reads one from the workspace: a
// model that can write files must not be able to write its own permissions.
func loadPolicy(cmd *cobra.Command, file string) (*tool.Policy, string, error) {
	if !cmd.Flags().Changed("policy") {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil, "", nil
		}
		file = filepath.Join(dir, "ptk", "policy.json")
		if _, err := os.Stat(file); err != nil {
			return nil, "", nil
		}
	}
	p, err := tool.LoadPolicy(file)
	if err != nil {
		return nil, "", fmt.Errorf("--policy: %w", err)
	}
	return p, file, nil
}

// instructions is the system prompt's own part: what the assistant is and
// where it works.
func instructions(root string) string {
	return "You are a coding assistant working in the folder " + root + ". " +
		"Use the tools to look at the files before you answer or change them; paths are relative to that folder. " +
		"Make the smallest change that does the job, and check it (build, tests) when you can. " +
		"When you have done what was asked, answer the user directly and concisely."
}

// joinText joins the texts that are not blank, with a blank line.
func joinText(texts ...string) string {
	var out []string
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n\n")
}

// configHint turns a failure that comes from the configuration into one
// line that says how to fix it; "" for other failures.
func configHint(err error, baseURL, model string) string {
	var le *llm.Error
	errors.As(err, &le)
	msg := ""
	if le != nil && le.Message != "" {
		msg = " (" + le.Message + ")"
	}
	switch {
	case browserError(err):
		return le.Message // it says what to do in the browser, not at a base URL
	case errors.Is(err, llm.ErrConnection):
		return "no model answers at " + baseURL + msg + ": start the server (for Ollama: ollama serve), or point --base-url / PTK_BASE_URL at one"
	case errors.Is(err, llm.ErrAuth):
		return "the server at " + baseURL + " refused the API key" + msg + ": set --api-key or PTK_API_KEY (a catalog model reads its provider's variable, such as OPENAI_API_KEY or ANTHROPIC_API_KEY)"
	case errors.Is(err, llm.ErrModelNotFound):
		return "the server at " + baseURL + " has no model " + fmt.Sprintf("%q", model) + msg + ": name one it has with --model or PTK_MODEL (for Ollama: ollama list, or ollama pull " + model + ")"
	}
	return ""
}

// browserError reports a chat page's error (llm/browser).
func browserError(err error) bool {
	for _, e := range []error{browser.ErrNoBrowser, browser.ErrLoggedOut, browser.ErrTabClosed, browser.ErrTimeout, browser.ErrRateLimited, browser.ErrLayoutChanged} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// builtinTools opens the workspace and returns its absolute path and the
// built-in tools named by list (comma-separated; empty: all of them), and a
// function that closes the workspace.
// hidden names variables bash never gets whatever their names look like:
// the model catalog's api_key_env (see [keyEnvs]).
func builtinTools(workspace, list string, sandbox bool, hidden []string) (root string, tools []ptk.Tool, closeFn func(), err error) {
	if root, err = filepath.Abs(workspace); err != nil {
		return "", nil, nil, usagef("--workspace %s: %v", workspace, err)
	}
	ws, err := fs.New(root, fs.WithProtected(ptkdirs.Folders()...))
	if err != nil {
		return "", nil, nil, usagef("--workspace %s: %v", workspace, err)
	}
	// bash's commands get no variable that looks like a secret or holds a
	// catalog's key, but those the user names in PTK_PASS_ENV.
	shellOpts := []shell.Option{shell.WithHiddenEnv(hidden...), shell.WithPassEnv(splitList(os.Getenv("PTK_PASS_ENV"))...),
		shell.WithProtected(ptkdirs.Folders()...)}
	if sandbox {
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
	if names := splitList(list); len(names) > 0 {
		if tools, err = reg.Select(names...); err != nil {
			ws.Close()
			return "", nil, nil, usagef("--tools: %v", err)
		}
	}
	return root, tools, func() { ws.Close() }, nil
}

// splitList splits a comma-separated list, trimming the items and leaving
// out empty ones.
func splitList(s string) []string {
	var out []string
	for n := range strings.SplitSeq(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
