package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"strconv"

	"github.com/ptkit/ptk/internal/sse"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic/wire"
	"github.com/ptkit/ptk/llm/internal/httpx"
	"github.com/ptkit/ptk/llm/internal/retry"
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

// readStream reads a text/event-stream answer up to its message_stop.
func readStream(body io.Reader, yield func(llm.Chunk) bool) error {
	events := sse.NewReader(body)
	defer events.Close()
	var s streamState
	for !s.done {
		ev, err := events.Next()
		switch {
		case err == io.EOF && s.stopReason != "":
			// The answer is whole; the server did not send message_stop.
			if !yield(s.last()) {
				return retry.ErrStopped
			}
			return nil
		case err == io.EOF:
			return httpx.Incomplete()
		case err != nil:
			return httpx.StreamError(err)
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		var e wire.Event
		if err := json.Unmarshal(data, &e); err != nil {
			return httpx.BadResponse(err, data)
		}
		if e.Type == "error" || ev.Type == "error" {
			return inBandError(data)
		}
		ch, err := s.event(&e)
		if err != nil {
			return err
		}
		// More: the next event is here already. An event that makes no
		// chunk gives none, unless the chunk before said More and nothing
		// follows yet: an empty chunk then ends the batch.
		more := events.Buffered()
		if ch == (llm.Chunk{}) && (!s.owed || more) {
			continue
		}
		ch.More, s.owed = more, more
		if !yield(ch) {
			return retry.ErrStopped
		}
	}
	return nil
}

// streamState is what reading a stream remembers between its events.
type streamState struct {
	// owed: the last chunk given said More, so a batch is open.
	owed       bool
	usage      wire.Usage
	stopReason string
	calls      map[int]int // a tool_use block's index → the call's index among the calls
	done       bool        // message_stop has arrived
}

// event maps one event to a chunk, which is empty for the events that only
// update the state (ping, content_block_stop, message_delta, a
// signature_delta, and types the API may add).
func (s *streamState) event(e *wire.Event) (llm.Chunk, error) {
	var ch llm.Chunk
	switch e.Type {
	case "message_start":
		ch.Model = e.Message.Model
		s.usage.Merge(e.Message.Usage)
	case "content_block_start":
		switch b := &e.ContentBlock; b.Type {
		case "text":
			ch.Text = b.Text
		case "thinking":
			ch.Reasoning = b.Thinking
		case "tool_use":
			if s.calls == nil {
				s.calls = map[int]int{}
			}
			n := len(s.calls)
			s.calls[e.Index] = n
			ch.Call = &llm.CallDelta{Index: n, ID: b.ID, Tool: b.Name}
		}
	case "content_block_delta":
		switch d := &e.Delta; d.Type {
		case "text_delta":
			ch.Text = d.Text
		case "thinking_delta":
			ch.Reasoning = d.Thinking
		case "input_json_delta":
			n, ok := s.calls[e.Index]
			if !ok {
				return ch, &llm.Error{Kind: llm.ErrBadResponse, Message: "input_json_delta for content block " + strconv.Itoa(e.Index) + ", which is no tool_use"}
			}
			if d.PartialJSON != "" {
				ch.Call = &llm.CallDelta{Index: n, ArgsDelta: d.PartialJSON}
			}
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			s.stopReason = e.Delta.StopReason
		}
		if e.Usage != nil {
			s.usage.Merge(*e.Usage)
		}
	case "message_stop":
		s.done = true
		ch = s.last()
	}
	return ch, nil
}

// last is the chunk that ends the answer: the usage of the whole call and
// the stop reason.
func (s *streamState) last() llm.Chunk {
	u := usageOf(s.usage)
	return llm.Chunk{Usage: &u, FinishReason: s.stopReason}
}
