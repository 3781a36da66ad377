package llm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// TestEstimateTokens compares the estimate with the counts of OpenAI's
// cl100k_base tokenizer (measured with github.com/tiktoken-go/tokenizer
// v0.10.0, outside the module): within 30% on prose, code, JSON, CJK,
// accented words and numbers.
func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		text   string
		cl100k int
	}{
		{"The quick brown fox jumps over the lazy dog, and then it runs back home to sleep.", 19},
		{"func (h *History) Tokens() int {\n\tfor ; h.counted < len(h.out); h.counted++ {\n\t\tn := llm.EstimateMessage(h.out[h.counted])\n\t}\n\treturn h.total\n}\n", 46},
		{`{"tool": "read_file", "args": {"path": "cmd/ptk/main.go", "offset": 120, "limit": 50}}`, 33},
		{"上下文窗口是模型一次能读的词元数量。", 19},
		{"Größenänderung der Übersetzungstabelle für äußerst schöne Wörter.", 22},
		{"2026-01-31T12:34:56Z 1234567890 3.14159", 23},
	}
	for _, tt := range tests {
		got := llm.EstimateTokens(tt.text)
		if r := float64(got) / float64(tt.cl100k); r < 0.7 || r > 1.3 {
			t.Errorf("EstimateTokens(%q) = %d, cl100k counts %d (ratio %.2f)", tt.text, got, tt.cl100k, r)
		}
	}
	if llm.EstimateTokens("") != 0 {
		t.Error("the empty text has tokens")
	}
	// Hostile text: invalid UTF-8, NULs, a long run of one byte: no panic,
	// and a count that grows with the text.
	for _, s := range []string{"\xff\xfe\x00abc\xc3", strings.Repeat("=", 10000), strings.Repeat("\x00", 100), strings.Repeat("a", 1<<16)} {
		if n := llm.EstimateTokens(s); n <= 0 || n > len(s) {
			t.Errorf("EstimateTokens of %d bytes = %d", len(s), n)
		}
	}
}

func TestEstimateRequest(t *testing.T) {
	tools := []ptk.ToolInfo{{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	msgs := []ptk.Message{
		{Role: ptk.RoleSystem, Content: "Be brief."},
		{Role: ptk.RoleUser, Content: "Read go.mod."},
		{Role: ptk.RoleAssistant, Calls: []ptk.Call{{ID: "c1", Tool: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)}}},
	}
	req := llm.Request{Messages: msgs, Tools: tools}
	want := 3 + llm.EstimateTools(tools)
	for _, m := range msgs {
		want += llm.EstimateMessage(m)
	}
	if got := llm.EstimateRequest(req); got != want || llm.EstimateTools(tools) <= llm.ToolOverhead {
		t.Errorf("EstimateRequest = %d, want %d", got, want)
	}
	if got := llm.EstimateRequest(llm.Request{Prompt: "Hello there", Messages: msgs}); got != llm.EstimateTokens("Hello there") {
		t.Errorf("a flattened prompt counts alone: %d", got)
	}
	// An assistant turn the model wrote counts as written.
	if a, b := llm.EstimateMessage(ptk.Message{Content: "x", Raw: "<think>a long thought here</think>x"}), llm.EstimateMessage(ptk.Message{Content: "x"}); a <= b {
		t.Errorf("Raw not counted: %d <= %d", a, b)
	}
}

func BenchmarkEstimateTokens(b *testing.B) {
	text := strings.Repeat("func (h *History) Tokens() int { return h.total } // the sum of the counts\n", 700) // ~50 KB
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		llm.EstimateTokens(text)
	}
}
