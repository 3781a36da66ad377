package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// fakeOpenAI is an OpenAI-compatible Chat Completions server that answers
// with scripted replies, streamed in 1–3 character pieces when asked to
// stream, in the wire format OpenAI, Ollama and vLLM use.
type fakeOpenAI struct {
	t       *testing.T
	replies []fakeReply

	mu       sync.Mutex
	n        int
	requests []map[string]any
}

type fakeReply struct {
	content string
	calls   [][2]string // native calls: name, arguments
	// reasoning is sent as reasoning_content (windowServer).
	reasoning string
	// status and body make an error answer.
	status int
	body   string
}

func newFakeOpenAI(t *testing.T, replies ...fakeReply) (*fakeOpenAI, string) {
	f := &fakeOpenAI{t: t, replies: replies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/v1"
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, 400)
		return
	}
	req["_authorization"] = r.Header.Get("Authorization")
	f.mu.Lock()
	f.requests = append(f.requests, req)
	if f.n >= len(f.replies) {
		f.mu.Unlock()
		f.t.Errorf("request %d past the script", f.n+1)
		http.Error(w, `{"error":{"message":"no more replies"}}`, 500)
		return
	}
	rep := f.replies[f.n]
	f.n++
	f.mu.Unlock()
	if rep.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
		return
	}
	model, _ := req["model"].(string)
	usage := map[string]any{"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
	var toolCalls []map[string]any
	for i, c := range rep.calls {
		toolCalls = append(toolCalls, map[string]any{"index": i, "id": fmt.Sprintf("call_%d_%d", f.n, i), "type": "function", "function": map[string]any{"name": c[0], "arguments": c[1]}})
	}
	finish := "stop"
	if len(toolCalls) > 0 {
		finish = "tool_calls"
	}
	if stream, _ := req["stream"].(bool); !stream {
		msg := map[string]any{"role": "assistant", "content": rep.content}
		if len(toolCalls) > 0 {
			msg["tool_calls"] = toolCalls
		}
		json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	send := func(delta map[string]any, finish any) {
		chunk := map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": model, "system_fingerprint": "fp_1",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil)
	for i, p := range splitSmall(rep.content) {
		_ = i
		send(map[string]any{"content": p}, nil)
	}
	for i, c := range rep.calls {
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": toolCalls[i]["id"], "type": "function", "function": map[string]any{"name": c[0], "arguments": ""}}}}, nil)
		for _, p := range splitSmall(c[1]) {
			send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	send(map[string]any{}, finish)
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model, "choices": []any{}, "usage": usage})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
	fl.Flush()
}

// splitSmall cuts s into pieces of 1, 2 and 3 bytes in turn, a character
// never cut (a JSON string holds whole characters: json.Marshal would make
// the halves U+FFFD).
func splitSmall(s string) []string {
	var out []string
	for n := 1; s != ""; n = n%3 + 1 {
		k := min(n, len(s))
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func (f *fakeOpenAI) request(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

// workspace makes a small repository to work in.
func workspace(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":            "module example.com/hello\n\ngo 1.26\n",
		"main.go":           "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(greet(\"world\"))\n}\n",
		"greet.go":          "package main\n\nfunc greet(name string) string { return \"hello, \" + name }\n",
		"docs/README.md":    "# hello\n",
		"node_modules/x.js": "ignored",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A model that drifts between dialects, streamed in 1–3 character pieces:
// Hermes, pythonic, PTK, then the answer.
func messyReplies() []fakeReply {
	return []fakeReply{
		{content: "I'll look at the module first.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"go.mod\"}}\n</tool_call>"},
		{content: "[grep(pattern='func ', include='*.go')]"},
		{content: "<think>Maybe list the docs.</think>\n<PTK_CALL>\n{'tool': 'list_dir', 'args': {'path': 'docs',}}\n</PTK_CALL>"},
		{content: "This is a Go program, example.com/hello, that prints \"hello, world\"."},
	}
}

func TestRunJSON(t *testing.T) {
	f, url := newFakeOpenAI(t, messyReplies()...)
	ws := workspace(t)
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "qwen3:8b", "--mode", "ptk", "--workspace", ws, "--stream", "--json", "What does this repository do?")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q, stdout %s", code, errOut, out)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	want := []string{"content", "cost", "denied", "duration_ms", "error", "invalid", "iterations", "success", "tool_calls", "total_tool_calls", "usage"}
	if keys := slices.Sorted(maps.Keys(raw)); !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys = %v, want %v", keys, want)
	}
	// The order of the keys is the documented one.
	order := []string{`"success"`, `"content"`, `"iterations"`, `"tool_calls"`, `"total_tool_calls"`, `"error"`, `"usage"`, `"cost"`, `"duration_ms"`}
	last := -1
	for _, k := range order {
		i := strings.Index(out, k+":")
		if i < last {
			t.Errorf("key %s out of order in %s", k, out)
		}
		last = i
	}
	for _, s := range []string{
		`"success":true`, `"iterations":4`, `"total_tool_calls":3`, `"error":null`,
		`"tool_calls":[{"tool":"read_file","args":{"path":"go.mod"}},{"tool":"grep","args":{"pattern":"func ","include":"*.go"}},{"tool":"list_dir","args":{"path":"docs"}}]`,
		`"usage":{"prompt_tokens":480,"completion_tokens":120}`, `"cost":0`,
		`"content":"This is a Go program, example.com/hello, that prints \"hello, world\"."`,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %s:\n%s", s, out)
		}
	}
	if errOut != "" {
		t.Errorf("--json wrote progress on stderr: %q", errOut)
	}
	// The model saw the results of the tools: the file, the grep lines.
	second, _ := json.Marshal(f.request(1)["messages"])
	third, _ := json.Marshal(f.request(2)["messages"])
	if !strings.Contains(string(second), "module example.com/hello") || !strings.Contains(string(third), "greet.go:3: func greet") {
		t.Errorf("tool results not sent back:\n%s\n%s", second, third)
	}
	if f.request(0)["stream"] != true || f.request(0)["tools"] != nil {
		t.Errorf("first request: stream %v, tools %v", f.request(0)["stream"], f.request(0)["tools"])
	}
}

func TestRunHumanOutput(t *testing.T) {
	_, url := newFakeOpenAI(t, messyReplies()...)
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", workspace(t), "--stream", "What", "does", "it", "do?")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if out != "This is a Go program, example.com/hello, that prints \"hello, world\".\n" {
		t.Errorf("stdout = %q, want only the answer", out)
	}
	for _, s := range []string{"· model call 1", "→ read_file {\"path\":\"go.mod\"}", "← 1 module example.com/hello (3 lines)", "→ grep", "greet.go:3:", "I'll look at the module first.", "· 4 model calls, 3 tool calls, 480+120 tokens"} {
		if !strings.Contains(errOut, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errOut)
		}
	}
	if strings.Contains(errOut, "\x1b[") {
		t.Errorf("colour on a non-terminal: %q", errOut)
	}
}

// Native tool calls streamed as deltas, and a provider that rejects tools
// in auto mode.
func TestRunNativeAndAuto(t *testing.T) {
	f, url := newFakeOpenAI(t,
		fakeReply{calls: [][2]string{{"read_file", `{"path": "greet.go"}`}, {"glob", `{"pattern": "**/*.md"}`}}},
		fakeReply{content: "greet returns a greeting; the docs are in docs/README.md."},
	)
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "gpt-x", "--mode", "native", "--workspace", workspace(t), "--stream", "--json", "go")
	if code != 0 || !strings.Contains(out, `"tool_calls":[{"tool":"read_file","args":{"path":"greet.go"}},{"tool":"glob","args":{"pattern":"**/*.md"}}]`) {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out, errOut)
	}
	if tools, _ := f.request(0)["tools"].([]any); len(tools) != 7 {
		t.Errorf("native request sent %d tools, want the 7 built-ins", len(tools))
	}
	msgs, _ := json.Marshal(f.request(1)["messages"])
	if !strings.Contains(string(msgs), `"tool_call_id"`) || !strings.Contains(string(msgs), "docs/README.md") {
		t.Errorf("tool results not sent as tool messages: %s", msgs)
	}

	f, url = newFakeOpenAI(t,
		fakeReply{status: 400, body: `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error","param":null,"code":null}}`},
		fakeReply{content: "<tool_call>{\"name\": \"list_dir\", \"arguments\": {}}</tool_call>"},
		fakeReply{content: "There are three files."},
	)
	code, out, errOut = runPTK(t, "", "run", "--base-url", url, "--model", "gemma:2b", "--workspace", workspace(t), "go")
	if code != 0 || out != "There are three files.\n" || !strings.Contains(errOut, "text protocol") {
		t.Fatalf("auto: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if f.request(1)["tools"] != nil {
		t.Errorf("after the 400 the request still sends tools")
	}
}

func TestRunFailures(t *testing.T) {
	ws := workspace(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/v1"
	dead.Close()
	_, authURL := newFakeOpenAI(t, fakeReply{status: 401, body: `{"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`})
	_, missingURL := newFakeOpenAI(t, fakeReply{status: 404, body: `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`})
	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
		msg  string
	}{
		{"no prompt", nil, []string{"run", "--model", "m"}, 2, "needs a prompt"},
		{"no model", nil, []string{"run", "--model", " , ", "hi"}, 2, "PTK_MODEL"},
		{"bad catalog", nil, []string{"run", "--models", "testdata/tools.json", "hi"}, 2, "model catalog"},
		{"bad mode", nil, []string{"run", "--model", "m", "--mode", "magic", "hi"}, 2, "--mode"},
		{"unknown tool", nil, []string{"run", "--model", "m", "--tools", "read_file,rm", "--workspace", ws, "hi"}, 2, `unknown tool "rm"`},
		{"no workspace", nil, []string{"run", "--model", "m", "--workspace", filepath.Join(ws, "nope"), "hi"}, 2, "--workspace"},
		{"no server", nil, []string{"run", "--base-url", deadURL, "--model", "m", "--workspace", ws, "hi"}, 2, "no model answers at " + deadURL},
		{"bad key", nil, []string{"run", "--base-url", authURL, "--model", "m", "--workspace", ws, "hi"}, 2, "PTK_API_KEY"},
		{"unknown model", nil, []string{"run", "--base-url", missingURL, "--model", "llama9", "--workspace", ws, "hi"}, 2, "ollama pull llama9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			code, _, errOut := runPTK(t, "", c.args...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != c.code || !strings.Contains(errOut, c.msg) || !strings.HasPrefix(lines[len(lines)-1], "ptk: ") {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, c.code, c.msg)
			}
		})
	}

	// A run that a limit stops: exit 3, the JSON says why.
	var loop []fakeReply
	for i := range 3 {
		loop = append(loop, fakeReply{content: fmt.Sprintf(`<PTK_CALL>{"tool": "read_file", "args": {"path": "go.mod", "offset": %d}}</PTK_CALL>`, i+1)})
	}
	_, url := newFakeOpenAI(t, loop...)
	code, out, _ := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", ws, "--max-iterations", "3", "--json", "loop")
	if code != 3 || !strings.Contains(out, `"success":false`) || !strings.Contains(out, `"error":{"code":"MAX_ITERATIONS_REACHED","message":"`) || !strings.Contains(out, `"total_tool_calls":3`) {
		t.Errorf("limit: exit %d, stdout %s", code, out)
	}
}

