package eval

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// bfclServer is an OpenAI-compatible server that answers BFCL questions
// from their reference answers: natively (tool_calls) when the request has
// tools, else as text in one of the dialects ptk reads, chosen by the
// question. It answers the questions of wrongIDs wrongly: a call to no
// function of the question; on an irrelevance question a call, on a
// relevance one none. With
// noTools it rejects tools as Ollama does for a model without them.
type bfclServer struct {
	qs       []*Question
	wrongIDs map[string]bool
	noTools  bool
	requests atomic.Int64
}

type wireMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type wireRequest struct {
	Model    string        `json:"model"`
	Stream   bool          `json:"stream"`
	Messages []wireMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (s *bfclServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	var req wireRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.noTools && len(req.Tools) > 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error": {"message": "registry.ollama.ai/library/%s does not support tools"}}`, req.Model)
		return
	}
	q := s.find(req)
	if q == nil {
		http.Error(w, "no such question", http.StatusNotFound)
		return
	}
	native := len(req.Tools) > 0
	calls := literals(q, reference(q))
	switch {
	case strings.Contains(q.Category, "irrelevance"):
		calls = nil
		if s.wrongIDs[q.ID] {
			calls = []Call{{Name: q.Functions[0].Name, Args: &Dict{}}}
		}
	case q.Answer == nil: // live_relevance: any call is right
		calls = []Call{{Name: q.Functions[0].Name, Args: &Dict{}}}
		if s.wrongIDs[q.ID] {
			calls = nil
		}
	case s.wrongIDs[q.ID]:
		calls[0].Name = "zzq_no_such_function"
	}
	msg := map[string]any{"role": "assistant", "content": "I cannot answer this with the functions I have."}
	if native && len(calls) > 0 {
		var tcs []map[string]any
		for i, c := range calls {
			tcs = append(tcs, map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
				"function": map[string]any{"name": strings.ReplaceAll(c.Name, ".", "_"), "arguments": argsJSON(c.Args)}})
		}
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": tcs}
	} else if len(calls) > 0 {
		msg["content"] = dialects[dialectFor(q)](calls)
	}
	usage := map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
	if req.Stream {
		// Server-sent events: the text in two pieces, each call whole, then
		// the finish and the usage.
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(delta map[string]any, finish any, usage any) {
			b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}, "usage": usage})
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		if text, _ := msg["content"].(string); text != "" {
			event(map[string]any{"role": "assistant", "content": text[:len(text)/2]}, nil, nil)
			event(map[string]any{"content": text[len(text)/2:]}, nil, nil)
		}
		if tcs, ok := msg["tool_calls"].([]map[string]any); ok {
			for i, tc := range tcs {
				tc["index"] = i
				event(map[string]any{"tool_calls": []any{tc}}, nil, nil)
			}
		}
		event(map[string]any{}, "stop", usage)
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
		"usage":   usage,
	})
}

// dialectFor picks the dialect a question is answered in, by its id.
func dialectFor(q *Question) string {
	names := []string{"ptk", "hermes", "mistral", "pythonic"}
	if Language(q.Category) != "python" {
		names = names[:3]
	}
	h := fnv.New32a()
	h.Write([]byte(q.ID))
	return names[int(h.Sum32())%len(names)]
}

// find is the question a request asks: its last user message, and the
// function names it carries (as tools, or in the system prompt).
func (s *bfclServer) find(req wireRequest) *Question {
	var user, system string
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			user = m.Content
		case "system":
			system += m.Content
		}
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Function.Name)
	}
	// Questions may share a user message: the one whose functions are all
	// in the request, and the most of them, is the one asked.
	var best *Question
	for _, q := range s.qs {
		last := ""
		for _, m := range q.Messages {
			if m.Role == "user" {
				last = m.Content
			}
		}
		if last != user || len(tools) > 0 && len(tools) != len(q.Functions) {
			continue
		}
		fits := true
		for i, f := range q.Functions {
			if len(tools) > 0 {
				fits = fits && tools[i] == strings.ReplaceAll(f.Name, ".", "_")
			} else {
				fits = fits && strings.Contains(system, f.Name)
			}
		}
		if fits && (best == nil || len(q.Functions) > len(best.Functions)) {
			best = q
		}
	}
	return best
}

// answerable are the questions whose reference answer both verdicts score
// right, natively and as text: the questions a perfect model gets right.
func answerable(t *testing.T, qs []*Question) []*Question {
	var out []*Question
	for _, q := range qs {
		if q.Answer != nil {
			calls := literals(q, reference(q))
			n, x := scoreNative(t, q, calls), scoreText(t, q, dialects[dialectFor(q)](calls))
			if !n.Correct || !n.Strict.Correct || !x.Correct || !x.Strict.Correct {
				continue
			}
		}
		out = append(out, q)
	}
	return out
}
