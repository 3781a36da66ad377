package wire_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm/anthropic/wire"
	"github.com/ptkit/ptk/llm/internal/jsoncache"
)

// requestOf builds a request from a fuzzer's values, its blocks those of
// valuesOf's response, the optional fields there or not by a bit of shape.
func requestOf(shape uint32, s1, s2, raw string, n int64) *wire.Request {
	bit := func(i uint) bool { return shape&(1<<i) != 0 }
	blocks := valuesOf(shape, s1, s2, raw, n)[0].(*wire.Response).Content
	r := &wire.Request{Model: s1, MaxTokens: int(uint64(n) % 100000), Messages: []wire.Message{{Role: "user", Content: wire.Content{Text: s2}}}}
	if blocks != nil {
		r.Messages = append(r.Messages, wire.Message{Role: "assistant", Content: wire.BlockContent(blocks...)})
	}
	if bit(22) {
		r.Messages = nil
	}
	if bit(23) {
		r.System = wire.TextContent(s1)
	} else if bit(24) {
		c := wire.BlockContent(wire.Block{Type: "text", Text: s2, CacheControl: json.RawMessage(`{"type":"ephemeral"}`)})
		r.System = &c
	}
	if bit(25) {
		r.Tools = []wire.Tool{{Name: s1, Description: s2, InputSchema: json.RawMessage(raw)}, {Type: "web_search_20250305", Name: "web_search"},
			{Type: "custom", Name: s2, InputSchema: json.RawMessage(`{"type": "object"}`), DeferLoading: true, CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}}
	}
	if bit(26) {
		r.ToolChoice = &wire.ToolChoice{Type: "tool", Name: s2, DisableParallelToolUse: bit(27)}
	}
	if bit(28) {
		temp, topK := float64(n)/7, int(n%50)
		r.Temperature, r.TopP, r.TopK = &temp, &temp, &topK
	}
	if bit(29) {
		r.StopSequences = []string{s1, s2}
		r.Metadata = json.RawMessage(raw)
	}
	r.Stream = bit(30)
	if bit(31) {
		r.Thinking = &wire.Thinking{Type: "enabled", BudgetTokens: int(n % 5000), Display: s2}
	}
	return r
}

// requestCache is shared by every request checked, as a client's is by its
// calls; small, so that it also forgets.
var requestCache = jsoncache.New(256 << 10)

// checkRequestJSON checks that r.AppendJSON writes r as encoding/json does,
// and AppendJSONCached as AppendJSON, three times over (nothing kept, kept,
// taken from the cache).
func checkRequestJSON(t *testing.T, r *wire.Request) {
	t.Helper()
	checkAppend(t, r)
	for _, html := range []bool{true, false} {
		want, wok := r.AppendJSON([]byte("x"), html)
		for i := range 3 {
			if got, ok := r.AppendJSONCached([]byte("x"), html, requestCache); ok != wok || !bytes.Equal(got, want) {
				t.Fatalf("AppendJSONCached(%v), call %d: %v\n%s\nAppendJSON: %v\n%s", html, i+1, ok, got, wok, want)
			}
		}
	}
}

// padded makes the strings long enough for a cache to keep them, and raw
// the same JSON (valid or not) with spaces after.
func padded(s1, s2, raw string) (string, string, string) {
	pad := strings.Repeat(" <&>", jsoncache.MinLen/4)
	return s1 + pad, pad + s2, raw + strings.Repeat(" ", jsoncache.MinLen)
}

// TestRequestAppendJSON: requests in every shape are written as
// encoding/json writes them, through a cache or not; a request it refuses
// (a schema that is not JSON, a NaN temperature) is refused.
func TestRequestAppendJSON(t *testing.T) {
	for _, s := range encodeSeeds {
		for i := range uint32(512) {
			shape := i * 2654435761
			checkRequestJSON(t, requestOf(shape, s.s1, s.s2, s.raw, int64(i)))
			s1, s2, raw := padded(s.s1, s.s2, s.raw)
			checkRequestJSON(t, requestOf(shape, s1, s2, raw, int64(i)))
		}
	}
}

func FuzzRequestAppendJSON(f *testing.F) {
	for i, s := range encodeSeeds {
		f.Add(uint32(i*2654435761), s.s1, s.s2, s.raw, int64(i*7))
	}
	f.Fuzz(func(t *testing.T, shape uint32, s1, s2, raw string, n int64) {
		checkRequestJSON(t, requestOf(shape, s1, s2, raw, n))
		s1, s2, raw = padded(s1, s2, raw)
		checkRequestJSON(t, requestOf(shape, s1, s2, raw, n))
	})
}