// The built binary, configured by environment variables, against a server
// that streams its calls in pieces.
func TestRunBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	f, url := newFakeOpenAI(t, messyReplies()...)
	cmd := exec.Command(ptkBinary(t), "run", "--mode", "ptk", "--stream", "--json", "What does this repository do?")
	cmd.Dir = workspace(t)
	cmd.Env = append(os.Environ(), "PTK_BASE_URL="+url, "PTK_MODEL=qwen3:8b", "PTK_API_KEY=sk-test")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ptk run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"success":true`) || !strings.Contains(string(out), `"total_tool_calls":3`) {
		t.Errorf("stdout = %s", out)
	}
	if got := f.request(0)["_authorization"]; got != "Bearer sk-test" || f.request(0)["model"] != "qwen3:8b" {
		t.Errorf("PTK_API_KEY / PTK_MODEL not used: authorization %q, model %v", got, f.request(0)["model"])
	}
}

// The mistakes models make: a misspelt tool next to a good call, a call
// repeated, a call inside reasoning, arguments with the wrong types.
func TestRunMessyModel(t *testing.T) {
	f, url := newFakeOpenAI(t,
		fakeReply{content: "<tool_call>\n{\"name\": \"read_files\", \"arguments\": {\"path\": \"main.go\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"main.go\", \"limit\": \"3\"}}\n</tool_call>"},
		fakeReply{content: "<think>I should check it again <tool_call>{\"name\": \"grep\", \"arguments\": {\"pattern\": \"x\"}}</tool_call></think>\n```json\n{\"name\": \"read_file\", \"arguments\": {\"limit\": 3, \"path\": \"main.go\"}}\n```"},
		fakeReply{content: "main.go prints a greeting."},
	)
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", workspace(t), "--stream", "--json", "What does main.go do?")
	if code != 0 || !strings.Contains(out, `"total_tool_calls":1`) || !strings.Contains(out, `"tool_calls":[{"tool":"read_file","args":{"path":"main.go","limit":3}}]`) {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out, errOut)
	}
	second, _ := json.Marshal(f.request(1)["messages"])
	third, _ := json.Marshal(f.request(2)["messages"])
	if !strings.Contains(string(second), `did you mean`) || !strings.Contains(string(second), `package main`) {
		t.Errorf("the misspelt call's error or the good call's result is missing:\n%s", second)
	}
	if !strings.Contains(string(third), "repeats one of your last") {
		t.Errorf("the repeated call was not reported:\n%s", third)
	}
}
