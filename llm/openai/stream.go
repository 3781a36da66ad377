package openai

import (
	"bytes"
	"context"
	"io"
	"iter"

	"github.com/ptkit/ptk/internal/sse"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
	"github.com/ptkit/ptk/llm/internal/retry"
	"github.com/ptkit/ptk/llm/openai/wire"
)

// Stream makes one call and returns its answer as it arrives. A call that
// fails before its first chunk is made again, as [Client.Generate] does;
// after it, an error ends the sequence. Breaking out of the loop, or
// canceling ctx, closes the connection at once.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return c.t.Stream(ctx, func() ([]byte, error) { return c.marshal(req, true) }, c.stream)
}

// stream makes one attempt, giving each chunk to yield. It returns
// retry.ErrStopped when yield asks to stop.
func (c *Client) stream(ctx context.Context, body []byte, yield func(llm.Chunk) bool) (err error) {
	resp, err := c.post(ctx, body, true)
	if err != nil {
		return err
	}
	defer func() { httpx.CloseStream(resp.Body, err == nil) }()
	return httpx.StreamOrWhole(resp, yield, readStream, readResponse)
}

// readStream reads a text/event-stream answer up to its "[DONE]".
func readStream(body io.Reader, yield func(llm.Chunk) bool) error {
	events := sse.NewReader(body)
	defer events.Close()
	var s streamState
	var chunks wire.ChunkReader
	for {
		ev, err := events.Next()
		switch {
		case err == io.EOF && s.finished:
			return nil // the answer is whole; the server did not send [DONE]
		case err == io.EOF:
			return httpx.Incomplete()
		case err != nil:
			return httpx.StreamError(err)
		}
		data := bytes.TrimSpace(ev.Data)
		switch {
		case len(data) == 0:
			if !s.give(nil, events.Buffered(), yield) {
				return retry.ErrStopped
			}
			continue
		case string(data) == "[DONE]":
			return nil
		case ev.Type == "error":
			return inBandError(data)
		}
		r, err := chunks.Read(data)
		if err != nil {
			return httpx.BadResponse(err, data)
		}
		if r.Failed() {
			return inBandError(data)
		}
		if !s.give(s.chunks(r), events.Buffered(), yield) {
			return retry.ErrStopped
		}
	}
}

// streamState is what reading a stream remembers between its events.
type streamState struct {
	model    string
	finished bool        // a finish_reason has arrived
	ids      []string    // the ID of each call, by the index the caller sees
	slots    map[int]int // the server's index for a call → the index the caller sees
	out      []llm.Chunk // what chunks returned last, reused
	// owed: the last chunk given said More, so a batch is open.
	owed bool
}

// give gives yield one event's chunks, each saying whether another has
// arrived already: the next of the event's, or, for the last, the next
// event's when the reader holds it (more). An event that makes no chunk
// after a chunk that said More, with nothing held after it, gives an empty
// chunk that ends the batch. It reports whether to read on.
func (s *streamState) give(chunks []llm.Chunk, more bool, yield func(llm.Chunk) bool) bool {
	if len(chunks) == 0 && s.owed && !more {
		chunks = append(chunks, llm.Chunk{})
	}
	for i := range chunks {
		ch := chunks[i]
		ch.More = more || i < len(chunks)-1
		s.owed = ch.More
		if !yield(ch) {
			return false
		}
	}
	return true
}

// chunks maps one event to chunks: one for its text, reasoning and model,
// one for each tool-call fragment, the finish reason and the usage on the
// last. The model is given when it changes. The slice is valid until the
// next call.
func (s *streamState) chunks(r *wire.Completion) []llm.Chunk {
	out := s.out[:0]
	var ch llm.Chunk
	if r.Model != s.model {
		ch.Model, s.model = r.Model, r.Model
	}
	if len(r.Choices) > 0 {
		c := &r.Choices[0]
		var d wire.Delta
		if c.Delta != nil {
			d = *c.Delta
		}
		ch.Text, ch.Reasoning = string(d.Content), d.ReasoningText()
		for i, tc := range d.ToolCalls {
			if ch.Call != nil {
				out = append(out, ch)
				ch = llm.Chunk{}
			}
			if tc.Index != nil {
				i = *tc.Index
			}
			ch.Call = &llm.CallDelta{Index: s.slot(i, tc.ID), ID: tc.ID, Tool: tc.Function.Name, ArgsDelta: string(tc.Function.Arguments)}
		}
		if f := c.Finish(); f != "" {
			ch.FinishReason, s.finished = f, true
		}
	}
	if r.Usage != nil {
		u := r.Usage.Usage()
		ch.Usage = &u
	}
	if ch != (llm.Chunk{}) {
		out = append(out, ch)
	}
	s.out = out
	return out
}

// slot returns the index the caller sees for a call fragment at the
// server's index i: calls are numbered in the order they first appear, and
// a new ID at an index another call holds starts a new call (Ollama numbers
// every call 0).
func (s *streamState) slot(i int, id string) int {
	n, ok := s.slots[i]
	if ok && (id == "" || s.ids[n] == "" || s.ids[n] == id) {
		if s.ids[n] == "" {
			s.ids[n] = id
		}
		return n
	}
	if s.slots == nil {
		s.slots = map[int]int{}
	}
	n = len(s.ids)
	s.ids = append(s.ids, id)
	s.slots[i] = n
	return n
}
