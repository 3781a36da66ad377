package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ptkit/ptk"
)

// windowServer is an OpenAI-compatible Chat Completions server for a model
// with a small context window: it counts every request with its own
// tokenizer (a token per 3 bytes of the messages and tools, 4 per
// message: not ptk's estimate), refuses one past its window with the
// context-length error OpenAI and vLLM give, answers a request for
// compaction notes with notes, and every other request with turn(n), n the
// run's model calls so far.
type windowServer struct {
	t      *testing.T
	window int
	turn   func(n int) fakeReply

	mu       sync.Mutex
	n        int
	largest  int
	refused  int
	notes    []string // the notes requests' last message
	requests int
}

func newWindowServer(t *testing.T, window int, turn func(n int) fakeReply) (*windowServer, string) {
	s := &windowServer{t: t, window: window, turn: turn}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL + "/v1"
}

func (s *windowServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role      string          `json:"role"`
			Content   *string         `json:"content"`
			ToolCalls json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, 400)
		return
	}
	tokens := (len(req.Tools) + 2) / 3
	for _, m := range req.Messages {
		n := len(m.ToolCalls)
		if m.Content != nil {
			n += len(*m.Content)
		}
		tokens += 4 + (n+2)/3
	}
	s.mu.Lock()
	s.requests++
	s.largest = max(s.largest, tokens)
	w.Header().Set("Content-Type", "application/json")
	if tokens > s.window {
		s.refused++
		s.mu.Unlock()
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is %d tokens. However, you requested %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}`, s.window, tokens)
		return
	}
	var rep fakeReply
	if first := req.Messages[0]; first.Content != nil && strings.HasPrefix(*first.Content, "You write the working notes") {
		s.notes = append(s.notes, *req.Messages[len(req.Messages)-1].Content)
		rep = fakeReply{content: fmt.Sprintf("Notes %d: files read one by one; carry on.", len(s.notes))}
	} else {
		rep = s.turn(s.n)
		s.n++
	}
	s.mu.Unlock()
	if rep.status != 0 {
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
		return
	}
	msg := map[string]any{"role": "assistant", "content": rep.content}
	if rep.reasoning != "" {
		msg["reasoning_content"] = rep.reasoning
	}
	var calls []map[string]any
	for i, c := range rep.calls {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%d", s.n, i), "type": "function", "function": map[string]any{"name": c[0], "arguments": c[1]}})
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": tokens, "completion_tokens": 20, "total_tokens": tokens + 20}})
}

func (s *windowServer) stats() (largest, refused, requests int, notes []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.largest, s.refused, s.requests, append([]string(nil), s.notes...)
}

// streamSchema compiles docs/headless.schema.json.
func streamSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../../docs/headless.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("headless.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("headless.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// events reads stream-json output: every line one event valid against the
// schema, init first, result last.
func events(t *testing.T, schema *jsonschema.Schema, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatalf("a line that is not JSON: %v\n%s", err, line)
		}
		if err := schema.Validate(v); err != nil {
			t.Fatalf("an event the schema does not take: %v\n%s", err, line)
		}
		var ev map[string]any
		json.Unmarshal([]byte(line), &ev)
		evs = append(evs, ev)
	}
	if len(evs) < 2 || evs[0]["type"] != "init" || evs[len(evs)-1]["type"] != "result" {
		t.Fatalf("the stream does not go from init to result:\n%s", out)
	}
	return evs
}

// TestStreamJSONEveryEvent runs ptk run --output-format stream-json through
// every kind of event, and checks each line against the documented schema.
func TestStreamJSONEveryEvent(t *testing.T) {
	schema := streamSchema(t)
	seen := map[string]int{}
	ws := workspace(t)

	// Auto mode against a server that refuses tools, then calls through
	// the text protocol: a read, the same read again, a write without
	// --yes (denied), a call of a tool it does not have, a final answer.
	script := []fakeReply{
		{status: 400, body: `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools"}}`},
		{content: "Reading.\n<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"go.mod\"}}</PTK_CALL>", reasoning: "go.mod first"},
		{content: "<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"go.mod\"}}</PTK_CALL>"},
		{content: "<PTK_CALL>{\"tool\": \"write_file\", \"args\": {\"path\": \"x.txt\", \"content\": \"x\"}}</PTK_CALL>\n<PTK_CALL>{\"tool\": \"delete_all\", \"args\": {}}</PTK_CALL>"},
		{content: "It is example.com/hello."},
	}
	_, url := newWindowServer(t, 100000, func(n int) fakeReply { return script[min(n, len(script)-1)] })
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--workspace", ws, "--context", "65536", "--output-format", "stream-json", "What is this?")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, ev := range events(t, schema, out) {
		seen[ev["type"].(string)]++
		if ev["type"] == "approval" && ev["decision"] == "denied" && ev["tool"] != "write_file" {
			t.Errorf("denied: %v", ev)
		}
	}
	if _, err := os.Stat(ws + "/x.txt"); err == nil {
		t.Error("a denied write was written")
	}

	// A long run on a small window: compactions; it ends at its limit
	// (error, exit 3).
	_, url = newWindowServer(t, 2048, func(n int) fakeReply {
		return fakeReply{calls: [][2]string{{"read_file", fmt.Sprintf(`{"path": "main.go", "offset": %d}`, n%5+1)}}}
	})
	code, out, _ = runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "native", "--tools", "read_file", "--workspace", ws,
		"--context", "2048", "--max-iterations", "40", "--max-tool-calls", "40", "--output-format", "stream-json", "Read main.go again and again.")
	if code != exitLimit {
		t.Fatalf("exit %d: %s", code, out)
	}
	evs := events(t, schema, out)
	for _, ev := range evs {
		seen[ev["type"].(string)]++
	}
	if r := evs[len(evs)-1]; r["exit_code"] != float64(3) || r["success"] != false || r["compactions"].(float64) < 1 {
		t.Errorf("result: %v", r)
	}
	for _, kind := range []string{"init", "model_call", "text", "reasoning", "tool_call", "tool_result", "approval", "duplicate",
		"mode_switch", "model_done", "context", "compaction", "error", "result"} {
		if seen[kind] == 0 {
			t.Errorf("no %s event was written", kind)
		}
	}
}

