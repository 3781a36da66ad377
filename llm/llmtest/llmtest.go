// Package llmtest provides a scripted llm.Model for tests: it answers with
// replies written in advance and records the requests it was sent, so that
// an agent can be tested deterministically, without a network.
package llmtest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// Reply is one scripted answer.
type Reply struct {
	Content   string
	Reasoning string
	Calls     []ptk.Call
	Usage     ptk.Usage
	// FinishReason, when set, is the reason given for stopping; otherwise
	// "tool_calls" with calls, else "stop".
	FinishReason string
	// Err, when set, is returned instead of an answer.
	Err error
	// Wait, when set, makes the call wait until ctx is done, then fail
	// with ctx's error: a model that never answers.
	Wait bool
}

// Script is a model that answers with Replies, in order. It implements
// llm.Streamer: streamed, each reply's content comes in pieces of
// ChunkSize bytes (default 3) and its calls in pieces too. It is safe
// for concurrent use; a call past the last reply fails.
type Script struct {
	Replies   []Reply
	ChunkSize int

	mu       sync.Mutex
	next     int
	requests []llm.Request
}

var _ llm.Streamer = (*Script)(nil)

// ErrNoReply is returned by a call past the script's last reply.
var ErrNoReply = errors.New("llmtest: no scripted reply left")

// New returns a Script that answers with replies.
func New(replies ...Reply) *Script { return &Script{Replies: replies} }

// Text returns a Reply with the given content.
func Text(content string) Reply { return Reply{Content: content} }

// Requests returns the requests received so far.
func (s *Script) Requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.requests...)
}

func (s *Script) take(req llm.Request) (Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Messages = append([]ptk.Message(nil), req.Messages...)
	s.requests = append(s.requests, req)
	if s.next >= len(s.Replies) {
		return Reply{}, fmt.Errorf("%w (request %d)", ErrNoReply, s.next+1)
	}
	s.next++
	return s.Replies[s.next-1], nil
}

// finish is the reply's finish reason.
func (r Reply) finish() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.Calls) > 0:
		return "tool_calls"
	}
	return "stop"
}

// Generate answers with the next reply.
func (s *Script) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	r, err := s.take(req)
	if err != nil {
		return nil, err
	}
	if r.Wait {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return &llm.Response{Content: r.Content, Reasoning: r.Reasoning, Calls: r.Calls, Usage: r.Usage, FinishReason: r.finish(), Model: req.Model}, nil
}

// Stream answers with the next reply, in pieces.
func (s *Script) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		r, err := s.take(req)
		if err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		if r.Wait {
			<-ctx.Done()
			yield(llm.Chunk{}, ctx.Err())
			return
		}
		if r.Err != nil {
			yield(llm.Chunk{}, r.Err)
			return
		}
		n := s.ChunkSize
		if n <= 0 {
			n = 3
		}
		send := func(c llm.Chunk) bool {
			if err := ctx.Err(); err != nil {
				yield(llm.Chunk{}, err)
				return false
			}
			return yield(c, nil)
		}
		for _, piece := range pieces(r.Reasoning, n) {
			if !send(llm.Chunk{Reasoning: piece}) {
				return
			}
		}
		for _, piece := range pieces(r.Content, n) {
			if !send(llm.Chunk{Text: piece}) {
				return
			}
		}
		for i, c := range r.Calls {
			if !send(llm.Chunk{Call: &llm.CallDelta{Index: i, ID: c.ID, Tool: c.Tool}}) {
				return
			}
			for _, piece := range pieces(string(c.Args), n) {
				if !send(llm.Chunk{Call: &llm.CallDelta{Index: i, ArgsDelta: piece}}) {
					return
				}
			}
		}
		u := r.Usage
		send(llm.Chunk{Usage: &u, FinishReason: r.finish(), Model: req.Model})
	}
}

// pieces splits s into pieces of n bytes (the last may be shorter).
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
