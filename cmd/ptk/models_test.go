package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestModelsCommand(t *testing.T) {
	code, out, errOut := runPTK(t, "", "models")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, s := range []string{"NAME", "gpt-4o-mini", "claude-sonnet-4", "gemini-2.5-flash", "qwen3:8b*", "$0.15", "$0.6", "native", "ptk"} {
		if !strings.Contains(out, s) {
			t.Errorf("ptk models lacks %q:\n%s", s, out)
		}
	}
	cat := writeCatalog(t, "http://localhost:1/v1")
	_, out, _ = runPTK(t, "", "models", "--models", cat)
	if !regexp.MustCompile(`(?m)^local-a\*\s+fake\s+model-a\s+ptk`).MatchString(out) || !strings.Contains(out, "local-a*") {
		t.Errorf("the user's catalog is not laid over: %s", out)
	}
}

// writeCatalog writes a catalog with two models at base: model-a priced,
// model-b free.
func writeCatalog(t *testing.T, base string) string {
	f := filepath.Join(t.TempDir(), "models.json")
	os.WriteFile(f, []byte(`{"default_model": "local-a",
		"providers": {"fake": {"api": "openai", "api_base": "`+base+`", "api_key_env": "FAKE_KEY"}},
		"models": {
			"local-a": {"provider": "fake", "model_id": "model-a", "cost": {"input": 2, "output": 10}, "tool_protocol": "ptk", "streaming": true},
			"local-b": {"provider": "fake", "model_id": "model-b", "cost": {"input": 0, "output": 0}, "tool_protocol": "native", "streaming": true}}}`), 0o644)
	return f
}

func TestRunWithCatalogCostFallbackAndBudget(t *testing.T) {
	// The catalog's model, its id and key, and its price: 4 calls of 120
	// prompt and 30 completion tokens at $2/$10 per million.
	f, url := newFakeOpenAI(t, messyReplies()...)
	cat := writeCatalog(t, url)
	t.Setenv("FAKE_KEY", "sk-fake")
	code, out, errOut := runPTK(t, "", "run", "--models", cat, "--model", "local-a", "--workspace", workspace(t), "--json", "go")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	var res struct{ Cost float64 }
	json.Unmarshal([]byte(out), &res)
	if math.Abs(res.Cost-0.00216) > 1e-12 || f.request(0)["model"] != "model-a" || f.request(0)["_authorization"] != "Bearer sk-fake" || f.request(0)["tools"] != nil {
		t.Errorf("stdout %s; model %v, auth %v, tools %v (local-a is a ptk model)", out, f.request(0)["model"], f.request(0)["_authorization"], f.request(0)["tools"])
	}

	// a,b: a's key is refused, b answers.
	f, url = newFakeOpenAI(t,
		fakeReply{status: 401, body: `{"error":{"message":"bad key","type":"invalid_request_error"}}`},
		fakeReply{content: "from b"},
	)
	code, out, errOut = runPTK(t, "", "run", "--models", writeCatalog(t, url), "--model", "local-a,local-b", "--workspace", workspace(t), "--json", "go")
	if code != 0 || !strings.Contains(out, `"content":"from b"`) || f.request(1)["model"] != "model-b" {
		t.Errorf("fallback: exit %d, %s %s", code, out, errOut)
	}

	// A budget: the second call would not fit.
	_, url = newFakeOpenAI(t, messyReplies()...)
	code, out, _ = runPTK(t, "", "run", "--models", writeCatalog(t, url), "--model", "local-a", "--workspace", workspace(t), "--max-tokens", "200", "--json", "go")
	if code != 3 || !strings.Contains(out, `"code":"BUDGET_EXCEEDED"`) || !strings.Contains(out, `"iterations":1`) {
		t.Errorf("budget: exit %d, %s", code, out)
	}
}

func TestRunRecordAndReplay(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	_, url := newFakeOpenAI(t, messyReplies()...)
	ws := workspace(t)
	code, first, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", ws, "--stream", "--record", rec, "--json", "go")
	if code != 0 {
		t.Fatalf("record: exit %d: %s", code, errOut)
	}
	data, _ := os.ReadFile(rec)
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Fatalf("%d lines recorded, want 4", n)
	}
	// No server: every answer comes from the file, byte for byte.
	code, second, errOut := runPTK(t, "", "run", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--mode", "ptk", "--workspace", ws, "--replay", rec, "--json", "go")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	strip := regexp.MustCompile(`"duration_ms":\d+`)
	if a, b := strip.ReplaceAllString(first, ""), strip.ReplaceAllString(second, ""); a != b {
		t.Errorf("replay differs:\n%s\n%s", a, b)
	}
	after, _ := os.ReadFile(rec)
	if string(after) != string(data) {
		t.Error("the replay changed the recording")
	}
	// Another prompt misses, clearly.
	code, _, errOut = runPTK(t, "", "run", "--model", "m", "--mode", "ptk", "--workspace", ws, "--replay", rec, "--json", "something else")
	if code != 1 || !strings.Contains(errOut, "no recording") {
		t.Errorf("miss: exit %d, %s", code, errOut)
	}
	var line map[string]any
	json.Unmarshal([]byte(strings.SplitN(string(data), "\n", 2)[0]), &line)
	if line["key"] == nil || line["request"] == nil {
		t.Errorf("recorded line: %v", line)
	}
}
