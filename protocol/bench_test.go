package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/benchdata"
)

// benchReply is the README's prose-and-calls reply of about n bytes.
func benchReply(n int) string { return benchdata.ProseReply(n) }

var benchSizes = []int{64 << 10, 256 << 10, 1 << 20}

func BenchmarkParse(b *testing.B) {
	p, err := NewParser(testTools)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchSizes {
		text := benchReply(n)
		b.Run(fmt.Sprintf("whole/%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				p.Parse(text)
			}
		})
		data := []byte(text)
		b.Run(fmt.Sprintf("stream1B/%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			defer reportCPU(b)()
			events := 0
			for b.Loop() {
				s := p.NewStream(func(Event) { events++ })
				for i := range data {
					s.Write(data[i : i+1])
				}
				s.Finish()
			}
		})
	}
}

// writeFileReply is a reply whose one write_file call carries about n bytes
// of Go source, escaped as a JSON string.
func writeFileReply(n int) string { return benchdata.WriteFileReply(n) }

var writeFileTools = []ptk.ToolInfo{{Name: "write_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)}}

// BenchmarkParseWriteFile parses writeFileReply whole and streamed in
// writes of 1 to 64 bytes, as APIs stream deltas.
func BenchmarkParseWriteFile(b *testing.B) {
	p, err := NewParser(writeFileTools)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{4 << 10, 64 << 10, 1 << 20} {
		text := writeFileReply(n)
		b.Run(fmt.Sprintf("whole/%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				p.Parse(text)
			}
		})
		if n < 64<<10 {
			continue
		}
		for _, w := range []int{1, 2, 3, 4, 6, 16, 64} {
			b.Run(fmt.Sprintf("stream%dB/%dKiB", w, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					s := p.NewStream(nil)
					for i := 0; i < len(text); i += w {
						s.WriteString(text[i:min(i+w, len(text))])
					}
					s.Finish()
				}
			})
		}
	}
}

// BenchmarkParseReasoning reads a 1 MiB reasoning block full of '<' and
// '[' (HTML, lists, comparisons), whole and streamed 16 bytes at a time: a
// reasoning block looks for its closer and for call openers at those bytes.
func BenchmarkParseReasoning(b *testing.B) {
	text := "<think>" + strings.Repeat("The <b>list</b> is [1, 2] and <i>x</i> < y; see [ref]. ", 1<<20/56) + "</think>Done."
	p, err := NewParser(testTools)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if p.Parse(text).Text != "Done." {
				b.Fatal("misread")
			}
		}
	})
	b.Run("stream16B", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			s := p.NewStream(nil)
			for i := 0; i < len(text); i += 16 {
				s.WriteString(text[i:min(i+16, len(text))])
			}
			if s.Finish().Text != "Done." {
				b.Fatal("misread")
			}
		}
	})
}

// The short replies a gateway or an agent reads on every turn: a sentence
// and one call in the text protocol (the gateway benchmark's reply), a
// sentence alone, and a sentence and one Hermes-style call.
var shortReplies = []struct{ name, text string }{
	{"ptk-call", "I'll check the current weather in Paris for you.\n\n<PTK_CALL>\n{\"tool\": \"get_weather\", \"args\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</PTK_CALL>"},
	{"prose", "It is 18 °C with light rain in Paris right now: take a rain jacket if you bike."},
	{"hermes-call", "I'll check the current weather in Paris for you.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>"},
}

// pieces cuts s into pieces of n bytes (whole runes), as a model's tokens
// come in a stream's deltas.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i := min(n, len(s))
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// BenchmarkParseReply reads each short reply whole (Parse) and streamed in
// pieces of 5 bytes (27 for the PTK call, as the gateway's upstream sends
// it), with an emit function, as the turn and the gateway read it.
func BenchmarkParseReply(b *testing.B) {
	p, err := NewParser(testTools)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range shortReplies {
		want := p.Parse(r.text)
		b.Run("whole/"+r.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				p.Parse(r.text)
			}
		})
		ps := pieces(r.text, 5)
		b.Run(fmt.Sprintf("stream%d/%s", len(ps), r.name), func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			events := 0
			for b.Loop() {
				s := p.NewStream(func(Event) { events++ })
				for _, c := range ps {
					s.WriteString(c)
				}
				if got := s.Finish(); len(got.Calls) != len(want.Calls) || got.Text != want.Text {
					b.Fatalf("stream read %+v, whole %+v", got, want)
				}
			}
		})
		// Each piece read as it comes, as for a model slower than the
		// turn's flush interval.
		b.Run(fmt.Sprintf("flushed%d/%s", len(ps), r.name), func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			events := 0
			for b.Loop() {
				s := p.NewStream(func(Event) { events++ })
				for _, c := range ps {
					s.WriteString(c)
					s.Flush()
				}
				if got := s.Finish(); len(got.Calls) != len(want.Calls) || got.Text != want.Text {
					b.Fatalf("stream read %+v, whole %+v", got, want)
				}
			}
		})
	}
}

// reportCPU starts measuring the process's CPU time, and returns the
// function that reports it per iteration as cpu-ns/op: unlike the time per
// iteration, other processes taking the cores do not change it (the
// collector's work is in it).
func reportCPU(b *testing.B) func() {
	t0, ok := processCPU()
	return func() {
		if t1, ok1 := processCPU(); ok && ok1 && b.N > 0 {
			b.ReportMetric(float64(t1-t0)/float64(b.N), "cpu-ns/op")
		}
	}
}
