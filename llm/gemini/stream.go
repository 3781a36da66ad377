package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/sse"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/internal/httpx"
	"github.com/ptkit/ptk/llm/internal/retry"
)

// Stream makes one call and returns its answer as it arrives. A call that
// fails before its first chunk is made again, as [Client.Generate] does;
// after it, an error ends the sequence. Breaking out of the loop, or
// canceling ctx, closes the connection at once.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	attempt := func(ctx context.Context, body []byte, yield func(llm.Chunk) bool) error {
		return c.stream(ctx, req.Model, body, yield)
	}
	return c.t.Stream(ctx, func() ([]byte, error) { return c.marshal(req) }, attempt)
}

// stream makes one attempt, giving each chunk to yield. It returns
// retry.ErrStopped when yield asks to stop.
func (c *Client) stream(ctx context.Context, model string, body []byte, yield func(llm.Chunk) bool) error {
	resp, err := c.post(ctx, model, body, true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return readStream(resp.Body, yield)
}

// readStream reads a text/event-stream answer to its end.
func readStream(body io.Reader, yield func(llm.Chunk) bool) error {
	events := sse.NewReader(body)
	var s streamState
	for {
		ev, err := events.Next()
		switch {
		case err == io.EOF:
			return s.end(yield)
		case err != nil:
			return httpx.StreamError(err)
		}
		if data := bytes.TrimSpace(ev.Data); len(data) > 0 {
			if err := s.event(data, yield); err != nil {
				return err
			}
		}
	}
}

// streamState is what reading a stream remembers between its events.
type streamState struct {
	model    string
	calls    int        // the calls given so far
	finished bool       // a finishReason has arrived
	usage    *ptk.Usage // the last usage, given at the end
}

// event reads one event, a whole GenerateContentResponse, and gives its
// chunks to yield.
func (s *streamState) event(data []byte, yield func(llm.Chunk) bool) error {
	var r generateResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return httpx.BadResponse(err, data)
	}
	if err := r.failure(); err != nil {
		return err
	}
	for _, ch := range s.chunks(&r) {
		if !yield(ch) {
			return retry.ErrStopped
		}
	}
	return nil
}

// chunks maps one event to chunks: one for its text, reasoning and model
// (given when it changes), then one for each call, whole; the finish
// reason is on the last.
func (s *streamState) chunks(r *generateResponse) []llm.Chunk {
	if r.UsageMetadata != nil {
		u := r.UsageMetadata.usage()
		s.usage = &u
	}
	var head llm.Chunk
	if r.ModelVersion != s.model {
		head.Model, s.model = r.ModelVersion, r.ModelVersion
	}
	out := []llm.Chunk{head}
	if len(r.Candidates) > 0 {
		c := &r.Candidates[0]
		for _, p := range c.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				call := p.FunctionCall.call(s.calls)
				out = append(out, llm.Chunk{Call: &llm.CallDelta{Index: s.calls, ID: call.ID, Tool: call.Tool, ArgsDelta: string(call.Args)}})
				s.calls++
			case p.Thought:
				out[0].Reasoning += p.Text
			default:
				out[0].Text += p.Text
			}
		}
		if c.FinishReason != "" {
			out[len(out)-1].FinishReason, s.finished = c.FinishReason, true
		}
	}
	if out[0] == (llm.Chunk{}) {
		out = out[1:]
	}
	return out
}

// end ends a stream: with the usage, if the answer is whole.
func (s *streamState) end(yield func(llm.Chunk) bool) error {
	if !s.finished {
		return httpx.Incomplete()
	}
	if s.usage != nil && !yield(llm.Chunk{Usage: s.usage}) {
		return retry.ErrStopped
	}
	return nil
}
