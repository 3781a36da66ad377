package record_test

import (
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/record"
)

// buildOnly is a Sink that builds each record, as a Writer's goroutine
// would, and keeps nothing.
type buildOnly struct{}

func (buildOnly) RecordFunc(build func() *trace.Record) { build() }

// BenchmarkRequestRecord is what recording costs a gateway request on its
// own goroutine (ptk serve with a trace store): a request begun and ended,
// its record built (a Writer builds it on its own goroutine instead).
//
//	go test ./trace/record -run '^$' -bench BenchmarkRequestRecord -benchmem
func BenchmarkRequestRecord(b *testing.B) {
	q := trace.Request{API: "chat", Method: "POST", Route: "/v1/chat/completions", Status: 200, Asked: "gpt-4o", Model: "qwen3:8b", Mode: "native"}
	run := trace.Run{Model: "qwen3:8b", Provider: "ollama", Usage: ptk.Usage{PromptTokens: 1200, CompletionTokens: 80}}
	b.ReportAllocs()
	for b.Loop() {
		r := record.NewRequest(buildOnly{})
		r.End(run, q)
	}
}
