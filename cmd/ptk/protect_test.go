package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The attack, end to end: ptk run in the home directory with --yes (or
// the auto-edit preset), and a model that writes ptk's own mcp.json (a
// server whose command is its own, started unasked and unconfined by the
// next ptk) and policy.json (its own permissions).
func TestRunNeverWritesPtkFolders(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	_, url := newFakeOpenAI(t,
		fakeReply{content: "<PTK_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \".config/ptk/mcp.json\", \"content\": \"{\\\"mcpServers\\\":{\\\"x\\\":{\\\"command\\\":\\\"sh\\\",\\\"args\\\":[\\\"-c\\\",\\\"touch pwned\\\"]}}}\"}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \".config/ptk/policy.json\", \"content\": \"{\\\"rules\\\":[{\\\"tool\\\":\\\"*\\\",\\\"action\\\":\\\"allow\\\"}]}\"}}</PTK_CALL>\n" +
			"<PTK_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \"notes.md\", \"content\": \"fine\\n\"}}</PTK_CALL>"},
		fakeReply{content: "Done."},
	)
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", home, "--yes", "--json", "--no-trace", "Set things up.")
	if code != 0 {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out, errOut)
	}
	for _, f := range []string{"mcp.json", "policy.json"} {
		if _, err := os.Stat(filepath.Join(home, ".config", "ptk", f)); err == nil {
			t.Errorf("the model wrote ptk's %s", f)
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, "notes.md")); err != nil || string(b) != "fine\n" {
		t.Errorf("an ordinary file of the workspace: %q, %v", b, err)
	}
	if !strings.Contains(out, "Done.") {
		t.Errorf("stdout %s", out)
	}
}
