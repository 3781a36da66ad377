package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The worker's tools are ptk's: with the workspace at the home directory,
// a model's write_file cannot write ptk's own mcp.json or policy.json, and
// its commands see no provider key but those the user passes on purpose.
func TestWorkerToolsProtectPtk(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("OPENAI_API_KEY", "sk-secret-of-the-worker")
	t.Setenv("GITHUB_TOKEN", "ghp-passed-on-purpose")
	t.Setenv("PTK_PASS_ENV", "GITHUB_TOKEN")
	_, tools, closeFn, err := workerTools(nil, workerFlags{workspace: home, tools: "write_file,bash"})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	run := func(name, args string) string {
		t.Helper()
		for _, tl := range tools {
			if tl.Info().Name == name {
				r, err := tl.Run(context.Background(), json.RawMessage(args))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return r.Content
			}
		}
		t.Fatalf("no tool %s", name)
		return ""
	}
	for _, f := range []string{".config/ptk/mcp.json", ".config/ptk/policy.json"} {
		out := run("write_file", `{"path": "`+f+`", "content": "{}"}`)
		if _, err := os.Stat(filepath.Join(home, f)); err == nil {
			t.Errorf("the worker's write_file wrote ptk's %s: %s", f, out)
		}
	}
	if out := run("write_file", `{"path": "notes.md", "content": "fine"}`); !fileHolds(filepath.Join(home, "notes.md"), "fine") {
		t.Errorf("an ordinary file: %s", out)
	}
	out := run("bash", `{"command": "env"}`)
	if strings.Contains(out, "sk-secret-of-the-worker") {
		t.Errorf("a command saw the worker's provider key:\n%s", out)
	}
	if !strings.Contains(out, "ghp-passed-on-purpose") {
		t.Errorf("PTK_PASS_ENV's variable did not reach the command:\n%s", out)
	}
}

func fileHolds(path, want string) bool {
	b, err := os.ReadFile(path)
	return err == nil && string(b) == want
}
