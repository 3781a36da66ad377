package distill

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk/llm/openai"
)

// TestGeneratorIgnoredResponseFormat: the distiller's own ptools against an
// OpenAI-compatible server that takes response_format and ignores it (the
// model writes prose when asked for JSON, and answers in tags when asked in
// text, as Ollama Cloud, DeepSeek and LiteLLM proxies let it): the first
// ptool switches to the protocol after one unreadable reply, and the
// second, sharing what the first learnt, asks in the protocol at once.
func TestGeneratorIgnoredResponseFormat(t *testing.T) {
	var mu sync.Mutex
	var structured, text int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body struct {
			ResponseFormat json.RawMessage `json:"response_format"`
			Messages       []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(data, &body); err != nil {
			t.Errorf("the request is not JSON: %s", data)
		}
		mu.Lock()
		var content string
		switch {
		case body.ResponseFormat != nil:
			structured++
			content = "Sure! The examples follow a simple rule, I will write it below."
		case strings.Contains(body.Messages[0].Content, "describe_patterns"):
			text++
			content = `<answer>{"patterns": [{"rule": "fine means positive", "examples": [1]}]}</answer>`
		default:
			text++
			content = "<answer>{\"code\": \"package distilled\\n\", \"test\": \"package distilled\\n\"}</answer>"
		}
		mu.Unlock()
		reply, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	}))
	defer srv.Close()
	target := Target{Name: "route", Signature: "route(text string) -> string", Doc: "Route a ticket."}
	train := []Example{{Input: json.RawMessage(`{"text":"fine"}`), Output: json.RawMessage(`"positive"`)}}
	g := newGenerator(openai.New(srv.URL, openai.WithMaxRetries(0)), target, "type In struct{}\ntype Out = string", train, 10)
	ps, err := g.patterns(t.Context())
	if err != nil || len(ps) != 1 || ps[0].Rule != "fine means positive" {
		t.Fatalf("patterns = %+v, %v", ps, err)
	}
	c, err := g.code(t.Context(), ps, "")
	if err != nil || c.Code != "package distilled\n" {
		t.Fatalf("code = %+v, %v", c, err)
	}
	if structured != 1 || text != 2 {
		t.Errorf("%d structured requests and %d in text, want 1 and 2: the code ptool did not learn from the patterns one", structured, text)
	}
}
