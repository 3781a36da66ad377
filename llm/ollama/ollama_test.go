package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/agent/agenttest"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/ollama"
)

// fakeOllama speaks Ollama's native API as Ollama does: /api/version,
// /api/show (a Modelfile's parameters, model_info's context_length),
// /api/ps, and /api/chat, whole or streamed as JSON lines. It counts a
// prompt with its own tokenizer (a token per 3 bytes, 4 per message) and,
// like Ollama, cuts one longer than its context to half of it without
// saying so but in prompt_eval_count. Its context is the num_ctx sent, or
// ctx when it ignores num_ctx.
type fakeOllama struct {
	t       *testing.T
	numCtx  string // the Modelfile's num_ctx PARAMETER, "" for none
	trained int
	loaded  int // the context /api/ps says the model is loaded with, 0: not loaded
	ignore  int // a context it uses whatever num_ctx says, 0: none
	reply   func(req map[string]any, n int) map[string]any
	mu      sync.Mutex
	chats   []map[string]any
	counts  []int
	cut     int
	n       int
}

func newFake(t *testing.T, f *fakeOllama) string {
	f.t = t
	if f.trained == 0 {
		f.trained = 40960
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"version":"0.12.6"}`) })
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		json.NewDecoder(r.Body).Decode(&req)
		if req.Model == "missing" {
			w.WriteHeader(404)
			io.WriteString(w, `{"error":"model 'missing' not found"}`)
			return
		}
		params := "temperature 0.6\nstop \"<|im_end|>\""
		if f.numCtx != "" {
			params += "\nnum_ctx " + f.numCtx
		}
		json.NewEncoder(w).Encode(map[string]any{"parameters": params, "capabilities": []string{"completion", "tools", "thinking"},
			"model_info": map[string]any{"general.architecture": "qwen3", "qwen3.context_length": f.trained, "qwen3.embedding_length": 4096}})
	})
	mux.HandleFunc("GET /api/ps", func(w http.ResponseWriter, r *http.Request) {
		models := []any{}
		if f.loaded > 0 {
			models = append(models, map[string]any{"name": "qwen3:8b", "model": "qwen3:8b", "context_length": f.loaded})
		}
		json.NewEncoder(w).Encode(map[string]any{"models": models})
	})
	mux.HandleFunc("POST /api/chat", f.chat)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func (f *fakeOllama) chat(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.WriteHeader(400)
		io.WriteString(w, `{"error":"invalid JSON"}`)
		return
	}
	ctxLen := 2048 // Ollama's default when nothing says
	if o, ok := req["options"].(map[string]any); ok {
		if n, ok := o["num_ctx"].(float64); ok {
			ctxLen = int(n)
		}
	}
	if f.ignore > 0 {
		ctxLen = f.ignore
	}
	tokens := 0
	for _, m := range req["messages"].([]any) {
		b, _ := json.Marshal(m.(map[string]any)["content"])
		calls, _ := json.Marshal(m.(map[string]any)["tool_calls"])
		tokens += 4 + (len(b)+len(calls)+2)/3
	}
	if tools, ok := req["tools"]; ok {
		b, _ := json.Marshal(tools)
		tokens += (len(b) + 2) / 3
	}
	f.mu.Lock()
	f.chats = append(f.chats, req)
	f.counts = append(f.counts, tokens)
	if tokens > ctxLen {
		f.cut++
		tokens = ctxLen/2 + 2 // what Ollama keeps, and says
	}
	n := f.n
	f.n++
	f.mu.Unlock()
	msg := f.reply(req, n)
	final := map[string]any{"model": req["model"], "created_at": "2026-01-01T00:00:00Z", "done": true, "done_reason": "stop",
		"prompt_eval_count": tokens, "eval_count": 12, "total_duration": 1000}
	if stream, _ := req["stream"].(bool); !stream {
		final["message"] = msg
		json.NewEncoder(w).Encode(final)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	content, _ := msg["content"].(string)
	for _, piece := range strings.SplitAfter(content, " ") {
		enc.Encode(map[string]any{"model": req["model"], "message": map[string]any{"role": "assistant", "content": piece}, "done": false})
	}
	if tc, ok := msg["tool_calls"]; ok {
		enc.Encode(map[string]any{"model": req["model"], "message": map[string]any{"role": "assistant", "content": "", "tool_calls": tc}, "done": false})
	}
	final["message"] = map[string]any{"role": "assistant", "content": ""}
	enc.Encode(final)
}

func (f *fakeOllama) last() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.chats[len(f.chats)-1]
}

func numCtxOf(req map[string]any) any { return req["options"].(map[string]any)["num_ctx"] }

func text(s string) func(map[string]any, int) map[string]any {
	return func(map[string]any, int) map[string]any { return map[string]any{"role": "assistant", "content": s} }
}

// The num_ctx sent, and the window reported, come from WithNumCtx, the
// Modelfile, the loaded model, or the default, never past what the model
// was trained for.
func TestNumCtx(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		f      *fakeOllama
		opts   []ollama.Option
		want   int
		source string
	}{
		{"the Modelfile's", &fakeOllama{numCtx: "16384", loaded: 4096}, nil, 16384, "the Modelfile's num_ctx"},
		{"WithNumCtx", &fakeOllama{numCtx: "16384"}, []ollama.Option{ollama.WithNumCtx(32768)}, 32768, "num_ctx"},
		{"loaded", &fakeOllama{loaded: 32768}, nil, 32768, "the context Ollama loaded the model with"},
		{"default", &fakeOllama{}, nil, ollama.DefaultNumCtx, "ptk's default num_ctx"},
		{"trained", &fakeOllama{trained: 4096}, []ollama.Option{ollama.WithNumCtx(32768)}, 4096, "num_ctx, at most what the model was trained for"},
	}
	for _, c := range cases {
		f := c.f
		f.reply = text("ok")
		url := newFake(t, f)
		m := ollama.New(url+"/v1", c.opts...) // the OpenAI route's base works too
		w, err := llm.ContextWindowOf(ctx, m, "qwen3:8b")
		if err != nil || w.Tokens != c.want || w.Source != c.source || w.Trained != f.trained {
			t.Errorf("%s: window %+v, %v", c.name, w, err)
		}
		if _, err := m.Generate(ctx, llm.Request{Model: "qwen3:8b", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		if got := numCtxOf(f.last()); got != float64(c.want) {
			t.Errorf("%s: num_ctx sent %v, want %d", c.name, got, c.want)
		}
	}
}

// What Ollama's native API takes: tools, tool calls as objects, results
// with their tool's name, format as a JSON Schema, think, keep_alive,
// temperature, num_predict; and what it gives back: text, thinking, calls,
// counts; whole and streamed alike.
func TestChatWire(t *testing.T) {
	f := &fakeOllama{numCtx: "8192", reply: func(map[string]any, int) map[string]any {
		return map[string]any{"role": "assistant", "content": "Let me look.", "thinking": "go.mod first",
			"tool_calls": []any{map[string]any{"function": map[string]any{"name": "read_file", "arguments": map[string]any{"path": "go.mod"}}}}}
	}}
	url := newFake(t, f)
	m := ollama.New(url, ollama.WithThink("high"), ollama.WithKeepAlive("10m"))
	temp := 0.2
	req := llm.Request{Model: "qwen3:8b", Temperature: &temp, MaxTokens: 300, ResponseSchema: json.RawMessage(`{"type":"object"}`),
		Tools: []ptk.ToolInfo{{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		Messages: []ptk.Message{
			{Role: ptk.RoleSystem, Content: "Be brief."},
			{Role: ptk.RoleUser, Content: "What is this?"},
			{Role: ptk.RoleAssistant, Calls: []ptk.Call{{ID: "c1", Tool: "read_file", Args: json.RawMessage(`{"path":"main.go"}`)}, {ID: "c2", Tool: "read_file", Args: json.RawMessage(`not json`)}}},
			{Role: ptk.RoleTool, CallID: "c1", Tool: "read_file", Content: "package main"},
		}}
	whole, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := llm.Collect(m.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*llm.Response{whole, streamed} {
		if r.Content != "Let me look." || len(r.Calls) != 1 || r.Calls[0].Tool != "read_file" || string(r.Calls[0].Args) != `{"path":"go.mod"}` ||
			r.FinishReason != "tool_calls" || r.Usage.CompletionTokens != 12 || r.Usage.PromptTokens == 0 {
			t.Errorf("answer: %+v", r)
		}
	}
	if whole.Reasoning != "go.mod first" {
		t.Errorf("thinking: %q", whole.Reasoning)
	}
	sent := f.last()
	b, _ := json.Marshal(sent)
	for _, want := range []string{`"think":"high"`, `"keep_alive":"10m"`, `"format":{"type":"object"}`, `"temperature":0.2`, `"num_predict":300`,
		`"num_ctx":8192`, `"tool_name":"read_file"`, `"arguments":{"path":"main.go"}`, `"arguments":{}`, `"type":"function"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the request lacks %s:\n%s", want, b)
		}
	}
}

