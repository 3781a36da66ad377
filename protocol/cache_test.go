package protocol

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
)

// cloneTestTools is testTools in slices of its own, as the next request
// would bring them.
func cloneTestTools() []ptk.ToolInfo { return cloneTools(testTools) }

func TestParserCacheSameTools(t *testing.T) {
	c := NewParserCache(0)
	p1, err := c.Parser(cloneTestTools())
	if err != nil {
		t.Fatal(err)
	}
	p2, err := c.Parser(cloneTestTools())
	if err != nil {
		t.Fatal(err)
	}
	if p1 != p2 {
		t.Error("the same tools in other slices made a second parser")
	}
	if c.Len() != 1 {
		t.Errorf("Len = %d, want 1", c.Len())
	}
	// The cached parser reads as a new one does.
	fresh, err := NewParser(testTools)
	if err != nil {
		t.Fatal(err)
	}
	const reply = "Sure.\n<PTK_CALL>\n{\"tool\": \"get_weather\", \"args\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</PTK_CALL>"
	if diff := cmp.Diff(fresh.Parse(reply), p1.Parse(reply)); diff != "" {
		t.Errorf("cached parser differs from NewParser's (-new +cached):\n%s", diff)
	}
}

// Every part of a tool is part of what finds its parser: a tool set that
// differs anywhere gets a parser of its own.
func TestParserCacheDifferentTools(t *testing.T) {
	base := cloneTestTools()
	variants := map[string]func([]ptk.ToolInfo) []ptk.ToolInfo{
		"name":        func(ts []ptk.ToolInfo) []ptk.ToolInfo { ts[1].Name = "get_weather2"; return ts },
		"description": func(ts []ptk.ToolInfo) []ptk.ToolInfo { ts[1].Description = "x"; return ts },
		"parameters": func(ts []ptk.ToolInfo) []ptk.ToolInfo {
			ts[1].Parameters = json.RawMessage(`{"type":"object"}`)
			return ts
		},
		"nil vs empty": func(ts []ptk.ToolInfo) []ptk.ToolInfo {
			ts[5].Parameters = nil
			return ts
		},
		"read-only":  func(ts []ptk.ToolInfo) []ptk.ToolInfo { ts[0].ReadOnly = true; return ts },
		"cacheable":  func(ts []ptk.ToolInfo) []ptk.ToolInfo { ts[0].Cacheable = true; return ts },
		"fewer":      func(ts []ptk.ToolInfo) []ptk.ToolInfo { return ts[:5] },
		"order":      func(ts []ptk.ToolInfo) []ptk.ToolInfo { ts[0], ts[1] = ts[1], ts[0]; return ts },
		"none":       func(ts []ptk.ToolInfo) []ptk.ToolInfo { return nil },
		"parts move": func(ts []ptk.ToolInfo) []ptk.ToolInfo { ts[0].Name, ts[0].Description = "read_", "file"; return ts },
	}
	c := NewParserCache(0)
	p0, err := c.Parser(base)
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range variants {
		p, err := c.Parser(change(cloneTestTools()))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p == p0 {
			t.Errorf("%s: a changed tool set got the first set's parser", name)
		}
	}
	if p, _ := c.Parser(base); p != p0 {
		t.Error("the first tool set lost its parser")
	}
}

// The attack: a caller (the gateway, its request buffers) changes the
// bytes of the tools after the parser was made. The cache keeps its own
// copy, so the next request with the old tools still gets their parser,
// and a request with the new bytes does not.
func TestParserCacheOwnsItsTools(t *testing.T) {
	c := NewParserCache(0)
	tools := cloneTestTools()
	p1, err := c.Parser(tools)
	if err != nil {
		t.Fatal(err)
	}
	params := tools[1].Parameters
	for i := range params {
		params[i] = ' '
	}
	copy(params, `{"type":"object","properties":{"town":{"type":"string"}}}`)
	tools[1].Name = "other"
	p2, err := c.Parser(tools)
	if err != nil {
		t.Fatal(err)
	}
	if p2 == p1 {
		t.Fatal("tools changed in place got the parser of the old ones")
	}
	p3, err := c.Parser(cloneTestTools())
	if err != nil {
		t.Fatal(err)
	}
	if p3 != p1 {
		t.Error("the old tools lost their parser when the caller changed its copy")
	}
	if a := p1.Parse("<PTK_CALL>{\"tool\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}</PTK_CALL>").Attempts; len(a) != 1 || a[0].Err != nil {
		t.Errorf("the cached parser changed with the caller's bytes: %+v", a)
	}
}

func TestParserCacheErrorsNotKept(t *testing.T) {
	c := NewParserCache(0)
	bad := []ptk.ToolInfo{{Name: "a", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "a"}}
	_, want := NewParser(bad)
	for range 2 {
		p, err := c.Parser(bad)
		if p != nil || err == nil || err.Error() != want.Error() {
			t.Fatalf("Parser = %v, %v; want NewParser's error %v", p, err, want)
		}
	}
	if c.Len() != 0 {
		t.Errorf("Len = %d after errors, want 0", c.Len())
	}
}

// The attack: clients send a new tool set with every request, or one huge
// one. The cache stays within its budget, and still answers.
func TestParserCacheBounded(t *testing.T) {
	const budget = 64 << 10
	c := NewParserCache(budget)
	for i := range 2000 {
		tools := []ptk.ToolInfo{{Name: fmt.Sprintf("tool_%d", i), Description: "a tool among many", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)}}
		if _, err := c.Parser(tools); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	size, n, order := c.size, len(c.m), len(c.order)
	c.mu.Unlock()
	if size > budget || n != order || n == 0 || n >= 2000 {
		t.Errorf("after 2000 tool sets: %d bytes (budget %d), %d parsers, %d in order", size, budget, n, order)
	}
	huge := []ptk.ToolInfo{{Name: "huge", Description: string(make([]byte, budget/4)), Parameters: json.RawMessage(`{"type":"object"}`)}}
	p, err := c.Parser(huge)
	if err != nil || p == nil {
		t.Fatalf("a huge tool set: %v, %v", p, err)
	}
	if p2, _ := c.Parser(huge); p2 == p {
		t.Error("a tool set over a quarter of the budget was kept")
	}
}

func TestParserCacheConcurrent(t *testing.T) {
	c := NewParserCache(0)
	sets := make([][]ptk.ToolInfo, 4)
	for i := range sets {
		sets[i] = cloneTestTools()[:i+2]
	}
	var wg sync.WaitGroup
	got := make([][]*Parser, 8)
	for g := range got {
		wg.Go(func() {
			for i := range 200 {
				p, err := c.Parser(cloneTools(sets[i%len(sets)]))
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], p)
				if n := len(p.Parse("<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"a\"}}</PTK_CALL>").Attempts); n != 1 {
					t.Errorf("%d calls, want 1", n)
				}
			}
		})
	}
	wg.Wait()
	if c.Len() != len(sets) {
		t.Errorf("Len = %d, want %d", c.Len(), len(sets))
	}
	// Once every set is kept, each has one parser.
	for i, s := range sets {
		p, _ := c.Parser(s)
		if q, _ := c.Parser(slices.Clone(s)); p != q {
			t.Errorf("set %d has two parsers", i)
		}
	}
}

// BenchmarkParserCache is what a request with the same tools as the last
// costs: NewParser compiles their schemas; the cache hashes and compares
// them.
func BenchmarkParserCache(b *testing.B) {
	b.Run("NewParser", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := NewParser(testTools); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		c := NewParserCache(0)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Parser(testTools); err != nil {
				b.Fatal(err)
			}
		}
	})
}
