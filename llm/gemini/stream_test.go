package gemini

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/providertest"
)

var streamTests = []providertest.Case{{
	File: "text.sse",
	Want: &llm.Response{
		Content:      "The capital of France is Paris — “la Ville Lumière”.",
		Usage:        ptk.Usage{PromptTokens: 8, CompletionTokens: 43},
		FinishReason: "STOP",
		Model:        "gemini-2.5-flash",
	},
}, {
	File: "thoughts.sse",
	Want: &llm.Response{
		Content:      "9.9 is greater.",
		Reasoning:    "**Comparing the Numbers**\n\nI compare 9.11 and 9.9 digit by digit.\n**Concluding**\n\n0.9 is more than 0.11.\n",
		Usage:        ptk.Usage{PromptTokens: 10, CompletionTokens: 101},
		FinishReason: "STOP",
		Model:        "gemini-2.5-pro",
	},
}, {
	File: "function_calls.sse",
	Want: &llm.Response{
		Content: "Let me check both.",
		Calls: []ptk.Call{
			{ID: "call_1", Tool: "get_weather", Args: json.RawMessage(`{"city":"Paris","unit":"celsius"}`)},
			{ID: "call_2", Tool: "get_time", Args: json.RawMessage(`{"tz":"Europe/Paris"}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 312, CompletionTokens: 88, CacheReadTokens: 256},
		FinishReason: "STOP",
		Model:        "gemini-2.5-flash",
	},
}, {
	File: "gemini3_calls.sse",
	Want: &llm.Response{
		Calls: []ptk.Call{
			{ID: "0k3xq7ga", Tool: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)},
			{ID: "w9f2bq1c", Tool: "list_dir", Args: json.RawMessage(`{}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 402, CompletionTokens: 41},
		FinishReason: "STOP",
		Model:        "gemini-3-flash-preview",
	},
}}

// collectStream reads an event stream as Stream does, without HTTP.
func collectStream(r io.Reader) (*llm.Response, error) {
	var c llm.Collector
	err := readStream(r, func(ch llm.Chunk) bool {
		c.Add(ch)
		return true
	})
	return c.Response(), err
}

// TestStreamChunks checks the chunks themselves: the text as it comes,
// each call whole with its index, the usage once, last.
func TestStreamChunks(t *testing.T) {
	c, _ := serve(t, sseHandler(testdata(t, "stream/function_calls.sse")))
	var got []llm.Chunk
	for ch, err := range c.Stream(t.Context(), ask) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
	}
	want := []llm.Chunk{
		{Text: "Let me check both.", Model: "gemini-2.5-flash"},
		{Call: &llm.CallDelta{Index: 0, ID: "call_1", Tool: "get_weather", ArgsDelta: `{"city":"Paris","unit":"celsius"}`}},
		{Call: &llm.CallDelta{Index: 1, ID: "call_2", Tool: "get_time", ArgsDelta: `{"tz":"Europe/Paris"}`}, FinishReason: "STOP"},
		{Usage: &ptk.Usage{PromptTokens: 312, CompletionTokens: 88, CacheReadTokens: 256}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

// cut returns the first n events of a stream file.
func cut(t *testing.T, file string, n int) []byte {
	events := bytes.SplitAfter(testdata(t, "stream/"+file), []byte("\r\n\r\n"))
	return bytes.Join(events[:n], nil)
}
