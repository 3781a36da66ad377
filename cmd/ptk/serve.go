package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/llm/catalog"
	"github.com/ptkit/ptk/llm/openai"
	"github.com/ptkit/ptk/tool"
)

type serveFlags struct {
	addr, baseURL, apiKey, model, models, mode, apiKeys string
	modelMap                                            string
	tools, workspace, policy, mcp                       string
	timeout                                             time.Duration
	maxConcurrent                                       int
	maxBody                                             int64
	sandbox                                             bool
	trace                                               traceFlags
	exposure                                            exposureFlags
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve the OpenAI, Anthropic and Responses APIs with tool calling for any model",
		Long: `serve is a gateway that speaks the APIs coding agents and SDKs use: OpenAI's
Chat Completions (POST /v1/chat/completions), Anthropic's Messages (POST
/v1/messages, /v1/messages/count_tokens: Claude Code, the Claude Agent SDK)
and OpenAI's Responses (POST /v1/responses: Codex, the OpenAI Agents SDK),
with GET /v1/models and GET /healthz. Point any of them at it, and it can use
tools with a model that has no native function calling.

A request with tools goes to the upstream model as it came when the model
takes tools (--mode native). When it does not (--mode ptk, a catalog model
marked ptk, or, with --mode auto, the default, when the upstream rejects the
tools), the gateway teaches the model ptk's text protocol, reads the calls
out of what it writes, in whichever format the model drifts into, checks them
against the tools' schemas and returns standard tool_calls. Streaming,
tool_choice (auto, none, required, a named function) and parallel_tool_calls
work the same either way.

A request's model is resolved like --model in 'ptk run': a catalog name
('ptk models') goes to its provider; any other name is a model of the
OpenAI-compatible server at --base-url (Ollama by default, at
` + defaultBaseURL + `). --model names the model of requests that name none.
--model-map 'claude-*=qwen3:8b,gpt-5*=qwen3-coder' renames what clients ask
for. On the Messages and Responses APIs, a name neither mapped nor served
(Claude Code's claude-sonnet-4-5, Codex's gpt-5-codex, a hosted model of the
catalog) gets the --model model: never a silent route to a hosted provider.
Served names are --model, the map's targets, the local models of the
catalog, and what the server at --base-url lists.

  ptk serve --model qwen3:8b
  ANTHROPIC_BASE_URL=http://127.0.0.1:8080 ANTHROPIC_API_KEY=local claude
  codex exec -c model_provider=ptk ...   (see docs/agents.md)

Responses stored for previous_response_id are kept in the trace store's
conversations (--trace-db; a postgres:// URL shares them between replicas),
or in memory with --no-trace.

--tools a,b gives the model built-in tools over --workspace that the gateway
runs itself, for requests that declare no tools of their own: the client
sees only the answer. The read-only tools run freely; write_file, edit_file
and bash run only where the --policy file allows them.

Clients send one of the keys of --api-keys FILE (one a line) or
$PTK_API_KEYS (comma-separated) as "Authorization: Bearer KEY" or
"x-api-key: KEY"; with neither, no key is asked for, and an --addr other
machines can reach is refused unless --unauthenticated is given. Requests a web page could make are
refused: a Host other than the listen address, localhost or --allowed-hosts
(DNS rebinding), a body that is not application/json, an Origin of another
site.

  ptk serve --model qwen3:8b
  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 your-openai-program

Every request is logged as one line on stderr (model, mode, calls, tokens,
latency). On SIGINT or SIGTERM the gateway stops taking requests and lets
those in flight finish.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on, HOST:PORT")
	fl.StringVar(&f.baseURL, "base-url", "", "the upstream OpenAI-compatible API (env PTK_BASE_URL; default "+defaultBaseURL+")")
	fl.StringVar(&f.apiKey, "api-key", "", "the upstream's API key (env PTK_API_KEY, then OPENAI_API_KEY)")
	fl.StringVar(&f.model, "model", "", "the model of requests that name none (env PTK_MODEL; default the catalog's default)")
	fl.StringVar(&f.models, "models", "", "a model catalog file laid over the built-in one (env PTK_MODELS)")
	fl.StringVar(&f.mode, "mode", "auto", "how upstream models call tools: ptk, native or auto")
	fl.StringVar(&f.modelMap, "model-map", "", "rename the models clients ask for: PATTERN=MODEL,... ('claude-*=qwen3:8b'; env PTK_MODEL_MAP)")
	fl.StringVar(&f.apiKeys, "api-keys", "", "a file of the keys clients must send, one a line (env PTK_API_KEYS: comma-separated keys)")
	fl.StringVar(&f.tools, "tools", "", "built-in tools the gateway runs itself, comma-separated (default none)")
	fl.StringVar(&f.workspace, "workspace", ".", "the folder --tools work in")
	fl.StringVar(&f.policy, "policy", "", "a policy file that allows write_file, edit_file or bash calls for --tools")
	fl.BoolVar(&f.sandbox, "sandbox", false, "run --tools bash under bubblewrap")
	fl.DurationVar(&f.timeout, "timeout", gateway.DefaultTimeout, "time limit of one request, upstream calls included")
	fl.IntVar(&f.maxConcurrent, "max-concurrent", gateway.DefaultMaxConcurrent, "most requests served at once; past it clients get 429")
	fl.Int64Var(&f.maxBody, "max-body", gateway.DefaultMaxBodyBytes, "largest request body in bytes")
	mcpFlag(fl, &f.mcp)
	addTraceFlags(fl, &f.trace, false)
	addExposureFlags(fl, &f.exposure, true)
	return cmd
}

func runServe(cmd *cobra.Command, f serveFlags) error {
	baseURL := setting(cmd, "base-url", f.baseURL, defaultBaseURL, "PTK_BASE_URL")
	apiKey := setting(cmd, "api-key", f.apiKey, "", "PTK_API_KEY", "OPENAI_API_KEY")
	cat, err := loadCatalog(f.models)
	if err != nil {
		return usageError{err}
	}
	mode := agent.Mode(f.mode)
	switch mode {
	case agent.ModeAuto, agent.ModePTK, agent.ModeNative:
	default:
		return usagef("--mode must be ptk, native or auto, not %q", f.mode)
	}
	if f.timeout <= 0 || f.maxConcurrent < 1 || f.maxBody < 1 {
		return usagef("--timeout, --max-concurrent and --max-body must be above zero")
	}
	keys, err := clientKeys(f.apiKeys)
	if err != nil {
		return usageError{err}
	}
	// Listen first: a refused address is said before anything starts.
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usagef("--addr %s: %v", f.addr, err)
	}
	defer ln.Close()
	if err := f.exposure.check(ln, len(keys), "your upstream model, its API key and the gateway's --tools"); err != nil {
		return err
	}
	r := &resolver{cat: cat, mode: mode, modeSet: cmd.Flags().Changed("mode"),
		client: openaiClient(baseURL, apiKey), apiKey: apiKey,
		baseURLExplicit: cmd.Flags().Changed("base-url") || os.Getenv("PTK_BASE_URL") != "",
		apiKeyExplicit:  cmd.Flags().Changed("api-key") || os.Getenv("PTK_API_KEY") != ""}
	defaultModel := setting(cmd, "model", f.model, cat.DefaultModel, "PTK_MODEL")
	modelMap, err := gateway.ParseModelMap(setting(cmd, "model-map", f.modelMap, "", "PTK_MODEL_MAP"))
	if err != nil {
		return usagef("--model-map: %v", err)
	}
	served := &servedModels{r: r, defaultModel: defaultModel, mapped: modelMap.Targets()}
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	cfg := gateway.Config{
		Resolve:       r.resolve,
		DefaultModel:  defaultModel,
		Models:        func(ctx context.Context) ([]string, error) { return r.list(ctx, defaultModel), nil },
		ModelMap:      modelMap,
		Serves:        served.serves,
		APIKeys:       keys,
		Timeout:       f.timeout,
		MaxConcurrent: f.maxConcurrent,
		MaxBodyBytes:  f.maxBody,
		Logger:        logger,
		AllowedHosts:  f.exposure.hosts(cmd),
	}
	hidden := keyEnvs(cat) // the catalog's key variables: never bash's or an MCP server's
	if strings.TrimSpace(f.tools) != "" {
		_, tools, closeTools, err := builtinTools(f.workspace, f.tools, f.sandbox, hidden)
		if err != nil {
			return err
		}
		defer closeTools()
		policy, policyFile, err := loadPolicy(cmd, f.policy)
		if err != nil {
			return usageError{err}
		}
		cfg.Tools, cfg.Approver = tools, &serveApprover{policy: policy, file: policyFile, tools: approvalTools(tools)}
	}
	stopMCP, err := addMCPTools(cmd, f.mcp, f.policy, &cfg, hidden)
	if err != nil {
		return err
	}
	defer stopMCP()
	var stopRecording func()
	cfg.Observe, cfg.Conversations, stopRecording = serveRecorder(cmd, f.trace)
	defer stopRecording()
	srv, err := gateway.New(cfg)
	if err != nil {
		return err
	}
	tuneGC()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("serving", "addr", "http://"+ln.Addr().String()+"/v1", "upstream", baseURL, "model", defaultModel,
		"mode", string(mode), "keys", len(keys), "tools", len(cfg.Tools))
	err = srv.Serve(ctx, ln)
	logger.Info("stopped")
	return err
}

// clientKeys reads the keys clients must send: the --api-keys file, one a
// line (blank lines and # comments skipped), then $PTK_API_KEYS.
func clientKeys(file string) ([]string, error) {
	var keys []string
	if file != "" {
		fh, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("--api-keys: %w", err)
		}
		defer fh.Close()
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if k := strings.TrimSpace(sc.Text()); k != "" && !strings.HasPrefix(k, "#") {
				keys = append(keys, k)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("--api-keys: %w", err)
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("--api-keys %s holds no key: with no key at all, every client would be let in", file)
		}
	}
	keys = append(keys, splitList(os.Getenv("PTK_API_KEYS"))...)
	return keys, nil
}

func openaiClient(baseURL, apiKey string) *openai.Client {
	var opts []openai.Option
	if apiKey != "" {
		opts = append(opts, openai.WithAPIKey(apiKey))
	}
	return openai.New(baseURL, opts...)
}

// resolver finds where a request's model is served: the catalog's
// provider for a catalog name, the server at --base-url for any other.
type resolver struct {
	cat                             *catalog.Catalog
	mode                            agent.Mode
	modeSet                         bool
	client                          *openai.Client
	apiKey                          string
	baseURLExplicit, apiKeyExplicit bool
}

func (r *resolver) resolve(name string) (gateway.Upstream, error) {
	m, ok := r.cat.Models[name]
	if !ok {
		return gateway.Upstream{Model: r.client, Forward: r.client, Name: name, Mode: r.mode}, nil
	}
	var o catalog.Options
	if r.apiKeyExplicit {
		o.APIKey = r.apiKey
	}
	if r.baseURLExplicit {
		o.BaseURL = r.client.BaseURL()
	}
	model, err := r.cat.Resolve(name, o)
	if err != nil {
		return gateway.Upstream{}, err
	}
	up := gateway.Upstream{Model: model, Name: m.ModelID, Mode: r.mode}
	if !r.modeSet && m.ToolProtocol == "ptk" {
		up.Mode = agent.ModePTK
	}
	if p := r.cat.Providers[m.Provider]; p.API == "" || p.API == "openai" {
		key := o.APIKey
		if key == "" && p.APIKeyEnv != "" {
			key = os.Getenv(p.APIKeyEnv)
		}
		up.Forward = openaiClient(cmp.Or(o.BaseURL, p.APIBase), key)
	}
	return up, nil
}

// list is what GET /v1/models shows: the upstream server's models when it
// answers, and the default model.
func (r *resolver) list(ctx context.Context, defaultModel string) []string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	names, err := r.client.Models(ctx)
	if err != nil {
		names = nil
	}
	if defaultModel != "" && !slices.Contains(names, defaultModel) {
		names = append([]string{defaultModel}, names...)
	}
	return names
}

// servedModels says which models the agents' APIs are served as asked:
// the default model, the targets of --model-map, the catalog's models of
// providers that need no key (local servers), and the models the server at
// --base-url lists (asked at most once a minute). Any other name is served
// by the default model.
type servedModels struct {
	r            *resolver
	defaultModel string
	mapped       []string

	mu     sync.Mutex
	listed []string
	asked  time.Time
}

func (s *servedModels) serves(name string) bool {
	if name == s.defaultModel || slices.Contains(s.mapped, name) {
		return true
	}
	if m, ok := s.r.cat.Models[name]; ok {
		return s.r.cat.Providers[m.Provider].APIKeyEnv == ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.asked) > time.Minute {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		names, err := s.r.client.Models(ctx)
		cancel()
		s.asked = time.Now()
		if err == nil {
			s.listed = names
		}
	}
	return slices.Contains(s.listed, name)
}

// serveApprover lets the gateway's own tools change something only where
// the policy file allows it: there is nobody to ask.
type serveApprover struct {
	policy *tool.Policy
	file   string
	tools  map[string]ptk.Tool // by name, from approvalTools
}

func (a *serveApprover) Approve(_ context.Context, call ptk.Call, _ ptk.ToolInfo) (tool.Verdict, error) {
	if action, _ := a.policy.Decide(a.tools[call.Tool], call); action == tool.Allow {
		return tool.Verdict{Allow: true}, nil
	}
	where := "no policy file"
	if a.file != "" {
		where = "the policy file " + a.file
	}
	return tool.Verdict{Reason: "the gateway runs this tool only where its policy allows it, and " + where + " allows this call. Tell the user what you wanted to do instead."}, nil
}
