package sse

import (
	"fmt"
	"testing"

	"github.com/ptkit/ptk/internal/benchdata"
)

// benchStream is a streamed Chat Completions answer as an upstream sends
// it to the gateway: 33 events of about 250 bytes, one per read, as a
// server that flushes each event.
func benchStream() [][]byte {
	var evs [][]byte
	prefix := `{"id":"chatcmpl-8f1c2d9e0a7b4c3d","object":"chat.completion.chunk","created":1767225600,"model":"bench-upstream","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":{"content":`
	for i := range 31 {
		evs = append(evs, fmt.Appendf(nil, "data: %s\"piece %02d \"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", prefix, i))
	}
	evs = append(evs, []byte(`data: {"id":"chatcmpl-8f1c2d9e0a7b4c3d","object":"chat.completion.chunk","created":1767225600,"model":"bench-upstream","choices":[],"usage":{"prompt_tokens":912,"completion_tokens":41,"total_tokens":953}}`+"\n\n"))
	return append(evs, []byte("data: [DONE]\n\n"))
}

// BenchmarkReader reads a 33-event stream as the provider clients do:
// Next, then Buffered to know whether to pass the batch on (per op: the
// whole stream): Chat Completions' data lines, and the same with an
// "event:" line each, as Anthropic and Responses streams have.
func BenchmarkReader(b *testing.B) {
	b.Run("data", func(b *testing.B) { benchReader(b, benchStream()) })
	var typed [][]byte
	for i, ev := range benchStream() {
		typ := "content_block_delta"
		if i%10 == 0 {
			typ = "ping"
		}
		typed = append(typed, append([]byte("event: "+typ+"\n"), ev...))
	}
	b.Run("typed", func(b *testing.B) { benchReader(b, typed) })
}

func benchReader(b *testing.B, evs [][]byte) {
	size := 0
	for _, ev := range evs {
		size += len(ev)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	reads := make([][]byte, len(evs))
	for b.Loop() {
		copy(reads, evs)
		s := NewReader(&benchdata.EventReads{Events: reads})
		n := 0
		for {
			if _, err := s.Next(); err != nil {
				break
			}
			s.Buffered()
			n++
		}
		s.Close()
		if n != len(evs) {
			b.Fatalf("%d events, want %d", n, len(evs))
		}
	}
}
