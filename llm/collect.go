package llm

import (
	"iter"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
)

// Collector assembles streamed chunks into the Response the same call would
// have returned whole. Its zero value is ready to use.
type Collector struct {
	text, reasoning strings.Builder
	calls           []callBuf
	resp            Response
}

type callBuf struct {
	id, tool string
	args     []byte
}

// Add takes the next chunk.
func (c *Collector) Add(ch Chunk) {
	c.text.WriteString(ch.Text)
	c.reasoning.WriteString(ch.Reasoning)
	if d := ch.Call; d != nil && d.Index >= 0 {
		for len(c.calls) <= d.Index {
			c.calls = append(c.calls, callBuf{})
		}
		b := &c.calls[d.Index]
		if d.ID != "" {
			b.id = d.ID
		}
		if b.tool == "" {
			// Some servers repeat the name on every piece: the first counts.
			b.tool = d.Tool
		}
		b.args = append(b.args, d.ArgsDelta...)
	}
	if ch.Usage != nil {
		// A later usage replaces an earlier one (they are totals), and so
		// does the cost priced from it.
		c.resp.Usage, c.resp.Cost = *ch.Usage, ch.Cost
	}
	if ch.FinishReason != "" {
		c.resp.FinishReason = ch.FinishReason
	}
	if ch.Model != "" {
		c.resp.Model = ch.Model
	}
}

// Response returns the answer assembled so far. Calls that never got a name
// (an index the stream skipped) are left out; a call without an ID gets
// "call_N", N its index from 1.
func (c *Collector) Response() *Response {
	r := c.resp
	r.Content = c.text.String()
	r.Reasoning = c.reasoning.String()
	r.Calls = nil
	for i := range c.calls {
		b := &c.calls[i]
		if b.tool == "" && len(b.args) == 0 {
			continue
		}
		id := b.id
		if id == "" {
			id = "call_" + strconv.Itoa(i+1)
		}
		args := string(b.args)
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		r.Calls = append(r.Calls, ptk.Call{ID: id, Tool: b.tool, Args: []byte(args)})
	}
	return &r
}

// Chunks returns a whole answer as a stream would carry it: the text and
// reasoning first, then one chunk per call, then the usage, the finish
// reason and the cost. Collecting them gives r back.
func Chunks(r *Response) []Chunk {
	if r == nil {
		return nil
	}
	out := make([]Chunk, 0, len(r.Calls)+2)
	out = append(out, Chunk{Text: r.Content, Reasoning: r.Reasoning, Model: r.Model})
	for i, c := range r.Calls {
		out = append(out, Chunk{Call: &CallDelta{Index: i, ID: c.ID, Tool: c.Tool, ArgsDelta: string(c.Args)}})
	}
	u := r.Usage
	return append(out, Chunk{Usage: &u, FinishReason: r.FinishReason, Cost: r.Cost})
}

// Collect reads a whole stream and returns the assembled Response, or the
// stream's error together with what arrived before it.
func Collect(seq iter.Seq2[Chunk, error]) (*Response, error) {
	var c Collector
	for ch, err := range seq {
		if err != nil {
			return c.Response(), err
		}
		c.Add(ch)
	}
	return c.Response(), nil
}
