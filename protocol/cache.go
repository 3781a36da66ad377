package protocol

import (
	"hash/maphash"
	"slices"
	"sync"

	"github.com/ptkit/ptk"
)

// ParserCache makes parsers and keeps the ones it made lately, by the tools
// they were made for: a server whose clients send the same tools with every
// request (an agent's, on every turn of a task) compiles each tool set's
// schemas once instead of once per request. Tools are found by a hash of
// everything a parser is made from, and compared in full on a hit, so two
// tool sets never share a parser. It keeps up to its byte budget of tool
// definitions (a rough measure of what their parsers hold), the oldest
// forgotten first; a tool set larger than a quarter of it is never kept. It
// is safe for concurrent use; a Parser is immutable, so one may serve any
// number of requests at once.
type ParserCache struct {
	maxBytes int
	opts     []Option
	seed     maphash.Seed

	mu    sync.Mutex
	m     map[uint64]*cachedParser
	order []uint64 // the keys in m, oldest first
	size  int
}

// cachedParser is a parser and a copy of the tools it was made for.
type cachedParser struct {
	tools []ptk.ToolInfo
	p     *Parser
	size  int
}

// DefaultParserCacheBytes is a ParserCache's budget when NewParserCache is
// given none.
const DefaultParserCacheBytes = 8 << 20

// NewParserCache returns a cache of parsers made with opts, keeping up to
// maxBytes of tool definitions (DefaultParserCacheBytes when 0 or less).
func NewParserCache(maxBytes int, opts ...Option) *ParserCache {
	if maxBytes <= 0 {
		maxBytes = DefaultParserCacheBytes
	}
	return &ParserCache{maxBytes: maxBytes, opts: slices.Clone(opts), seed: maphash.MakeSeed(), m: map[uint64]*cachedParser{}}
}

// Parser returns the parser for tools, as NewParser(tools, opts...) makes
// it: the one made before for the same tools, or a new one. An error (a
// tool that cannot be used) is NewParser's, and is not kept. The cache
// keeps its own copy of tools: the caller may change or reuse them after.
func (c *ParserCache) Parser(tools []ptk.ToolInfo) (*Parser, error) {
	h, size := c.hash(tools)
	c.mu.Lock()
	e := c.m[h]
	c.mu.Unlock()
	if e != nil && sameTools(e.tools, tools) {
		return e.p, nil
	}
	own := cloneTools(tools)
	p, err := NewParser(own, c.opts...)
	if err != nil || size > c.maxBytes/4 {
		return p, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[h]; ok {
		// The same hash, other tools (or the same, made at once by two
		// requests): the newer takes the place.
		c.size -= old.size
		c.order = slices.DeleteFunc(c.order, func(k uint64) bool { return k == h })
	}
	c.m[h] = &cachedParser{tools: own, p: p, size: size}
	c.order = append(c.order, h)
	c.size += size
	for c.size > c.maxBytes && len(c.order) > 0 {
		k := c.order[0]
		c.order = c.order[1:]
		c.size -= c.m[k].size
		delete(c.m, k)
	}
	return p, nil
}

// Len reports how many parsers the cache keeps.
func (c *ParserCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// hash hashes everything a parser is made from, each part preceded by its
// length so that no two tool sets write the same bytes; size is the bytes
// of the tools' definitions, plus a little for each.
func (c *ParserCache) hash(tools []ptk.ToolInfo) (h uint64, size int) {
	var mh maphash.Hash
	mh.SetSeed(c.seed)
	var n [8]byte
	part := func(s string) {
		l := len(s)
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		mh.Write(n[:])
		mh.WriteString(s)
		size += len(s)
	}
	for _, t := range tools {
		part(t.Name)
		part(t.Description)
		l := len(t.Parameters)
		if t.Parameters == nil {
			l = -1 // nil and empty parameters are not the same tool
		}
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		mh.Write(n[:])
		mh.Write(t.Parameters)
		size += len(t.Parameters) + 64
		flags := byte(0)
		if t.ReadOnly {
			flags |= 1
		}
		if t.Cacheable {
			flags |= 2
		}
		mh.WriteByte(flags)
	}
	return mh.Sum64(), size
}

// sameTools reports whether a and b are the same tools, field by field.
func sameTools(a, b []ptk.ToolInfo) bool {
	return slices.EqualFunc(a, b, func(x, y ptk.ToolInfo) bool {
		return x.Name == y.Name && x.Description == y.Description && x.ReadOnly == y.ReadOnly && x.Cacheable == y.Cacheable &&
			(x.Parameters == nil) == (y.Parameters == nil) && string(x.Parameters) == string(y.Parameters)
	})
}

// cloneTools copies tools and their parameters, which may lie in a buffer
// the caller reuses.
func cloneTools(tools []ptk.ToolInfo) []ptk.ToolInfo {
	own := slices.Clone(tools)
	for i := range own {
		if own[i].Parameters != nil {
			own[i].Parameters = slices.Clone(own[i].Parameters)
		}
	}
	return own
}
