package gateway

import (
	"strconv"
	"strings"
	"sync"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/protocol"
)

// An agent sends the same instructions and tools on every turn of a task,
// and writing them as the text protocol's system prompt is the costliest
// step of a request (Claude Code's twelve tools make a prompt of 29 KB,
// written in about 0.3 ms): the gateway keeps the prompts it wrote lately.

// cachedPTK is the PTK formatter with a cache of its system prompts.
type cachedPTK struct {
	protocol.PTK
	cache *promptCache
}

var _ protocol.Formatter = cachedPTK{}

func (f cachedPTK) SystemPrompt(instructions string, tools []ptk.ToolInfo) string {
	return f.cache.get(instructions, tools, f.PTK.SystemPrompt)
}

// promptCache keeps up to maxBytes of system prompts by the instructions
// and tools they were written from, the oldest forgotten first. It is safe
// for concurrent use.
type promptCache struct {
	maxBytes int

	mu    sync.Mutex
	m     map[string]string
	order []string
	size  int
}

// promptCacheBytes bounds the prompts a gateway keeps (keys and prompts).
const promptCacheBytes = 8 << 20

// get returns the prompt written from instructions and tools, writing it
// with write when it is not kept.
func (c *promptCache) get(instructions string, tools []ptk.ToolInfo, write func(string, []ptk.ToolInfo) string) string {
	key := promptKey(instructions, tools)
	c.mu.Lock()
	p, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return p
	}
	p = write(instructions, tools)
	n := len(key) + len(p)
	if n > c.maxBytes/4 {
		return p // too large to keep
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok {
		return p
	}
	if c.m == nil {
		c.m = map[string]string{}
	}
	c.m[key] = p
	c.order = append(c.order, key)
	c.size += n
	for c.size > c.maxBytes && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.size -= len(old) + len(c.m[old])
		delete(c.m, old)
	}
	return p
}

// promptKey is everything a system prompt is written from, unambiguously:
// each part is preceded by its length.
func promptKey(instructions string, tools []ptk.ToolInfo) string {
	n := len(instructions) + 8
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters) + 24
	}
	var b strings.Builder
	b.Grow(n)
	part := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	part(instructions)
	for _, t := range tools {
		part(t.Name)
		part(t.Description)
		part(string(t.Parameters))
	}
	return b.String()
}