// TestRunLongSessionOnASmallWindow drives a 300-turn session through ptk
// run against a server whose model has a 4,096-token window, which it
// reports nowhere: --context says it. No request the server receives
// passes the window by its own count, the conversation is compacted, the
// notes requests carry the conversation they replace, and the run
// completes.
func TestRunLongSessionOnASmallWindow(t *testing.T) {
	const turns = 300
	ws := workspace(t)
	srv, url := newWindowServer(t, 4096, func(n int) fakeReply {
		if n >= turns-1 {
			return fakeReply{content: "Done: main.go read 299 times."}
		}
		return fakeReply{calls: [][2]string{{"read_file", fmt.Sprintf(`{"path": "main.go", "offset": %d}`, n%7+1)}}}
	})
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "native", "--workspace", ws, "--context", "4096",
		"--max-iterations", fmt.Sprint(turns), "--max-tool-calls", fmt.Sprint(turns), "--output-format", "json", "Read main.go, over and over.")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	var res struct {
		Success    bool   `json:"success"`
		Content    string `json:"content"`
		Iterations int    `json:"iterations"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.Success || res.Iterations != turns || res.Content != "Done: main.go read 299 times." {
		t.Fatalf("%v %+v", err, res)
	}
	largest, refused, requests, notes := srv.stats()
	if largest > 4096 || refused > 0 {
		t.Fatalf("the largest request was %d tokens; %d refused", largest, refused)
	}
	if len(notes) < 5 || requests != turns+len(notes) {
		t.Fatalf("%d notes requests, %d requests", len(notes), requests)
	}
	for i, n := range notes {
		if !strings.Contains(n, "<conversation>") || !strings.Contains(n, `CALL read_file {"path":"main.go"`) || !strings.Contains(n, "RESULT of read_file:") {
			t.Fatalf("notes request %d:\n%s", i+1, n)
		}
	}
	if !strings.Contains(notes[0], "USER: Read main.go, over and over.") || !strings.Contains(notes[1], "<notes>") {
		t.Errorf("the first notes request lacks the task, or the second the first notes:\n%s\n---\n%s", notes[0], notes[1])
	}
}

// --output-schema: the final answer is a JSON value of the schema, read
// like a ptool's; an answer that does not fit goes back to the model.
func TestRunOutputSchema(t *testing.T) {
	schema := t.TempDir() + "/answer.json"
	os.WriteFile(schema, []byte(`{"type":"object","properties":{"module":{"type":"string"},"go_files":{"type":"integer"}},"required":["module","go_files"]}`), 0o644)
	srv, url := newWindowServer(t, 100000, func(n int) fakeReply {
		return []fakeReply{
			{content: "It is example.com/hello."},
			{content: "<answer>{'module': 'example.com/hello', 'go_files': '2',}</answer>"},
		}[min(n, 1)]
	})
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--workspace", workspace(t), "--output-schema", schema, "--output-format", "json", "What module is this?")
	if code != 0 || !strings.Contains(out, `"output":{"module":"example.com/hello","go_files":2}`) || !strings.Contains(out, `"content":"{\"module\":\"example.com/hello\",\"go_files\":2}"`) {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	if _, _, requests, _ := srv.stats(); requests != 2 {
		t.Errorf("%d requests: the first answer should have gone back", requests)
	}
	code, out, _ = runPTK(t, "", "run", "--base-url", url, "--model", "m", "--workspace", workspace(t), "--output-schema", schema, "What module is this?")
	if code != 0 || strings.TrimSpace(out) != `{"module":"example.com/hello","go_files":2}` {
		t.Errorf("text: exit %d, %q", code, out)
	}
	for _, bad := range [][]string{{"--output-schema", "/nonexistent.json"}, {"--output-format", "yaml"}, {"--json", "--output-format", "text"}, {"--context", "100"}} {
		code, _, errOut := runPTK(t, "", append([]string{"run", "--base-url", url, "--model", "m"}, append(bad, "hi")...)...)
		if code != 2 || !strings.Contains(errOut, "ptk: ") {
			t.Errorf("%v: exit %d, %s", bad, code, errOut)
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	for code, want := range map[ptk.Code]int{ptk.MaxIterationsReached: 3, ptk.MaxToolCallsReached: 3, ptk.BudgetExceeded: 3, ptk.Timeout: 3,
		ptk.ContextFull: 3, ptk.DuplicateToolCall: 3, ptk.Canceled: 130, ptk.LLMCallFailed: 1, ptk.ToolExecutionFailed: 1, ptk.InvalidConfig: 2} {
		if got := runExitCode(ptk.NewError(code, "x", nil)); got != want {
			t.Errorf("%s: exit %d, want %d", code, got, want)
		}
	}
	if runExitCode(nil) != 0 || runExitCode(errors.New("x")) != 1 {
		t.Error("nil or a plain error")
	}
}

// On stderr, ptk run says the context's fill with each model call, each
// compaction, and the highest fill at the end.
func TestRunProgressShowsTheFill(t *testing.T) {
	const turns = 30
	_, url := newWindowServer(t, 2048, func(n int) fakeReply {
		if n >= turns-1 {
			return fakeReply{content: "Done."}
		}
		return fakeReply{calls: [][2]string{{"read_file", fmt.Sprintf(`{"path": "main.go", "offset": %d}`, n%7+1)}}}
	})
	code, out, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "native", "--tools", "read_file", "--workspace", workspace(t),
		"--context", "2048", "--max-iterations", fmt.Sprint(turns), "--max-tool-calls", fmt.Sprint(turns), "Read main.go.")
	if code != 0 || strings.TrimSpace(out) != "Done." {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	for _, want := range []string{"· model call 1 · context ", "% of 2048\n", "· compacted: ", " earlier messages replaced by the model's notes (about ", "tokens of 2048)", ", context at most ", "% of 2048, compacted "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// ptk run against an Ollama server, named by its OpenAI-compatible base
// URL as usual: ptk finds it is Ollama and speaks its native API, sending
// num_ctx (--context, or what the Modelfile says), so that the window it
// counts against is the one Ollama uses.
func TestRunSpeaksOllamasNativeAPI(t *testing.T) {
	var mu sync.Mutex
	var numCtx []any
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"version":"0.12.6"}`) })
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"parameters":"num_ctx 12288","model_info":{"general.architecture":"qwen3","qwen3.context_length":40960}}`)
	})
	mux.HandleFunc("GET /api/ps", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"models":[]}`) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		t.Error("ptk used the OpenAI-compatible API of an Ollama server")
		http.Error(w, "no", 500)
	})
	mux.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		json.Unmarshal(body, &req)
		mu.Lock()
		numCtx = append(numCtx, req["options"].(map[string]any)["num_ctx"])
		mu.Unlock()
		// Ollama counts with the model's tokenizer: here, a token per
		// 4 bytes of the request.
		fmt.Fprintf(w, `{"model":"qwen3:8b","message":{"role":"assistant","content":"Hello from Ollama."},"done":true,"done_reason":"stop","prompt_eval_count":%d,"eval_count":5}`, len(body)/4)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, c := range []struct {
		args []string
		want float64
	}{{nil, 12288}, {[]string{"--context", "16384"}, 16384}} {
		args := append([]string{"run", "--base-url", srv.URL + "/v1", "--model", "qwen3:8b", "--workspace", workspace(t), "--output-format", "stream-json"}, c.args...)
		code, out, errOut := runPTK(t, "", append(args, "hi")...)
		if code != 0 || !strings.Contains(out, `"content":"Hello from Ollama."`) || !strings.Contains(out, fmt.Sprintf(`"measured":true,"percent":`)) || !strings.Contains(out, fmt.Sprintf(`"window":%d`, int(c.want))) {
			t.Fatalf("%v: exit %d\n%s\n%s", c.args, code, out, errOut)
		}
		mu.Lock()
		if got := numCtx[len(numCtx)-1]; got != c.want {
			t.Errorf("%v: num_ctx %v, want %v", c.args, got, c.want)
		}
		mu.Unlock()
	}
}
