package gateway_test

// The real agents through the gateway: Claude Code (@anthropic-ai/claude-code)
// over Anthropic Messages and the Codex CLI (@openai/codex) over Responses,
// their binaries from npm run headless against a gateway in front of a
// scripted model that writes its calls as text. Each reads a file, edits it
// and runs a command with its own tools, and the workspace shows the edit.

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/gateway/internal/agentnpmtest"
	"github.com/ptkit/ptk/llm"
)

// The task the agents are given; the scripted model acts on requests that
// carry it, and answers anything else the agent asks (a title, a summary)
// in a word.
const agentTask = "Fix the typo in notes.txt (task 7f3a)."

// step is one step of a scripted agent run: the call to make when the
// results so far hold want (nil: the final answer).
type step struct {
	want string
	tool string
	args map[string]any
}

// agentScript is the scripted model of the agents' tests: it makes the
// steps' calls in turn, written by call, each once the last result holds
// what the step wants; a result that does not is the final answer, which
// says what went wrong, so that the test fails saying it.
func agentScript(call func(string, any) string, final string, steps ...step) *textModel {
	return newTextModel(func(req llm.Request) said {
		// The results so far, one a turn: a user message of PTK results
		// (ptk mode), or a run of tool messages (native mode).
		var task bool
		var results []string
		for i, m := range req.Messages {
			switch {
			case m.Role == "user" && strings.Contains(m.Content, agentTask):
				task = true
			case m.Role == "user" && strings.Contains(m.Content, "<PTK_"):
				results = append(results, m.Content)
			case m.Role == "tool" && req.Messages[i-1].Role == "tool":
				results[len(results)-1] += "\n" + m.Content
			case m.Role == "tool":
				results = append(results, m.Content)
			}
		}
		if !task {
			return said{text: "OK."}
		}
		n := len(results)
		if n > 0 && (n >= len(steps) || !strings.Contains(results[n-1], steps[n].want)) {
			want := "nothing more"
			if n < len(steps) {
				want = steps[n].want
			}
			return said{text: "FAILED after step " + string(rune('0'+n)) + ": the result does not hold " + want + ":\n" + results[n-1]}
		}
		if n < len(steps) && steps[n].tool != "" {
			return said{text: "Step " + string(rune('1'+n)) + ".\n\n" + call(steps[n].tool, steps[n].args)}
		}
		return said{text: final}
	})
}

// TestClaudeCode: Claude Code 2.1.328, headless (claude -p), through the
// gateway's Messages API: it reads notes.txt with its Read tool, edits it
// with Edit (after reading it, as Edit requires), runs cat with Bash, and
// reports; notes.txt holds the fix. The model writes its calls in the PTK
// protocol (ptk mode) and in Hermes' format (auto mode: the tools go as
// native tools, and the calls are read from the text).
func TestClaudeCode(t *testing.T) {
	t.Parallel()
	bin := agentnpmtest.ClaudeCode(t)
	for _, c := range []struct {
		name string
		mode agent.Mode
		call func(string, any) string
	}{{"ptk", agent.ModePTK, ptkCall}, {"hermes", agent.ModeAuto, hermesCall}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws, home := t.TempDir(), t.TempDir()
			notes := filepath.Join(ws, "notes.txt")
			os.WriteFile(notes, []byte("hello wrold\n"), 0o644)
			m := agentScript(c.call, "Fixed: notes.txt now says hello world.",
				step{"", "Read", map[string]any{"file_path": notes}},
				step{"hello wrold", "Edit", map[string]any{"file_path": notes, "old_string": "wrold", "new_string": "world"}},
				step{"updated", "Bash", map[string]any{"command": "cat " + notes, "description": "Show notes.txt"}},
				step{want: "hello world"})
			url := agentGateway(t, m, c.mode, func(cfg *gateway.Config) {
				cfg.APIKeys = []string{"sk-local"}
				if os.Getenv("PTK_TEST_LOG") != "" {
					cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
				}
			})
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "-p", agentTask, "--output-format", "json", "--allowedTools", "Read Edit Bash")
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), "HOME="+home, "ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY=sk-local",
				"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1")
			out, err := cmd.Output()
			if err != nil {
				stderr := ""
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = string(ee.Stderr)
				}
				t.Fatalf("claude: %v\n%s\n%s", err, out, stderr)
			}
			var res struct {
				Result   string `json:"result"`
				IsError  bool   `json:"is_error"`
				NumTurns int    `json:"num_turns"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("claude's output is not its JSON result: %v\n%s", err, out)
			}
			if res.IsError || res.Result != "Fixed: notes.txt now says hello world." || res.NumTurns < 4 {
				t.Errorf("claude's result %+v", res)
			}
			if b, _ := os.ReadFile(notes); string(b) != "hello world\n" {
				t.Errorf("notes.txt holds %q, want the fix", b)
			}
		})
	}
}

// TestCodex: the Codex CLI 0.169.0, headless (codex exec), with a
// [model_providers.ptk] table whose wire_api is responses, through the
// gateway's Responses API: it reads notes.txt, edits it and runs a command
// with its exec_command tool, and reports; notes.txt holds the fix.
func TestCodex(t *testing.T) {
	t.Parallel()
	bin := agentnpmtest.Codex(t)
	for _, c := range []struct {
		name string
		mode agent.Mode
		call func(string, any) string
	}{{"ptk", agent.ModePTK, ptkCall}, {"hermes", agent.ModeAuto, hermesCall}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			notes := filepath.Join(ws, "notes.txt")
			os.WriteFile(notes, []byte("hello wrold\n"), 0o644)
			// Codex's sandbox refuses a CODEX_HOME under /tmp.
			cache, err := os.UserCacheDir()
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(cache, "ptk"), 0o755)
			home, err := os.MkdirTemp(filepath.Join(cache, "ptk"), "codex-home-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(home) })
			m := agentScript(c.call, "Fixed: notes.txt now says hello world.",
				step{"", "exec_command", map[string]any{"cmd": "cat notes.txt"}},
				step{"hello wrold", "exec_command", map[string]any{"cmd": "sed -i 's/wrold/world/' notes.txt"}},
				step{"", "exec_command", map[string]any{"cmd": "cat notes.txt"}},
				step{want: "hello world"})
			url := agentGateway(t, m, c.mode, func(cfg *gateway.Config) { cfg.APIKeys = []string{"sk-local"} })
			config := `model = "local-model"
model_provider = "ptk"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.ptk]
name = "ptk serve"
base_url = "` + url + `/v1"
env_key = "PTK_CODEX_KEY"
wire_api = "responses"
`
			if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "exec", "--skip-git-repo-check", "--json", agentTask)
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "PTK_CODEX_KEY=sk-local")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("codex: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "Fixed: notes.txt now says hello world.") {
				t.Errorf("codex did not report the fix:\n%s", out)
			}
			if b, _ := os.ReadFile(notes); string(b) != "hello world\n" {
				t.Errorf("notes.txt holds %q, want the fix:\n%s", b, out)
			}
		})
	}
}
