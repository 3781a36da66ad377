package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// envVar is an environment variable ptk reads, and what for.
type envVar struct{ name, what string }

// environment lists every environment variable ptk reads, by kind. A
// flag always wins over its variable. TestEnvironmentListed keeps the list
// true: a variable read anywhere in ptk's code and missing here, or listed
// here and read nowhere, fails it.
var environment = []struct {
	title string
	vars  []envVar
}{
	{"ptk's own", []envVar{
		{"PTK_MODEL", "the model when --model is not given: a catalog name ('ptk models'), else a model of the server at PTK_BASE_URL; a,b tries b when a fails"},
		{"PTK_BASE_URL", "the OpenAI-compatible API of a model the catalog does not have (default http://localhost:11434/v1, Ollama); set, it also replaces a catalog model's base URL"},
		{"PTK_API_KEY", "the API key sent to that server; set, it also replaces the key a catalog model reads from its provider's variable"},
		{"PTK_MODELS", "a model catalog file laid over the built-in one and over models.json in ptk's config folder (--models is laid over it)"},
		{"PTK_TRACE_DB", "the trace store: a SQLite file or a postgres:// URL (default $XDG_DATA_HOME/ptk/traces.db)"},
		{"PTK_API_KEYS", "the keys clients of 'ptk serve' and 'ptk mcp --addr' must send as Authorization: Bearer KEY, comma-separated"},
		{"PTK_MODEL_MAP", "'ptk serve --model-map': client model names mapped to served ones, as PATTERN=MODEL pairs, comma-separated ('claude-*=qwen3:8b')"},
		{"PTK_ALLOWED_HOSTS", "'ptk serve', 'ptk dashboard' and 'ptk mcp --addr --allowed-hosts': names clients may reach the server by besides its address and localhost, comma-separated (* gives up the check against DNS rebinding)"},
		{"PTK_DASHBOARD_TOKEN", "the token 'ptk dashboard' asks for on an address other than loopback"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "send runs as OpenTelemetry spans over OTLP/HTTP to this base URL (traces to its /v1/traces), as --otlp-endpoint; with OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "the same, the traces URL itself (Langfuse's .../api/public/otel/v1/traces)"},
		{"OTEL_EXPORTER_OTLP_HEADERS", "headers sent with every OTLP export, as key=value pairs, comma-separated, each value URL-encoded (Langfuse's Authorization=Basic%20...)"},
		{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "the same, for traces only; it replaces OTEL_EXPORTER_OTLP_HEADERS"},
		{"PTK_BFCL_DATA", "BFCL's data folder, for 'ptk eval'"},
		{"PTK_BROWSER", "for browser:NAME models: the browser's debugging address (http://127.0.0.1:9222) or a profile folder ptk starts a browser with; replaces the browser provider's api_base"},
		{"PTK_BROWSER_EXEC", "the browser ptk starts for browser:NAME models (default: the first of chromium, google-chrome, chrome, microsoft-edge or brave-browser on the PATH)"},
		{"PTK_BROWSER_FLAGS", "more command-line flags for the browser ptk starts, space-separated"},
		{"PTK_PASS_ENV", "variables the bash tool's commands get although their names or values look like secrets (GITHUB_TOKEN), comma-separated; by default they get none: no *_API_KEY, *_TOKEN, password, PTK_TRACE_DB or variable a model catalog names in api_key_env"},
		{"PTK_TEMPORAL", "the ptk-temporal binary that 'ptk worker', 'ptk runs' and --temporal hand over to (default: ptk-temporal on the PATH, then beside ptk)"},
	}},
	{"Model providers' keys, read for a catalog model of that provider", []envVar{
		{"OPENAI_API_KEY", "OpenAI; also the key for any OpenAI-compatible server when neither --api-key nor PTK_API_KEY is given"},
		{"ANTHROPIC_API_KEY", "Anthropic"},
		{"GEMINI_API_KEY", "Google Gemini"},
		{"DEEPSEEK_API_KEY", "DeepSeek"},
		{"GROQ_API_KEY", "Groq"},
		{"OPENROUTER_API_KEY", "OpenRouter"},
		{"TOGETHER_API_KEY", "Together"},
	}},
	{"The system's", []envVar{
		{"NO_COLOR", "set to anything: no colours in ptk run's progress and ptk chat's screen"},
		{"XDG_CONFIG_HOME", "ptk's config folder is $XDG_CONFIG_HOME/ptk (default ~/.config/ptk; ~/Library/Application Support/ptk on macOS): models.json, policy.json, mcp.json"},
		{"XDG_DATA_HOME", "the default trace store is $XDG_DATA_HOME/ptk/traces.db (default ~/.local/share/ptk/traces.db)"},
		{"XDG_STATE_HOME", "checkpoints of workspaces (ptk undo, /undo in ptk chat) are kept in $XDG_STATE_HOME/ptk/checkpoints (default ~/.local/state/ptk/checkpoints)"},
		{"VISUAL", "the editor ctrl+g in ptk chat opens the message in (then EDITOR)"},
		{"EDITOR", "the editor ctrl+g in ptk chat opens the message in, when VISUAL is not set"},
		{"HOME", "the home folder the defaults above start from"},
		{"PATH", "where ptk finds the programs it runs: bash, bwrap (--sandbox), go (ptk distill), MCP servers' commands"},
		{"LocalAppData", "on Windows, the default trace store's folder"},
		{"TMPDIR", "where 'ptk distill' makes its temporary module when --work-dir is not given"},
		{"HTTPS_PROXY", "a proxy for the model APIs and MCP servers over HTTPS (also https_proxy)"},
		{"HTTP_PROXY", "a proxy for those over plain HTTP (also http_proxy)"},
		{"NO_PROXY", "hosts reached without the proxy (also no_proxy)"},
		{"GOGC", "the Go garbage collector's target; 'ptk serve' runs at 400 when it is not set, which keeps its slowest requests fast (docs/performance.md)"},
	}},
}

// internalEnv are variables ptk sets for processes of its own; a user
// never sets them.
var internalEnv = []envVar{
	{"PTK_SHELL_REAPER", "marks the copy of ptk that watches over a bash call's processes"},
	{"PTK_SANDBOX_HELPER", "marks the copy of ptk that sets a sandboxed program's limits before it starts bubblewrap"},
	{"PTK_TEST_READONLY_DIR", "tests only (internal/rofs): the folder a test's copy of ptk sees read-only"},
}

// A model catalog file can name more key variables (api_key_env); ptk
// reads those too.
const environmentFooter = `A catalog file (models.json, PTK_MODELS, --models) may name other key
variables in its providers' "api_key_env"; ptk reads those as well.`

func newEnvironmentTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "environment",
		Short: "The environment variables ptk reads",
		Long:  environmentHelp(),
	}
}

// environmentHelp is the text of 'ptk help environment': each variable
// with what it does, wrapped to 80 columns.
func environmentHelp() string {
	width := 0
	for _, g := range environment {
		for _, v := range g.vars {
			width = max(width, len(v.name))
		}
	}
	var b strings.Builder
	b.WriteString("ptk reads these environment variables. A flag always wins over its variable.\n")
	for _, g := range environment {
		fmt.Fprintf(&b, "\n%s:\n", g.title)
		for _, v := range g.vars {
			indent := 2 + width + 2
			fmt.Fprintf(&b, "  %-*s  ", width, v.name)
			col := indent
			for i, w := range strings.Fields(v.what) {
				if i > 0 && col+1+len(w) > 80 {
					fmt.Fprintf(&b, "\n%*s", indent, "")
					col = indent
				} else if i > 0 {
					b.WriteByte(' ')
					col++
				}
				b.WriteString(w)
				col += len(w)
			}
			b.WriteByte('\n')
		}
	}
	b.WriteString("\n" + environmentFooter + "\n")
	return b.String()
}
