package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startServe runs "ptk serve args..." on a free loopback port until the
// test ends, and returns its base URL.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	return startServeTo(t, &syncBuffer{}, args...)
}

// startServeTo is startServe, writing serve's stderr to stderr.
func startServeTo(t *testing.T, stderr interface {
	io.Writer
	String() string
}, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		root := newRoot(strings.NewReader(""), io.Discard, stderr)
		root.SetArgs(append([]string{"serve", "--addr", addr}, args...))
		done <- root.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve ended with %v; stderr:\n%s", err, stderr.String())
		}
	})
	// Serve may first wait for a trace store or MCP servers; on a loaded
	// machine that takes seconds.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			return "http://" + addr
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended at once: %v; stderr:\n%s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not answer; stderr:\n%s", stderr.String())
	return ""
}

func postChat(t *testing.T, url, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, data)
	}
	return resp.StatusCode, out
}

// ptk serve in front of a model without native tools: the calls it writes
// in whichever dialect come back as standard tool_calls, keys are checked,
// and the default model fills in a request that names none.
func TestServe(t *testing.T) {
	f, upstream := newFakeOpenAI(t, messyReplies()[:2]...)
	keys := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(keys, []byte("# clients\nsk-one\n\nsk-two\n"), 0o600)
	url := startServe(t, "--base-url", upstream, "--model", "qwen3:8b", "--mode", "ptk", "--api-keys", keys)

	body := `{"messages":[{"role":"user","content":"What is the module?"}],
	  "tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
	           {"type":"function","function":{"name":"grep","parameters":{"type":"object","properties":{"pattern":{"type":"string"},"include":{"type":"string"}},"required":["pattern"]}}}]}`
	if status, out := postChat(t, url, "", body); status != http.StatusUnauthorized || out["error"] == nil {
		t.Fatalf("no key: %d %v, want 401 with an error", status, out)
	}
	if status, _ := postChat(t, url, "sk-three", body); status != http.StatusUnauthorized {
		t.Fatalf("wrong key: %d, want 401", status)
	}
	for i, want := range []string{`{"path":"go.mod"}`, `{"include":"*.go","pattern":"func "}`} {
		status, out := postChat(t, url, "sk-two", body)
		if status != http.StatusOK {
			t.Fatalf("request %d: %d %v", i, status, out)
		}
		choice := out["choices"].([]any)[0].(map[string]any)
		calls, _ := choice["message"].(map[string]any)["tool_calls"].([]any)
		if choice["finish_reason"] != "tool_calls" || len(calls) != 1 {
			t.Fatalf("request %d: %v", i, out)
		}
		fn := calls[0].(map[string]any)["function"].(map[string]any)
		var got, wantArgs any
		json.Unmarshal([]byte(fn["arguments"].(string)), &got)
		json.Unmarshal([]byte(want), &wantArgs)
		if b1, b2 := mustJSON(got), mustJSON(wantArgs); b1 != b2 {
			t.Errorf("request %d: arguments %s, want %s", i, b1, b2)
		}
		if out["usage"] == nil {
			t.Errorf("request %d: no usage", i)
		}
		up := f.request(i)
		if up["model"] != "qwen3:8b" || up["tools"] != nil || up["_authorization"] != "" {
			t.Errorf("upstream request %d: model %v, tools %v, auth %q", i, up["model"], up["tools"], up["_authorization"])
		}
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestServeFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--mode", "magic"},
		{"serve", "--timeout", "0s"},
		{"serve", "--api-keys", filepath.Join(t.TempDir(), "missing")},
		{"serve", "--addr", "not-an-address"},
	} {
		code, _, errOut := runPTK(t, "", args...)
		if code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, errOut)
		}
	}
}

// ptk serve speaks the agents' APIs: Claude Code's and Codex's model names,
// or a hosted model of the catalog, reach the --model model or the one
// --model-map names, never a hosted provider; calls the model writes come
// back as tool_use blocks and function_call items.
func TestServeAgentAPIs(t *testing.T) {
	call := "<tool_call>\n{\"name\": \"Read\", \"arguments\": {\"file_path\": \"/w/go.mod\"}}\n</tool_call>"
	f, upstream := newFakeOpenAI(t, fakeReply{content: call}, fakeReply{content: "Small."}, fakeReply{content: "Hosted? No."}, fakeReply{content: call})
	t.Setenv("ANTHROPIC_API_KEY", "sk-must-not-be-used")
	url := startServe(t, "--base-url", upstream, "--model", "qwen3:8b", "--mode", "ptk", "--no-trace",
		"--model-map", "claude-haiku-*=small-model")
	tools := `[{"name":"Read","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}]`
	send := func(path, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", "anything")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		data, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(data, &out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, data)
		}
		return out
	}
	out := send("/v1/messages", `{"model":"claude-opus-5-5","max_tokens":100,"messages":[{"role":"user","content":"Read go.mod"}],"tools":`+tools+`}`)
	content, _ := out["content"].([]any)
	if out["stop_reason"] != "tool_use" || len(content) != 1 || content[0].(map[string]any)["name"] != "Read" || out["model"] != "qwen3:8b" {
		t.Errorf("messages: %v", out)
	}
	send("/v1/messages", `{"model":"claude-haiku-4-5-20251001","max_tokens":100,"messages":[{"role":"user","content":"Hi"}]}`)
	send("/v1/messages", `{"model":"claude-sonnet-4","max_tokens":100,"messages":[{"role":"user","content":"Hi"}]}`)
	out = send("/v1/responses", `{"model":"gpt-4o","input":"Read go.mod","tools":[{"type":"function","name":"Read","parameters":{"type":"object","properties":{"file_path":{"type":"string"}}}},{"type":"web_search"}],"store":false}`)
	items, _ := out["output"].([]any)
	if out["status"] != "completed" || len(items) != 1 || items[0].(map[string]any)["type"] != "function_call" {
		t.Errorf("responses: %v", out)
	}
	for i, want := range []string{"qwen3:8b", "small-model", "qwen3:8b", "qwen3:8b"} {
		if up := f.request(i); up["model"] != want || up["_authorization"] != "" {
			t.Errorf("upstream request %d: model %v, authorization %q; want %s and none", i, up["model"], up["_authorization"], want)
		}
	}
}