// A request that will not fit is warned of before it is sent; Ollama's
// silent cut is found in prompt_eval_count and is an error that says how
// to make room, whole and streamed.
func TestTruncationDetected(t *testing.T) {
	f := &fakeOllama{numCtx: "2048", reply: text("I only saw the end of it.")}
	url := newFake(t, f)
	var warned []string
	m := ollama.New(url, ollama.WithWarn(func(s string) { warned = append(warned, s) }))
	long := llm.Request{Model: "qwen3:8b", Messages: []ptk.Message{{Role: ptk.RoleSystem, Content: "You are a coding assistant with tools."},
		{Role: ptk.RoleUser, Content: strings.Repeat("Summarise this line of the log file. ", 400)}}}
	_, err := m.Generate(context.Background(), long)
	var le *llm.Error
	if !errors.As(err, &le) || !errors.Is(err, llm.ErrContextLength) || !strings.Contains(le.Message, "num_ctx=2048") ||
		!strings.Contains(le.Message, "it read 1026 tokens") || !strings.Contains(le.Message, "ptk run --context 4096") {
		t.Fatalf("err = %v", err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "context (num_ctx) is 2048") || !strings.Contains(warned[0], "OLLAMA_CONTEXT_LENGTH=4096") {
		t.Errorf("warnings: %q", warned)
	}
	_, err = llm.Collect(m.Stream(context.Background(), long))
	if !errors.Is(err, llm.ErrContextLength) {
		t.Errorf("streamed: %v", err)
	}
	// A request that fits: no warning, no error, however Ollama counts.
	warned = nil
	short := llm.Request{Model: "qwen3:8b", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: strings.Repeat("word ", 1400)}}}
	if r, err := m.Generate(context.Background(), short); err != nil || r.Content != "I only saw the end of it." || len(warned) != 0 {
		t.Errorf("a request that fits: %v, warnings %q", err, warned)
	}
}

