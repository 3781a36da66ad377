// Package jsoncache keeps the JSON of the long strings and schemas a
// provider client writes again and again: the system prompt, the tools'
// descriptions and schemas, the turns of a conversation that each call
// sends once more. Written afresh, a coding agent's request (a 12 KB system
// prompt, a dozen tools of a kilobyte or two) cost the gateway more to
// escape than to send; looked up, it costs a hash and a copy.
//
// A [Cache] is keyed by content, never by identity: the gateway decodes
// each client request anew, so the same prompt comes in a new string each
// time. It is bounded in bytes, and keeps a value only the second time it
// is seen, so that a one-off (a user's message, a tool's result) costs a
// hash and no copy. A nil *Cache caches nothing.
package jsoncache

import (
	"bytes"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/ptkit/ptk/internal/jsonfast"
)

// MinLen is the shortest string or raw value a Cache keeps: below it,
// writing is as cheap as looking up.
const MinLen = 256

// maxSeen bounds how many hashes of values seen once a Cache remembers.
const maxSeen = 1 << 14

// The kinds of value, each in its own map: a string, a raw JSON value,
// each with or without HTML escaped.
const (
	kindString = iota * 2
	kindRaw
	kinds = 4
)

// Cache maps values to the JSON encoding/json writes for them. It is safe
// for concurrent use.
type Cache struct {
	max  int // bytes of keys and values held, at most
	seed maphash.Seed

	mu   sync.RWMutex
	vals [kinds]map[string][]byte
	size int
	seen map[uint64]struct{} // values seen once, by hash and kind
}

// New returns a Cache that holds up to maxBytes of keys and values; when a
// new value would pass that, it forgets everything it held first.
func New(maxBytes int) *Cache {
	return &Cache{max: maxBytes, seed: maphash.MakeSeed()}
}

// String appends s as jsonfast.AppendString does.
func (c *Cache) String(dst []byte, s string, escapeHTML bool) []byte {
	if c == nil || len(s) < MinLen || len(s) > c.max/4 {
		return jsonfast.AppendString(dst, s, escapeHTML)
	}
	k := kindString + kindOf(escapeHTML)
	c.mu.RLock()
	v, ok := c.vals[k][s]
	c.mu.RUnlock()
	if ok {
		return append(dst, v...)
	}
	n := len(dst)
	dst = jsonfast.AppendString(dst, s, escapeHTML)
	c.put(k, s, dst[n:])
	return dst
}

// Compact appends raw as jsonfast.AppendCompact does, and reports false,
// appending nothing, for what it refuses.
func (c *Cache) Compact(dst, raw []byte, escapeHTML bool) ([]byte, bool) {
	if c == nil || len(raw) < MinLen || len(raw) > c.max/4 {
		return jsonfast.AppendCompact(dst, raw, escapeHTML)
	}
	k := kindRaw + kindOf(escapeHTML)
	c.mu.RLock()
	v, ok := c.vals[k][string(raw)]
	c.mu.RUnlock()
	if ok {
		return append(dst, v...), true
	}
	n := len(dst)
	dst, ok = jsonfast.AppendCompact(dst, raw, escapeHTML)
	if ok {
		c.put(k, string(raw), dst[n:])
	}
	return dst, ok
}

func kindOf(escapeHTML bool) int {
	if escapeHTML {
		return 1
	}
	return 0
}

// put keeps v, the JSON of key, when key was seen before; otherwise it
// remembers that it was seen. key and v are copied.
func (c *Cache) put(k int, key string, v []byte) {
	h := maphash.String(c.seed, key) + uint64(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[h]; !ok {
		if c.seen == nil || len(c.seen) >= maxSeen {
			c.seen = make(map[uint64]struct{})
		}
		c.seen[h] = struct{}{}
		return
	}
	if _, ok := c.vals[k][key]; ok {
		return // another goroutine kept it
	}
	n := len(key) + len(v)
	if c.size+n > c.max {
		c.vals, c.size = [kinds]map[string][]byte{}, 0
	}
	if c.vals[k] == nil {
		c.vals[k] = make(map[string][]byte)
	}
	c.vals[k][strings.Clone(key)] = bytes.Clone(v)
	c.size += n
}
