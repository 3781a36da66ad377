package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/protocol"
)

// TestPromptCache: a kept prompt is the one the protocol writes for the
// same instructions and tools; any difference in them is another prompt;
// the cache keeps no more than its bound.
func TestPromptCache(t *testing.T) {
	c := &promptCache{maxBytes: 64 << 10}
	f := cachedPTK{cache: c}
	tools := []ptk.ToolInfo{{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	for range 2 {
		if got, want := f.SystemPrompt("Be brief.", tools), (protocol.PTK{}).SystemPrompt("Be brief.", tools); got != want {
			t.Fatalf("cached prompt differs from the protocol's:\n%s\n---\n%s", got, want)
		}
	}
	if len(c.m) != 1 {
		t.Errorf("%d prompts kept after two asks of one, want 1", len(c.m))
	}
	other := []ptk.ToolInfo{{Name: "read", Description: "Read a file!", Parameters: tools[0].Parameters}}
	if f.SystemPrompt("Be brief.", other) == f.SystemPrompt("Be brief.", tools) {
		t.Error("another description gives the same prompt")
	}
	// Parts cannot run into each other: the instructions "a1:b" and a tool
	// named "b" are not the instructions "a" and a tool named "1:bb".
	if promptKey("a1:b", []ptk.ToolInfo{{Name: "b"}}) == promptKey("a", []ptk.ToolInfo{{Name: "1:bb"}}) {
		t.Error("two different requests share a key")
	}
	for i := range 200 {
		f.SystemPrompt(strings.Repeat("x", i), tools)
	}
	if c.size > c.maxBytes || len(c.m) != len(c.order) {
		t.Errorf("%d bytes kept over a bound of %d (%d prompts, %d in order)", c.size, c.maxBytes, len(c.m), len(c.order))
	}
}

// A request whose prompt is kept allocates nothing to find it.
func TestPromptCacheHitAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers at random")
	}
	c := &promptCache{maxBytes: 64 << 10}
	tools := []ptk.ToolInfo{{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	write := (protocol.PTK{}).SystemPrompt
	c.get("Be brief.", tools, write)
	if n := testing.AllocsPerRun(100, func() { c.get("Be brief.", tools, write) }); n > 0 {
		t.Errorf("a kept prompt costs %.0f allocations to find, want 0", n)
	}
}
