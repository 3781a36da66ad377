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
	// A catalog provider's key under a name that says nothing of being one
	// passes the filter by name and shape: the worker holds back every
	// catalog key variable.
	models := filepath.Join(t.TempDir(), "models.json")
	if err := os.WriteFile(models, []byte(`{"providers": {"mine": {"api": "openai", "api_base": "http://127.0.0.1:9/v1", "api_key_env": "MY_SERVICE"}},
		"models": {"mine-model": {"provider": "mine", "model_id": "m", "tool_protocol": "ptk"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MY_SERVICE", "hunter2-catalog-key")
	t.Setenv("PTK_MODELS", "")
	f := workerFlags{workspace: home, tools: "write_file,bash", models: models}
	cat, err := workerCatalog(f)
	if err != nil {
		t.Fatal(err)
	}
	_, tools, closeFn, err := workerTools(nil, f, cat.KeyEnvs())
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
	if strings.Contains(out, "hunter2-catalog-key") {
		t.Errorf("a command saw the catalog's key under MY_SERVICE:\n%s", out)
	}
	if !strings.Contains(out, "ghp-passed-on-purpose") {
		t.Errorf("PTK_PASS_ENV's variable did not reach the command:\n%s", out)
	}
}

func fileHolds(path, want string) bool {
	b, err := os.ReadFile(path)
	return err == nil && string(b) == want
}
