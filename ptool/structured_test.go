package ptool_test

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

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic"
	"github.com/ptkit/ptk/llm/catalog"
	"github.com/ptkit/ptk/llm/gemini"
	"github.com/ptkit/ptk/llm/openai"
	"github.com/ptkit/ptk/ptool"
)

// server is an httptest server that answers each request with the next of
// replies, written by reply from the request's body, and keeps the bodies.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newServer(t *testing.T, reply func(n int, body map[string]any) (int, string)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Errorf("the request is not JSON: %s", data)
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		n := len(s.bodies)
		s.mu.Unlock()
		status, text := reply(n, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, text)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) body(i int) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

// get walks a decoded JSON body by keys and indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func openaiReply(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220},
	})
	return string(b)
}

func TestStructuredOpenAI(t *testing.T) {
	srv := newServer(t, func(n int, _ map[string]any) (int, string) {
		if n == 1 {
			return 200, openaiReply(`{"answer": {"sentiment": "happy", "confidence": 0.9}}`)
		}
		return 200, openaiReply(`{"answer": {"sentiment": "positive", "confidence": 0.9}}`)
	})
	m := llm.Priced(openai.New(srv.URL, openai.WithMaxRetries(0)), llm.Price{Input: 0.15, Output: 0.6})
	p := classifier(m)
	got, rec, err := p.CallRecord(context.Background(), review{Text: "I love it"})
	if err != nil || got.Sentiment != "positive" {
		t.Fatalf("Call = %+v, %v", got, err)
	}
	body := srv.body(0)
	if get(body, "response_format", "type") != "json_schema" || get(body, "response_format", "json_schema", "name") != "classify_sentiment" ||
		get(body, "response_format", "json_schema", "schema", "properties", "answer", "properties", "sentiment", "enum", 2) != "neutral" {
		t.Errorf("response_format = %v", body["response_format"])
	}
	golden(t, "classify_json.golden", get(body, "messages", 0, "content").(string))
	retry := srv.body(1)
	if fb, _ := get(retry, "messages", 3, "content").(string); !strings.Contains(fb, "/sentiment") {
		t.Errorf("the retry does not say what was wrong: %v", retry["messages"])
	}
	if rec.Mode != ptool.ModeStructured || len(rec.Attempts) != 2 || rec.Usage.PromptTokens != 400 || rec.Model != "gpt-4o-mini" {
		t.Errorf("record = %+v", rec)
	}
	if want := 2 * (200*0.15 + 20*0.6) / 1e6; rec.Cost < want*0.999 || rec.Cost > want*1.001 {
		t.Errorf("cost = %v, want %v", rec.Cost, want)
	}
}

// TestStructuredReasoning: a reasoning model's structured answer after its
// thinking, in a fence, still reads.
func TestStructuredReasoning(t *testing.T) {
	srv := newServer(t, func(int, map[string]any) (int, string) {
		return 200, openaiReply("<think>The user loves it.</think>\n```json\n{\"answer\": {\"sentiment\": \"positive\", \"confidence\": 1}}\n```")
	})
	got, rec, err := classifier(openai.New(srv.URL, openai.WithMaxRetries(0))).CallRecord(context.Background(), review{Text: "love"})
	if err != nil || got != (sentiment{"positive", 1}) || rec.Attempts[0].Repairs[0] != "read from a code fence" {
		t.Errorf("Call = %+v, %v, %+v", got, err, rec)
	}
}

func TestStructuredAbstain(t *testing.T) {
	srv := newServer(t, func(int, map[string]any) (int, string) {
		return 200, openaiReply(`{"cannot_answer": "no review given"}`)
	})
	p := classifier(openai.New(srv.URL, openai.WithMaxRetries(0)))
	_, err := p.Call(context.Background(), review{})
	var ae *ptool.AbstainedError
	if !errors.As(err, &ae) || ae.Reason != "no review given" {
		t.Errorf("err = %v", err)
	}
}

func TestStructuredAnthropic(t *testing.T) {
	srv := newServer(t, func(n int, _ map[string]any) (int, string) {
		input := `{"answer": {"sentiment": "negative", "confidence": 0.8}}`
		if n == 1 {
			input = `{"answer": {"sentiment": "bad", "confidence": 0.8}}`
		}
		return 200, `{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": [{"type": "tool_use", "id": "toolu_` + string(rune('0'+n)) + `", "name": "answer", "input": ` + input + `}],
			"stop_reason": "tool_use", "usage": {"input_tokens": 300, "output_tokens": 30}}`
	})
	p := classifier(catalog.Named(anthropic.New(srv.URL, anthropic.WithMaxRetries(0)), "claude-sonnet-4-5"))
	got, rec, err := p.CallRecord(context.Background(), review{Text: "meh, broke"})
	if err != nil || got != (sentiment{"negative", 0.8}) {
		t.Fatalf("Call = %+v, %v", got, err)
	}
	body := srv.body(0)
	if get(body, "tool_choice", "type") != "tool" || get(body, "tool_choice", "name") != "answer" ||
		get(body, "tools", 0, "input_schema", "properties", "answer", "required", 0) != "sentiment" {
		t.Errorf("tools = %v, tool_choice = %v", body["tools"], body["tool_choice"])
	}
	golden(t, "classify_tool.golden", body["system"].(string))
	// the retry answers the forced call with an error result that says what was wrong
	res := get(srv.body(1), "messages", 2, "content", 0)
	if get(res, "type") != "tool_result" || get(res, "tool_use_id") != "toolu_1" || get(res, "is_error") != true ||
		!strings.Contains(fmt.Sprint(get(res, "content")), "/sentiment") {
		t.Errorf("the retry's tool result = %v", res)
	}
	if rec.Mode != ptool.ModeStructured || len(rec.Attempts) != 2 || rec.Attempts[1].Raw != `{"answer": {"sentiment": "negative", "confidence": 0.8}}` {
		t.Errorf("record = %+v", rec)
	}
}

