package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/providertest"
)

var streamTests = []providertest.Case{{
	File: "openai_text.sse",
	Want: &llm.Response{
		Content:      "The capital of France is Paris — “la Ville Lumière”.",
		Usage:        ptk.Usage{PromptTokens: 24, CompletionTokens: 16},
		FinishReason: "stop",
		Model:        "gpt-4o-mini-2024-07-18",
	},
}, {
	File: "openai_tools.sse",
	Want: &llm.Response{
		Calls: []ptk.Call{
			{ID: "call_3PqV8tYk2mHn0aZ1xQwErT5u", Tool: "get_weather", Args: json.RawMessage(`{"city": "Paris", "unit": "celsius"}`)},
			{ID: "call_Xk9bN2cV7dLq4sWe1rTy6uIo", Tool: "get_time", Args: json.RawMessage(`{"tz": "Europe/Paris"}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 312, CompletionTokens: 48, CacheReadTokens: 256},
		FinishReason: "tool_calls",
		Model:        "gpt-4o-2024-08-06",
	},
}, {
	File: "interleaved_tools.sse",
	Want: &llm.Response{
		Calls: []ptk.Call{
			{ID: "call_a1", Tool: "read_file", Args: json.RawMessage(`{"path": "go.mod"}`)},
			{ID: "call_b2", Tool: "list_dir", Args: json.RawMessage(`{"path": "llm"}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 402, CompletionTokens: 37},
		FinishReason: "tool_calls",
		Model:        "meta-llama/Llama-3.3-70B-Instruct-Turbo",
	},
}, {
	// Ollama numbers every call 0 (ollama/ollama#15457).
	File: "ollama_tools.sse",
	Want: &llm.Response{
		Reasoning: "The user wants two files read.",
		Calls: []ptk.Call{
			{ID: "call_n4bhd0o6", Tool: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)},
			{ID: "call_q8x2kd7m", Tool: "read_file", Args: json.RawMessage(`{"path":"README.md"}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 187, CompletionTokens: 61},
		FinishReason: "tool_calls",
		Model:        "qwen3:8b",
	},
}, {
	File: "vllm_reasoning_tools.sse",
	Want: &llm.Response{
		Content:      "Let me look.",
		Reasoning:    "I should check the weather.",
		Calls:        []ptk.Call{{ID: "chatcmpl-tool-4e0c2d9f1b8a4f3e", Tool: "get_weather", Args: json.RawMessage(`{"city": "Paris"}`)}},
		Usage:        ptk.Usage{PromptTokens: 221, CompletionTokens: 69},
		FinishReason: "tool_calls",
		Model:        "Qwen/Qwen3-8B",
	},
}, {
	File: "llamacpp_text.sse",
	Want: &llm.Response{
		Content:      "Bonjour !",
		Usage:        ptk.Usage{PromptTokens: 17, CompletionTokens: 3},
		FinishReason: "stop",
		Model:        "gpt-3.5-turbo",
	},
}, {
	// DeepSeek's stream with its keep-alive comments, stored with CRLF line ends.
	File: "deepseek_reasoning_crlf.sse",
	Want: &llm.Response{
		Content:      "9.9 is greater.",
		Reasoning:    "9.11 < 9.9",
		Usage:        ptk.Usage{PromptTokens: 80, CompletionTokens: 21, CacheReadTokens: 64},
		FinishReason: "stop",
		Model:        "deepseek-reasoner",
	},
}}

// TestStreamChunks checks the chunks themselves: one per tool-call
// fragment, even two in one event, the model given once.
func TestStreamChunks(t *testing.T) {
	c, _ := serve(t, sseHandler(testdata(t, "stream/interleaved_tools.sse")))
	var got []llm.Chunk
	for ch, err := range c.Stream(t.Context(), ask) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
	}
	call := func(i int, id, tool, args string) llm.Chunk {
		return llm.Chunk{Call: &llm.CallDelta{Index: i, ID: id, Tool: tool, ArgsDelta: args}}
	}
	first := call(0, "call_a1", "read_file", "")
	first.Model = "meta-llama/Llama-3.3-70B-Instruct-Turbo"
	want := []llm.Chunk{
		first,
		call(1, "call_b2", "list_dir", ""),
		call(1, "", "", `{"path":`),
		call(0, "", "", `{"path":`),
		call(0, "", "", ` "go.mod"}`),
		call(1, "", "", ` "llm"}`),
		{FinishReason: "tool_calls"},
		{Usage: &ptk.Usage{PromptTokens: 402, CompletionTokens: 37}},
	}
	// The answer arrives in one read: every chunk says the next, or the
	// end ([DONE]), is here.
	for i := range want {
		want[i].More = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestStreamCallIndex(t *testing.T) {
	// Tool calls without an index are numbered by position; a fragment
	// without an ID continues the call at its index.
	in := `data: {"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\":"}},{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`
	got, err := collectStream(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []ptk.Call{{ID: "a", Tool: "f", Args: json.RawMessage(`{"x":1}`)}, {ID: "b", Tool: "g", Args: json.RawMessage(`{}`)}}
	if diff := cmp.Diff(want, got.Calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// cut returns the first n events of a stream file.
func cut(t *testing.T, file string, n int) []byte {
	events := bytes.SplitAfter(testdata(t, "stream/"+file), []byte("\n\n"))
	return bytes.Join(events[:n], nil)
}

func TestStreamEndsWithoutDone(t *testing.T) {
	// The answer is whole (it has a finish reason) though [DONE] never came.
	c, _ := serve(t, sseHandler(cut(t, "openai_text.sse", 5)))
	got, err := llm.Collect(c.Stream(t.Context(), ask))
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != streamTests[0].Want.Content || got.FinishReason != "stop" {
		t.Errorf("got %+v", got)
	}
}
