package wire_test

// The one-pass wire code against encoding/json, on one goroutine. Beside
// the time per op, cpu-ns/op is the process's CPU time per op (the garbage
// collector's included), which other processes on a busy machine change
// far less than they change the time.
//
//	go test ./llm/openai/wire -run '^$' -bench . -benchmem -count 6

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm/openai/wire"
)

// benchRequest is a request as the gateway gets one: a system and a user
// message and five tools with JSON Schemas, 2.7 KB.
func benchRequest() wire.Request {
	r := wire.Request{Model: "bench-ptk", Messages: []wire.Message{
		{Role: "system", Content: wire.TextContent("You are a helpful assistant. Answer briefly; call a tool when it helps, and say what you found & why.")},
		{Role: "user", Content: wire.TextContent("What's the weather in Paris right now, and should I take an umbrella when I bike to work?")},
	}}
	for _, name := range []string{"get_weather", "get_time", "search_web", "read_file", "send_email"} {
		r.Tools = append(r.Tools, wire.Tool{Type: "function", Function: wire.Function{
			Name:        name,
			Description: "The " + strings.ReplaceAll(name, "_", " ") + " tool: it does what its name says, for the place, path or person given, and reports errors as text.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"A city name, such as Paris"},` +
				`"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer","minimum":1,"maximum":14},` +
				`"detail":{"type":"boolean"}},"required":["city"],"additionalProperties":false}`),
		}})
	}
	return r
}

func BenchmarkRequest(b *testing.B) {
	r := benchRequest()
	data, err := json.Marshal(&r)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode/one-pass", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		cpu := benchCPUStart()
		for b.Loop() {
			var r wire.Request
			if err := wire.UnmarshalRequest(data, &r); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report(b)
	})
	// A coding agent's request: a 12 KB system prompt and the same tools,
	// sent again with every call.
	agent := r
	agent.Messages = append([]wire.Message{{Role: "system", Content: wire.TextContent(strings.Repeat("Read the files before you change them; run the tests after, and say what you did. ", 150))}}, r.Messages[1:]...)
	agentData, err := json.Marshal(&agent)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode/one-pass-agent", func(b *testing.B) {
		b.SetBytes(int64(len(agentData)))
		b.ReportAllocs()
		cpu := benchCPUStart()
		for b.Loop() {
			var r wire.Request
			if err := wire.UnmarshalRequest(agentData, &r); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report(b)
	})
	b.Run("decode/encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		cpu := benchCPUStart()
		for b.Loop() {
			var r wire.Request
			if err := json.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report(b)
	})
	b.Run("encode/one-pass", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		cpu := benchCPUStart()
		for b.Loop() {
			if _, ok := r.AppendJSON(make([]byte, 0, 4096), true); !ok {
				b.Fatal("AppendJSON failed")
			}
		}
		cpu.report(b)
	})
	b.Run("encode/encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		cpu := benchCPUStart()
		for b.Loop() {
			if _, err := json.Marshal(&r); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report(b)
	})
}

// benchChunks are the data lines of a recorded OpenAI stream (text and two
// calls), [DONE] left out.
func benchChunks(b *testing.B) [][]byte {
	b.Helper()
	var chunks [][]byte
	for _, f := range []string{"../testdata/stream/openai_text.sse", "../testdata/stream/openai_tools.sse"} {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for line := range bytes.Lines(data) {
			d, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: "))
			if ok && !bytes.Equal(d, []byte("[DONE]")) {
				chunks = append(chunks, d)
			}
		}
	}
	if len(chunks) == 0 {
		b.Fatal("no chunks in the recorded streams")
	}
	return chunks
}

// BenchmarkChunks reads a stream's chunks (per op: every chunk of the two
// recorded streams) and writes them back.
func BenchmarkChunks(b *testing.B) {
	chunks := benchChunks(b)
	b.Run("decode/one-pass", func(b *testing.B) {
		b.ReportAllocs()
		cpu := benchCPUStart()
		for b.Loop() {
			var cr wire.ChunkReader
			for _, d := range chunks {
				if _, err := cr.Read(d); err != nil {
					b.Fatal(err)
				}
			}
		}
		cpu.report(b)
	})
	b.Run("decode/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		cpu := benchCPUStart()
		for b.Loop() {
			for _, d := range chunks {
				var c wire.Completion
				if err := json.Unmarshal(d, &c); err != nil {
					b.Fatal(err)
				}
			}
		}
		cpu.report(b)
	})
	parsed := make([]wire.Completion, len(chunks))
	for i, d := range chunks {
		if err := json.Unmarshal(d, &parsed[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("encode/one-pass", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		cpu := benchCPUStart()
		for b.Loop() {
			for i := range parsed {
				var ok bool
				if buf, ok = parsed[i].AppendJSON(buf[:0], false); !ok {
					b.Fatal("AppendJSON failed")
				}
			}
		}
		cpu.report(b)
	})
	b.Run("encode/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		cpu := benchCPUStart()
		for b.Loop() {
			for i := range parsed {
				buf.Reset()
				if err := enc.Encode(&parsed[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		cpu.report(b)
	})
}

// benchCPU is the process's CPU time when a benchmark's loop began.
type benchCPU struct {
	t0 time.Duration
	ok bool
}

func benchCPUStart() benchCPU {
	t0, ok := benchProcessCPU()
	return benchCPU{t0, ok}
}

// report reports the CPU time per op since the loop began.
func (c benchCPU) report(b *testing.B) {
	t1, ok := benchProcessCPU()
	if c.ok && ok && b.N > 0 {
		b.ReportMetric(float64(t1-c.t0)/float64(b.N), "cpu-ns/op")
	}
}
