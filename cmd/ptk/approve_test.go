package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/tools/fs"
	"github.com/ptkit/ptk/tools/shell"
)

// A model that edits a file, writes one, runs a command, then tries to
// leave the workspace, then answers.
func codingReplies() []fakeReply {
	return []fakeReply{
		{content: "I'll make the change.\n" +
			"<PTK_CALL>{\"tool\": \"edit_file\", \"args\": {\"path\": \"main.go\", \"old_string\": \"greet(\\\"world\\\")\", \"new_string\": \"greet(\\\"ptk\\\")\"}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \"docs/NOTES.md\", \"content\": \"# Notes\\n\\nGreets ptk now.\\n\"}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"bash\", \"args\": {\"command\": \"grep -c ptk main.go\"}}</PTK_CALL>"},
		{content: "<PTK_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \"../escaped.txt\", \"content\": \"out\"}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"/etc/passwd\"}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"edit_file\", \"args\": {\"path\": \"../../etc/hostname\", \"old_string\": \"a\", \"new_string\": \"b\"}}</PTK_CALL>"},
		{content: "Done: main.go greets ptk, and docs/NOTES.md says so."},
	}
}

func TestRunCodingWithAndWithoutYes(t *testing.T) {
	// With --yes: the edit, the new file and the command happen; the
	// escapes fail with an error the model reads.
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	os.Rename(workspace(t), ws)
	f, url := newFakeOpenAI(t, codingReplies()...)
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", ws, "--yes", "--json", "Greet ptk instead of the world, and note it.")
	if code != 0 {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out, errOut)
	}
	main, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	notes, err := os.ReadFile(filepath.Join(ws, "docs", "NOTES.md"))
	if !strings.Contains(string(main), `greet("ptk")`) || err != nil || string(notes) != "# Notes\n\nGreets ptk now.\n" {
		t.Fatalf("main.go %q, notes %q (%v)", main, notes, err)
	}
	if _, err := os.Stat(filepath.Join(parent, "escaped.txt")); err == nil {
		t.Fatal("write_file escaped the workspace")
	}
	second, _ := json.Marshal(f.request(1)["messages"])
	if !strings.Contains(string(second), "@@") || !strings.Contains(string(second), "1\\nexit code 0") {
		t.Errorf("the edit's diff or the command's output is missing:\n%s", second)
	}
	third, _ := json.Marshal(f.request(2)["messages"])
	if strings.Count(string(third), "escapes the workspace") < 2 || strings.Contains(string(third), "root:x:0:0") {
		t.Errorf("the escapes were not refused clearly:\n%s", third)
	}

	// Without --yes and without a terminal: nothing changes, the model is
	// told how the user can allow it, and the run still ends with an answer.
	ws2 := workspace(t)
	before, _ := os.ReadFile(filepath.Join(ws2, "main.go"))
	f, url = newFakeOpenAI(t, codingReplies()...)
	code, out, errOut = runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", ws2, "Greet ptk.")
	if code != 0 {
		t.Fatalf("no --yes: exit %d, stderr %s", code, errOut)
	}
	after, _ := os.ReadFile(filepath.Join(ws2, "main.go"))
	if string(after) != string(before) {
		t.Error("main.go changed without approval")
	}
	if _, err := os.Stat(filepath.Join(ws2, "docs", "NOTES.md")); err == nil {
		t.Error("write_file ran without approval")
	}
	second, _ = json.Marshal(f.request(1)["messages"])
	if strings.Count(string(second), "Denied: ptk is running without a terminal") != 3 || !strings.Contains(string(second), "--yes") {
		t.Errorf("the model is not told why and how to allow:\n%s", second)
	}
	if !strings.Contains(errOut, "edit_file denied") || !strings.Contains(out, "Done:") {
		t.Errorf("stderr %s\nstdout %s", errOut, out)
	}
}

func TestRunPolicyFile(t *testing.T) {
	ws := workspace(t)
	pol := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(pol, []byte(`{"rules": [
		{"tool": "bash", "command": "grep", "action": "allow"},
		{"tool": "edit_file", "path": "*.go", "action": "allow"},
		{"tool": "write_file", "action": "deny"}]}`), 0o644)
	f, url := newFakeOpenAI(t, codingReplies()...)
	code, _, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", ws, "--policy", pol, "go")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	main, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	if !strings.Contains(string(main), `greet("ptk")`) {
		t.Error("the policy's allow rule for edit_file did not apply")
	}
	if _, err := os.Stat(filepath.Join(ws, "docs", "NOTES.md")); err == nil {
		t.Error("write_file ran despite the deny rule")
	}
	second, _ := json.Marshal(f.request(1)["messages"])
	if !strings.Contains(string(second), "policy ("+pol+", rule 3) does not allow") || !strings.Contains(string(second), "1\\nexit code 0") {
		t.Errorf("policy decisions not reported:\n%s", second)
	}

	code, _, errOut = runPTK(t, "", "run", "--model", "m", "--workspace", ws, "--policy", filepath.Join(ws, "nope.json"), "go")
	if code != 2 || !strings.Contains(errOut, "--policy") {
		t.Errorf("missing policy file: exit %d, %s", code, errOut)
	}
}

