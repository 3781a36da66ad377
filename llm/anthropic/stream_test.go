package anthropic

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
		Usage:        ptk.Usage{PromptTokens: 1860, CompletionTokens: 17, CacheReadTokens: 1846},
		FinishReason: "end_turn",
		Model:        "claude-sonnet-4-5-20250929",
	},
}, {
	// A text block, then two tool_use blocks, the second without any
	// input_json_delta.
	File: "tools.sse",
	Want: &llm.Response{
		Content: "Okay, let's check the weather and the time in San Francisco, CA:",
		Calls: []ptk.Call{
			{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Tool: "get_weather", Args: json.RawMessage(`{"location": "San Francisco, CA", "unit": "fahrenheit"}`)},
			{ID: "toolu_01CeGs4vK5U7fTSq3rbn9Wvx", Tool: "get_time", Args: json.RawMessage(`{}`)},
		},
		Usage:        ptk.Usage{PromptTokens: 2008, CompletionTokens: 89, CacheWriteTokens: 1536},
		FinishReason: "tool_use",
		Model:        "claude-sonnet-4-5-20250929",
	},
}, {
	// Extended thinking with its signature_delta; the message_delta repeats
	// the input counts, as the API does since 2025.
	File: "thinking.sse",
	Want: &llm.Response{
		Content:      "27 * 453 = 12,231",
		Reasoning:    "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3",
		Usage:        ptk.Usage{PromptTokens: 14017, CompletionTokens: 131, CacheReadTokens: 13993, CacheWriteTokens: 22},
		FinishReason: "end_turn",
		Model:        "claude-sonnet-4-20250514",
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

// TestStreamChunks checks the chunks themselves: the model first, one per
// text or argument fragment, a call's first chunk with its ID and tool,
// calls numbered among the tool_use blocks, the usage and stop reason last.
func TestStreamChunks(t *testing.T) {
	c, _ := serve(t, sseHandler(testdata(t, "stream/tools.sse")))
	var got []llm.Chunk
	for ch, err := range c.Stream(t.Context(), ask) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
	}
	text := func(s string) llm.Chunk { return llm.Chunk{Text: s} }
	call := func(i int, id, tool, args string) llm.Chunk {
		return llm.Chunk{Call: &llm.CallDelta{Index: i, ID: id, Tool: tool, ArgsDelta: args}}
	}
	want := []llm.Chunk{
		{Model: "claude-sonnet-4-5-20250929"},
		text("Okay"), text(","), text(" let"), text("'s"), text(" check"), text(" the"), text(" weather and the time in San Francisco, CA:"),
		call(0, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", ""),
		call(0, "", "", `{"location":`),
		call(0, "", "", ` "San`),
		call(0, "", "", ` Francisc`),
		call(0, "", "", `o,`),
		call(0, "", "", ` CA"`),
		call(0, "", "", `, `),
		call(0, "", "", `"unit": "fah`),
		call(0, "", "", `renheit"}`),
		call(1, "toolu_01CeGs4vK5U7fTSq3rbn9Wvx", "get_time", ""),
		{Usage: &ptk.Usage{PromptTokens: 2008, CompletionTokens: 89, CacheWriteTokens: 1536}, FinishReason: "tool_use"},
	}
	// The answer arrives in one read: every chunk but the last (made by
	// message_stop, the last event) says the next is here.
	for i := range len(want) - 1 {
		want[i].More = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

// cut returns the first n events of a stream file.
func cut(t *testing.T, file string, n int) []byte {
	events := bytes.SplitAfter(testdata(t, "stream/"+file), []byte("\n\n"))
	return bytes.Join(events[:n], nil)
}

const overloadedEvent = "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"

func TestStreamEndsWithoutMessageStop(t *testing.T) {
	// The answer is whole (it has a stop reason) though message_stop never
	// came.
	events := bytes.Count(testdata(t, "stream/tools.sse"), []byte("\n\n"))
	c, _ := serve(t, sseHandler(cut(t, "tools.sse", events-1)))
	got, err := llm.Collect(c.Stream(t.Context(), ask))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(streamTests[1].Want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}