func TestStructuredGemini(t *testing.T) {
	srv := newServer(t, func(n int, _ map[string]any) (int, string) {
		text := `{"answer": {"sentiment": "positive"}}` // confidence missing: asked again
		if n > 1 {
			text = `{"answer": {"sentiment": "positive", "confidence": 1}}`
		}
		b, _ := json.Marshal(text)
		return 200, `{"candidates": [{"content": {"role": "model", "parts": [{"text": ` + string(b) + `}]},
			"finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10}}`
	})
	p := classifier(catalog.Named(gemini.New(srv.URL, gemini.WithMaxRetries(0)), "gemini-2.5-flash"))
	got, rec, err := p.CallRecord(context.Background(), review{Text: "great"})
	if err != nil || got != (sentiment{"positive", 1}) {
		t.Fatalf("Call = %+v, %v", got, err)
	}
	body := srv.body(0)
	if get(body, "generationConfig", "responseMimeType") != "application/json" ||
		get(body, "generationConfig", "responseJsonSchema", "properties", "answer", "required", 1) != "confidence" || body["tools"] != nil {
		t.Errorf("generationConfig = %v, tools = %v", body["generationConfig"], body["tools"])
	}
	retry, _ := json.Marshal(srv.body(1)["contents"])
	if !strings.Contains(string(retry), "confidence") {
		t.Errorf("retry contents = %s", retry)
	}
	if rec.Mode != ptool.ModeStructured || len(rec.Attempts) != 2 || len(rec.Attempts[0].Problems) != 1 || rec.Usage.PromptTokens != 200 {
		t.Errorf("record = %+v", rec)
	}
}

// TestAutoFallsBack: a server that refuses response_format is asked in
// text, and not asked for structured output again.
func TestAutoFallsBack(t *testing.T) {
	srv := newServer(t, func(_ int, body map[string]any) (int, string) {
		if body["response_format"] != nil {
			return 400, `{"error": {"message": "response_format is not supported", "type": "invalid_request_error"}}`
		}
		return 200, openaiReply(`<answer>{"sentiment": "neutral", "confidence": 0.5}</answer>`)
	})
	mem := &llm.NativeTools{}
	p := classifier(openai.New(srv.URL, openai.WithMaxRetries(0)), ptool.WithMemory(mem))
	for i := range 2 {
		got, rec, err := p.CallRecord(context.Background(), review{Text: "ok"})
		if err != nil || got.Sentiment != "neutral" || rec.Mode != ptool.ModeProtocol || len(rec.Attempts) != 1 {
			t.Fatalf("call %d = %+v, %+v, %v", i+1, got, rec, err)
		}
	}
	if len(srv.bodies) != 3 {
		t.Errorf("%d requests, want 3 (refused, text, text)", len(srv.bodies))
	}
	// a request refused in text too was not refused for its structured
	// output: the model is not remembered as refusing it
	bad := newServer(t, func(int, map[string]any) (int, string) {
		return 400, `{"error": {"message": "context length exceeded", "type": "invalid_request_error"}}`
	})
	mem = &llm.NativeTools{}
	bm := openai.New(bad.URL, openai.WithMaxRetries(0))
	if _, err := classifier(bm, ptool.WithMemory(mem)).Call(context.Background(), review{Text: "ok"}); !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("err = %v", err)
	}
	if len(bad.bodies) != 2 || mem.Rejected(bm, "ptool:structured") {
		t.Errorf("%d requests; remembered as refusing: %v", len(bad.bodies), mem.Rejected(bm, "ptool:structured"))
	}
	// structured mode, asked for, does not fall back
	q := classifier(openai.New(srv.URL, openai.WithMaxRetries(0)), ptool.WithMode(ptool.ModeStructured))
	if _, err := q.Call(context.Background(), review{Text: "ok"}); !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("structured mode: err = %v", err)
	}
}

// noTools is a model that says it takes no native tools.
type noTools struct{ llm.Model }

func (noTools) SupportsNativeTools() bool { return false }
func (n noTools) Unwrap() llm.Model       { return n.Model }

// TestAutoNoNativeTools: a model that says it takes no native tools (the
// catalog's "ptk" models) is asked in text from its first call.
func TestAutoNoNativeTools(t *testing.T) {
	srv := newServer(t, func(int, map[string]any) (int, string) {
		return 200, openaiReply(`<answer>{"sentiment": "neutral", "confidence": 0.5}</answer>`)
	})
	p := classifier(noTools{openai.New(srv.URL, openai.WithMaxRetries(0))})
	if _, rec, err := p.CallRecord(context.Background(), review{Text: "ok"}); err != nil || rec.Mode != ptool.ModeProtocol || srv.body(0)["response_format"] != nil {
		t.Errorf("err %v, record %+v", err, rec)
	}
}
