package jsoncache

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk/internal/jsonfast"
)

// long makes s at least MinLen bytes, so that a Cache keeps it.
func long(s string) string { return s + strings.Repeat(" <&> \"x\"\n\u2028é", MinLen/8) }

// Whatever a Cache holds, it writes what jsonfast writes: the first time,
// the second (when it keeps the value), and after, with and without HTML
// escaped, strings and raw values kept apart.
func TestCacheWritesAsJSONFast(t *testing.T) {
	c := New(1 << 20)
	strs := []string{"", "short", long("prompt"), long("\xff invalid UTF-8"), long("other")}
	raws := []string{`{"a":1}`, `{"type": "object", "x": "` + long("<b>") + `"}`, `[1, 2` + strings.Repeat(" ", MinLen), long(`"`) + `"`}
	for round := range 3 {
		for _, html := range []bool{false, true} {
			for _, s := range strs {
				want := jsonfast.AppendString([]byte("pre"), s, html)
				if got := c.String([]byte("pre"), s, html); !bytes.Equal(got, want) {
					t.Errorf("round %d, html %v: String(%.20q) = %.40q, want %.40q", round, html, s, got, want)
				}
			}
			for _, r := range raws {
				want, wok := jsonfast.AppendCompact([]byte("pre"), []byte(r), html)
				got, ok := c.Compact([]byte("pre"), []byte(r), html)
				if ok != wok || !bytes.Equal(got, want) {
					t.Errorf("round %d, html %v: Compact(%.20q) = %.40q, %v, want %.40q, %v", round, html, r, got, ok, want, wok)
				}
			}
		}
	}
	if c.size == 0 {
		t.Error("the cache kept nothing it saw three times")
	}
}

// A value is kept the second time it is seen, not the first.
func TestCacheKeepsSecondSight(t *testing.T) {
	c := New(1 << 20)
	s := long("system prompt")
	c.String(nil, s, true)
	if _, ok := c.vals[kindString+1][s]; ok {
		t.Fatal("kept after one sight")
	}
	c.String(nil, s, true)
	if _, ok := c.vals[kindString+1][s]; !ok {
		t.Fatal("not kept after two sights")
	}
	if _, ok := c.vals[kindString][s]; ok {
		t.Fatal("kept for the other escaping too")
	}
}

// The attack: a client that sends a new long string with every request,
// each twice, to fill the cache. It never holds more than its bound, and
// still writes each right.
func TestCacheBounded(t *testing.T) {
	const max = 64 << 10
	c := New(max)
	for i := range 2000 {
		s := long(fmt.Sprint(i))
		for range 2 {
			if got, want := c.String(nil, s, false), jsonfast.AppendString(nil, s, false); !bytes.Equal(got, want) {
				t.Fatalf("string %d written wrong", i)
			}
		}
		held := 0
		for _, m := range c.vals {
			for k, v := range m {
				held += len(k) + len(v)
			}
		}
		if held != c.size || held > max {
			t.Fatalf("after %d strings: %d bytes held, size says %d, bound %d", i+1, held, c.size, max)
		}
		if len(c.seen) > maxSeen {
			t.Fatalf("%d hashes remembered", len(c.seen))
		}
	}
	// A value larger than a quarter of the bound is never kept.
	big := strings.Repeat("x", max/2)
	c.String(nil, big, false)
	c.String(nil, big, false)
	if _, ok := c.vals[kindString][big]; ok {
		t.Fatal("kept a value of half the bound")
	}
}

// The value kept is a copy: changing the caller's bytes after changes
// nothing the cache writes.
func TestCacheCopies(t *testing.T) {
	c := New(1 << 20)
	raw := []byte(`{"description":"` + long("d") + `"}`)
	want, _ := jsonfast.AppendCompact(nil, raw, true)
	for range 2 {
		c.Compact(nil, raw, true)
	}
	changed := bytes.Clone(raw)
	copy(raw, `{"evil":1          `)
	if got, _ := c.Compact(nil, changed, true); !bytes.Equal(got, want) {
		t.Fatalf("after the caller's bytes changed: %.60q", got)
	}
}

// Many goroutines at once (run with -race).
func TestCacheConcurrent(t *testing.T) {
	c := New(32 << 10)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				s := long(fmt.Sprint((i + g) % 40))
				if got, want := c.String(nil, s, i%2 == 0), jsonfast.AppendString(nil, s, i%2 == 0); !bytes.Equal(got, want) {
					t.Errorf("goroutine %d: string %d written wrong", g, i)
					return
				}
			}
		})
	}
	wg.Wait()
}

// A nil Cache writes as jsonfast does.
func TestNilCache(t *testing.T) {
	var c *Cache
	s := long("x")
	if got := c.String(nil, s, true); !bytes.Equal(got, jsonfast.AppendString(nil, s, true)) {
		t.Fatal("nil cache wrote a string wrong")
	}
	if _, ok := c.Compact(nil, []byte(long("{")), true); ok {
		t.Fatal("nil cache took invalid JSON")
	}
}

func FuzzCache(f *testing.F) {
	f.Add([]byte(long("a")), true)
	f.Add([]byte(`{"a": [1, 2, "<x>"]}`+strings.Repeat(" ", MinLen)), false)
	c := New(1 << 20)
	f.Fuzz(func(t *testing.T, b []byte, html bool) {
		for range 3 {
			if got, want := c.String(nil, string(b), html), jsonfast.AppendString(nil, string(b), html); !bytes.Equal(got, want) {
				t.Fatalf("String(%q) = %q, want %q", b, got, want)
			}
			got, ok := c.Compact(nil, b, html)
			want, wok := jsonfast.AppendCompact(nil, b, html)
			if ok != wok || !bytes.Equal(got, want) {
				t.Fatalf("Compact(%q) = %q, %v, want %q, %v", b, got, ok, want, wok)
			}
		}
	})
}
