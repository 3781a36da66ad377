package jsonfast_test

import (
	"testing"

	"github.com/ptkit/ptk/internal/jsonfast"
)

// benchSchema is a tool's parameters as a client sends them: compact.
var benchSchema = []byte(`{"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. Paris"},"unit":{"type":"string","enum":["celsius","fahrenheit"],"description":"Temperature unit"}},"required":["city"],"additionalProperties":false}`)

// BenchmarkAppendCompact: a tool's schema checked and compacted, as a
// json.RawMessage field is written.
func BenchmarkAppendCompact(b *testing.B) {
	b.SetBytes(int64(len(benchSchema)))
	buf := make([]byte, 0, 1024)
	for b.Loop() {
		buf, _ = jsonfast.AppendCompact(buf[:0], benchSchema, false)
	}
}

// BenchmarkSkip: the same schema only checked.
func BenchmarkSkip(b *testing.B) {
	b.SetBytes(int64(len(benchSchema)))
	for b.Loop() {
		r := jsonfast.NewReader(benchSchema)
		if !r.Skip() || !r.End() {
			b.Fatal("invalid")
		}
	}
}
