package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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
			for b.Loop() {
				p.Parse(text)
			}
		})
		data := []byte(text)
		b.Run(fmt.Sprintf("stream1B/%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
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
