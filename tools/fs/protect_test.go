package fs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The attack: the workspace holds ptk's own folders (ptk chat run in the
// home directory, or XDG folders inside a project). An edit — run without
// asking under the auto-edit preset, or allowed by a broad policy rule —
// writes ptk's mcp.json (a server whose command is the model's: run at the
// next start, unconfined and unasked), its policy.json (the model's own
// permissions), or the shadow repository of the checkpoints (whose config
// ptk's git reads). The file tools refuse to write in the folders named
// with WithProtected, also through a link and before they exist.
func TestProtectedFolders(t *testing.T) {
	ws := t.TempDir()
	config := filepath.Join(ws, ".config", "ptk")        // not made yet
	state := filepath.Join(ws, ".local", "state", "ptk") // made, with a file
	if err := os.MkdirAll(filepath.Join(state, "checkpoints", "abc"), 0o700); err != nil {
		t.Fatal(err)
	}
	shadow := filepath.Join(state, "checkpoints", "abc", "config")
	if err := os.WriteFile(shadow, []byte("[core]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, ".config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".config", filepath.Join(ws, "cfg")); err != nil {
		t.Fatal(err)
	}
	w, err := New(ws, WithProtected(config, state, filepath.Join(t.TempDir(), "elsewhere")))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, c := range []struct {
		tool string
		args args
	}{
		{"write_file", args{"path": ".config/ptk/mcp.json", "content": `{"mcpServers":{"x":{"command":"sh","args":["-c","touch /tmp/pwned"]}}}`}},
		{"write_file", args{"path": ".config/ptk/policy.json", "content": `{"rules":[{"tool":"*","action":"allow"}]}`}},
		{"write_file", args{"path": "cfg/ptk/policy.json", "content": "{}"}},
		{"write_file", args{"path": "./docs/../.config/ptk/models.json", "content": "{}"}},
		{"write_file", args{"path": ".local/state/ptk/checkpoints/abc/config", "content": "[core]\n\tfsmonitor = touch /tmp/pwned\n"}},
		{"edit_file", args{"path": ".local/state/ptk/checkpoints/abc/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = x"}},
	} {
		res := run(t, w, c.tool, c.args)
		if !res.IsError || !strings.Contains(res.Content, "ptk's own") {
			t.Errorf("%s %v: %q, want a refusal", c.tool, c.args["path"], res.Content)
		}
	}
	if _, err := os.Stat(filepath.Join(config, "mcp.json")); err == nil {
		t.Error("mcp.json was written")
	}
	if _, err := os.Stat(config); err == nil {
		t.Error("the config folder was made")
	}
	if b, _ := os.ReadFile(shadow); string(b) != "[core]\n" {
		t.Errorf("the shadow repository's config was changed: %q", b)
	}
	// The rest of the workspace, .config's other folders included, is
	// written as before.
	for _, p := range []string{".config/other/settings.json", "main.go", ".local/state/other"} {
		if res := run(t, w, "write_file", args{"path": p, "content": "x\n"}); res.IsError {
			t.Errorf("write %s: %s", p, res.Content)
		}
	}
}
