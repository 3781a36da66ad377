package schema

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// The attack: a gateway client (or an MCP server that relists) sends tools
// whose schemas are large and each different. The cache of compiled
// schemas kept up to 1,024 of them whatever their size, so a client with
// 16 MiB bodies could make ptk serve hold 16 GiB. What the cache keeps is
// bounded in bytes, not only in entries.
func TestCacheHoldsNoLargeSchemas(t *testing.T) {
	const n, size = 100, 512 << 10
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	pad := strings.Repeat("x", size)
	for i := range n {
		raw := fmt.Sprintf(`{"type":"object","description":"%d %s","properties":{"a":{"type":"string"}}}`, i, pad)
		if _, err := Compile(json.RawMessage(raw)); err != nil {
			t.Fatal(err)
		}
	}
	pad = ""
	held := int64(heap()) - int64(before)
	t.Logf("held after %d schemas of %d KiB: %.1f MiB", n, size>>10, float64(held)/(1<<20))
	if held > 16<<20 {
		t.Errorf("the cache holds %.0f MiB after %d different schemas of %d KiB", float64(held)/(1<<20), n, size>>10)
	}
	// Small schemas are still cached: the same one compiles once.
	small := json.RawMessage(`{"type":"object","properties":{"cached":{"type":"string"}}}`)
	a, _ := Compile(small)
	b, _ := Compile(small)
	if a != b {
		t.Error("a small schema is not cached")
	}
}