// Errors as Ollama says them.
func TestErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		json.NewDecoder(r.Body).Decode(&req)
		switch req.Model {
		case "gemma:2b":
			w.WriteHeader(400)
			io.WriteString(w, `{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}`)
		case "missing":
			w.WriteHeader(404)
			io.WriteString(w, `{"error":"model \"missing\" not found, try pulling it first"}`)
		case "long":
			w.WriteHeader(400)
			io.WriteString(w, `{"error":"the input length exceeds the context length"}`)
		default:
			io.WriteString(w, `{"error":"an error in the middle"}`+"\n")
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	m := ollama.New(srv.URL, ollama.WithMaxRetries(0), ollama.WithNumCtx(4096))
	for model, want := range map[string]error{"gemma:2b": llm.ErrToolsUnsupported, "missing": llm.ErrModelNotFound, "long": llm.ErrContextLength, "x": llm.ErrServer} {
		if _, err := m.Generate(context.Background(), llm.Request{Model: model, Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}}); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", model, err, want)
		}
	}
	if v, err := ollama.Detect(context.Background(), srv.URL, nil); err == nil {
		t.Errorf("a server without /api/version is Ollama %q", v)
	}
}

func TestDetect(t *testing.T) {
	url := newFake(t, &fakeOllama{reply: text("ok")})
	if v, err := ollama.Detect(context.Background(), url+"/v1/", nil); err != nil || v != "0.12.6" {
		t.Errorf("Detect = %q, %v", v, err)
	}
}

