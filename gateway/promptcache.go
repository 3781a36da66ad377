package gateway

import (
	"strconv"
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
// with write when it is not kept. The key is written into a pooled buffer
// and looked up without a copy: a request whose prompt is kept allocates
// nothing here.
func (c *promptCache) get(instructions string, tools []ptk.ToolInfo, write func(string, []ptk.ToolInfo) string) string {
	kb := keyBufs.Get().(*[]byte)
	*kb = appendPromptKey((*kb)[:0], instructions, tools)
	defer func() {
		if cap(*kb) <= maxKeyBuf {
			keyBufs.Put(kb)
		}
	}()
	c.mu.Lock()
	p, ok := c.m[string(*kb)]
	c.mu.Unlock()
	if ok {
		return p
	}
	p = write(instructions, tools)
	n := len(*kb) + len(p)
	if n > c.maxBytes/4 {
		return p // too large to keep
	}
	key := string(*kb)
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

// keyBufs are the buffers prompt keys are written in; one larger than
// maxKeyBuf (a request with a huge prompt) is left to the collector.
var keyBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxKeyBuf = 256 << 10

// promptKey is everything a system prompt is written from, unambiguously:
// each part is preceded by its length.
func promptKey(instructions string, tools []ptk.ToolInfo) string {
	return string(appendPromptKey(nil, instructions, tools))
}

func appendPromptKey(b []byte, instructions string, tools []ptk.ToolInfo) []byte {
	part := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	part(instructions)
	for _, t := range tools {
		part(t.Name)
		part(t.Description)
		// Not part(string(t.Parameters)): the conversion copies.
		b = strconv.AppendInt(b, int64(len(t.Parameters)), 10)
		b = append(b, ':')
		b = append(b, t.Parameters...)
	}
	return b
}
