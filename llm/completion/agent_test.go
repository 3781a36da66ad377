package completion

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
)

// llamaServer is a fake llama.cpp server whose model writes replies in
// order, whole or streamed as the request asks, and that records the
// prompts it reads.
type llamaServer struct {
	replies []string
	mu      sync.Mutex
	prompts []string
}

func (s *llamaServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prompt string
		Stream bool
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"code":400,"message":"bad JSON","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.prompts = append(s.prompts, req.Prompt)
	text := s.replies[min(len(s.prompts), len(s.replies))-1]
	s.mu.Unlock()
	final := map[string]any{"content": text, "stop": true, "model": "qwen2.5-7b-instruct-q4_k_m.gguf", "stop_type": "eos",
		"tokens_evaluated": len(req.Prompt) / 4, "tokens_predicted": len(text) / 4}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(final)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for len(text) > 0 {
		n := min(len(text), 7)
		b, _ := json.Marshal(map[string]any{"content": text[:n], "stop": false})
		io.WriteString(w, "data: "+string(b)+"\n\n")
		w.(http.Flusher).Flush()
		text = text[n:]
	}
	final["content"] = ""
	b, _ := json.Marshal(final)
	io.WriteString(w, "data: "+string(b)+"\n\n")
}

// TestAgent runs an agent in auto mode over llama.cpp's /completion: the
// model writes a PTK call, then the answer.
func TestAgent(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "whole"
		if stream {
			name = "streamed"
		}
		t.Run(name, func(t *testing.T) {
			srv := &llamaServer{replies: []string{
				"Let me check.\n<PTK_CALL>\n{\"tool\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}\n</PTK_CALL>",
				"It is sunny in Paris, 18°C.",
			}}
			url, _ := serve(t, "POST /completion", srv.ServeHTTP)
			var cities []string
			weather := ptk.NewTool(ptk.ToolInfo{
				Name:        "get_weather",
				Description: "Current weather for a city.",
				Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
				ReadOnly:    true,
			}, func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
				var a struct{ City string }
				if err := json.Unmarshal(args, &a); err != nil {
					return ptk.Result{}, err
				}
				cities = append(cities, a.City)
				return ptk.Result{Content: a.City + ": 18°C, sunny"}, nil
			})
			var (
				res      *agent.Result
				err      error
				switched bool
			)
			opts := agent.Options{Model: LlamaCpp(url), Mode: agent.ModeAuto, Tools: []ptk.Tool{weather}, Instructions: "Be brief.", StreamModel: stream}
			for e, eerr := range agent.Stream(t.Context(), agent.Prompt("Weather in Paris?"), opts) {
				switched = switched || e.Kind == agent.EventModeSwitch
				if e.Kind == agent.EventDone {
					res, err = e.Run, eerr
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("mode %s; switched from native after ErrToolsUnsupported: %v", res.Mode, switched)
			if !res.Success || res.Content != "It is sunny in Paris, 18°C." || len(cities) != 1 || cities[0] != "Paris" {
				t.Fatalf("result %+v, tool ran for %q", res, cities)
			}
			if res.Mode != agent.ModePTK {
				t.Errorf("mode = %s, want ptk", res.Mode)
			}
			if len(srv.prompts) != 2 {
				t.Fatalf("%d prompts, want 2", len(srv.prompts))
			}
			first, second := srv.prompts[0], srv.prompts[1]
			if !strings.HasPrefix(first, "SYSTEM:\nBe brief.") || !strings.Contains(first, "## get_weather") ||
				!strings.HasSuffix(first, "\n\nUSER:\nWeather in Paris?\n\nASSISTANT:\n") {
				t.Errorf("first prompt:\n%s", first)
			}
			// The second prompt extends the first (llama.cpp reuses its cache),
			// with the call and its result.
			if !strings.HasPrefix(second, first) || !strings.Contains(second, "</PTK_CALL>\n\nUSER:\n<PTK_RESULT") ||
				!strings.Contains(second, "Paris: 18°C, sunny\n</PTK_RESULT>\n\nASSISTANT:\n") {
				t.Errorf("second prompt:\n%s", second)
			}
		})
	}
}