// The question on a terminal: yes, no, always.
func TestApproverQuestion(t *testing.T) {
	var out strings.Builder
	a := &cliApprover{ask: true, in: bufio.NewReader(strings.NewReader("y\nn\na\n")), out: &out}
	call := ptk.Call{Tool: "bash", Args: json.RawMessage(`{"command": "go test ./..."}`)}
	want := []bool{true, false, true, true} // the fourth is "always" from the third
	for i, w := range want {
		v, err := a.Approve(context.Background(), call, ptk.ToolInfo{Name: "bash"})
		if err != nil || v.Allow != w {
			t.Errorf("answer %d: %+v %v, want allow=%v", i, v, err, w)
		}
	}
	if strings.Count(out.String(), "? bash $ go test ./...") != 3 {
		t.Errorf("questions asked: %q", out.String())
	}
	// Canceled while waiting for an answer.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	blocked := &cliApprover{ask: true, in: bufio.NewReader(blockingReader{}), out: &out}
	if _, err := blocked.Approve(ctx, call, ptk.ToolInfo{}); err == nil {
		t.Error("a canceled question did not return")
	}
}

type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

// --sandbox without bubblewrap refuses to start, saying how to install it.
func TestRunSandboxNeedsBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no bwrap (and nothing else) on PATH
	code, _, errOut := runPTK(t, "", "run", "--model", "m", "--workspace", workspace(t), "--sandbox", "hi")
	if code != 2 || !strings.Contains(errOut, "apt install bubblewrap") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// The approvers ask the policy about what a tool declares a call acts on:
// bash its command, write_file its path; a tool that declares nothing is
// matched by rules without a command or path only, whatever its arguments
// are called.
func TestApproversDecideByTheToolsSubject(t *testing.T) {
	dir := t.TempDir()
	sh, err := shell.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	write, _ := ws.Tool("write_file")
	type pathArgs struct {
		Path string `json:"path"`
	}
	guess := tool.New("guess", "declares nothing", func(context.Context, pathArgs) (string, error) { return "", nil })
	policy := &tool.Policy{Rules: []tool.Rule{
		{Tool: "bash", Command: "go test", Action: tool.Allow},
		{Tool: "write_file", Path: "docs/**", Action: tool.Allow},
		{Tool: "guess", Path: "docs/**", Action: tool.Allow},
	}}
	tools := approvalTools([]ptk.Tool{sh.Tool(), write, guess})
	cli := &cliApprover{policy: policy, policyFile: "p.json", tools: tools}
	srv := &serveApprover{policy: policy, file: "p.json", tools: tools}
	for _, c := range []struct {
		tool, args string
		allow      bool
	}{
		{"bash", `{"command": "go test ./..."}`, true},
		{"bash", `{"command": "go vet ./..."}`, false},
		{"write_file", `{"path": "docs/a.md", "content": ""}`, true},
		{"write_file", `{"path": "main.go", "content": ""}`, false},
		{"edit_file", `{"path": "docs/a.md"}`, false}, // not one of the tools
		{"guess", `{"path": "docs/a.md"}`, false},     // no subject declared: no path to match
	} {
		call := ptk.Call{Tool: c.tool, Args: json.RawMessage(c.args)}
		for name, a := range map[string]tool.Approver{"run": cli, "serve": srv} {
			v, err := a.Approve(context.Background(), call, ptk.ToolInfo{Name: c.tool})
			if err != nil || v.Allow != c.allow {
				t.Errorf("%s: %s %s: %+v %v, want allow=%v", name, c.tool, c.args, v, err, c.allow)
			}
		}
	}
}

// TestRunJSONListsDeniedAndInvalid: ptk run --json says which calls were
// denied, with the reason and how to allow them, and which could not run.
func TestRunJSONListsDeniedAndInvalid(t *testing.T) {
	ws := workspace(t)
	_, url := newFakeOpenAI(t,
		fakeReply{content: "<PTK_CALL>{\"tool\": \"bash\", \"args\": {\"command\": \"rm -rf build\"}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"delete_all\", \"args\": {}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"limit\": 3}}</PTK_CALL>"},
		fakeReply{content: "I could not clean up."},
	)
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", ws, "--json", "clean up")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var res struct {
		Denied []struct {
			Tool   string          `json:"tool"`
			Args   json.RawMessage `json:"args"`
			Reason string          `json:"reason"`
		} `json:"denied"`
		Invalid []struct {
			Tool  string `json:"tool"`
			Error struct{ Code, Message string }
		} `json:"invalid"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Denied) != 1 || res.Denied[0].Tool != "bash" || string(res.Denied[0].Args) != `{"command":"rm -rf build"}` ||
		!strings.Contains(res.Denied[0].Reason, "--yes") || !strings.Contains(res.Denied[0].Reason, "--policy") {
		t.Errorf("denied: %+v", res.Denied)
	}
	if len(res.Invalid) != 2 || res.Invalid[0].Tool != "delete_all" || res.Invalid[0].Error.Code != "TOOL_NOT_FOUND" ||
		res.Invalid[1].Tool != "read_file" || res.Invalid[1].Error.Code == "" {
		t.Errorf("invalid: %+v", res.Invalid)
	}
}
