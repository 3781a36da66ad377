package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The attack: the model asks bash to print the environment. A catalog
// provider's key under a name that says nothing of being one (api_key_env
// MY_SERVICE) passed the filter by name and shape, so the key went to the
// model — and from there anywhere. ptk run now holds back every catalog
// key variable; one the user names in PTK_PASS_ENV still goes through.
func TestRunBashGetsNoCatalogKey(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no bash")
	}
	models := filepath.Join(t.TempDir(), "models.json")
	catalog := `{"providers": {"mine": {"api": "openai", "api_base": "http://127.0.0.1:9/v1", "api_key_env": "MY_SERVICE"}},
		"models": {"mine-model": {"provider": "mine", "model_id": "m", "tool_protocol": "ptk"}}}`
	if err := os.WriteFile(models, []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MY_SERVICE", "hunter2-catalog-key")
	t.Setenv("PLAIN_VISIBLE", "plain-value")
	for _, pass := range []bool{false, true} {
		if pass {
			t.Setenv("PTK_PASS_ENV", "MY_SERVICE")
		}
		f, url := newFakeOpenAI(t,
			fakeReply{content: `<PTK_CALL>{"tool": "bash", "args": {"command": "echo \"[$MY_SERVICE][$PLAIN_VISIBLE]\""}}</PTK_CALL>`},
			fakeReply{content: "done"})
		code, out, errOut := runPTK(t, "", "run", "--models", models, "--base-url", url, "--model", "qwen3:8b", "--mode", "ptk",
			"--workspace", t.TempDir(), "--yes", "--json", "print the environment")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q, stdout %s", code, errOut, out)
		}
		msgs, _ := f.request(1)["messages"].([]any)
		sent, _ := json.Marshal(msgs[len(msgs)-1]) // the tool's result
		want := "[][plain-value]"
		if pass {
			want = "[hunter2-catalog-key][plain-value]"
		}
		if !strings.Contains(string(sent), want) {
			t.Errorf("PTK_PASS_ENV=%v: the tool result sent to the model lacks %s:\n%s", pass, want, sent)
		}
		if !pass && strings.Contains(string(sent), "hunter2") {
			t.Errorf("the catalog's key reached the model:\n%s", sent)
		}
	}
}

// The attack: the model plants record.jsonl -> a file of the user's in the
// workspace; the next `ptk run --record record.jsonl` appended the model's
// requests to the link's target. The link is refused, loudly, and the
// target keeps its content.
func TestRecordRefusesPlantedLink(t *testing.T) {
	ws := t.TempDir()
	target := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(target, []byte("ssh-ed25519 AAAA user\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(ws, "record.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, url := newFakeOpenAI(t)
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "qwen3:8b", "--workspace", ws, "--record", link, "hello")
	if code != 2 || !strings.Contains(errOut, "--record") || !strings.Contains(errOut, "not a regular file") {
		t.Errorf("exit %d, stderr %q, stdout %q: want a usage error naming --record", code, errOut, out)
	}
	if b, _ := os.ReadFile(target); string(b) != "ssh-ed25519 AAAA user\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}