// An agent on an Ollama model with a small num_ctx: every request fits,
// the conversation is compacted, Ollama never cuts a prompt.
func TestAgentOnSmallNumCtx(t *testing.T) {
	const turns = 40
	f := &fakeOllama{numCtx: "2048"}
	calls := 0
	f.reply = func(req map[string]any, n int) map[string]any {
		msgs := req["messages"].([]any)
		if first := msgs[0].(map[string]any)["content"].(string); strings.HasPrefix(first, "You write the working notes") {
			return map[string]any{"role": "assistant", "content": "Notes: files read one by one."}
		}
		calls++
		if calls >= turns {
			return map[string]any{"role": "assistant", "content": "Done."}
		}
		return map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"function": map[string]any{"name": "read_file", "arguments": map[string]any{"path": fmt.Sprintf("f%d.go", calls)}}}}}
	}
	url := newFake(t, f)
	res, err := agent.Run(context.Background(), agent.Prompt("Read the files."), agent.Options{Model: ollama.New(url), ModelName: "qwen3:8b",
		Mode: agent.ModeNative, Tools: agenttest.FileTools(600), MaxIterations: turns, MaxToolCalls: turns})
	if err != nil || res.Content != "Done." || len(res.Compactions) == 0 || res.Window.Tokens != 2048 {
		t.Fatalf("%v: %+v", err, res)
	}
	if f.cut != 0 {
		t.Errorf("Ollama cut %d prompts", f.cut)
	}
	for i, n := range f.counts {
		if n > 2048 {
			t.Errorf("request %d: %d tokens", i, n)
		}
	}
}

// An agent told a window larger than the num_ctx Ollama is sent (a wrong
// setting) sends prompts Ollama cuts; it learns the window from the error,
// compacts and goes on.
func TestAgentRecoversFromACut(t *testing.T) {
	const turns = 30
	calls := 0
	f := &fakeOllama{numCtx: "4096"}
	f.reply = func(req map[string]any, n int) map[string]any {
		msgs := req["messages"].([]any)
		if first := msgs[0].(map[string]any)["content"].(string); strings.HasPrefix(first, "You write the working notes") {
			return map[string]any{"role": "assistant", "content": "Notes: files read one by one."}
		}
		calls++
		if calls >= turns {
			return map[string]any{"role": "assistant", "content": "Done."}
		}
		return map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"function": map[string]any{"name": "read_file", "arguments": map[string]any{"path": fmt.Sprintf("f%d.go", calls)}}}}}
	}
	url := newFake(t, f)
	res, err := agent.Run(context.Background(), agent.Prompt("Read the files."), agent.Options{Model: ollama.New(url, ollama.WithWarn(func(string) {})), ModelName: "qwen3:8b",
		Mode: agent.ModeNative, Tools: agenttest.FileTools(600), MaxIterations: turns + 5, MaxToolCalls: turns, ContextWindow: 16384})
	if err != nil || res.Content != "Done." {
		t.Fatalf("%v: %+v", err, res)
	}
	if f.cut != 1 || len(res.Compactions) == 0 || res.Compactions[0].Reason != agent.CompactContextError || res.Compactions[0].Window != 4096 {
		t.Errorf("%d cut; compactions %+v", f.cut, res.Compactions)
	}
}

// A stream that breaks off, or that sends what is not JSON, is an error,
// never an answer.
func TestHostileStreams(t *testing.T) {
	for body, want := range map[string]error{
		`{"message":{"role":"assistant","content":"Hel"},"done":false}` + "\n":             llm.ErrConnection,
		`{"message":{"role":"assistant","content":"Hel"},"done":false}` + "\n<html>oops\n": llm.ErrBadResponse,
		`{"error":"model runner has unexpectedly stopped"}` + "\n":                         llm.ErrServer,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/chat" {
				io.WriteString(w, body)
				return
			}
			http.NotFound(w, r)
		}))
		m := ollama.New(srv.URL, ollama.WithMaxRetries(0), ollama.WithNumCtx(4096))
		_, err := llm.Collect(m.Stream(context.Background(), llm.Request{Model: "m", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}}))
		if !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", body, err, want)
		}
		srv.Close()
	}
}
