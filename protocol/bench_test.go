package protocol

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
)

// benchReply builds a model reply of about n bytes: paragraphs of prose (with
// the parentheses, brackets, braces, inline code and angle brackets real
// prose has), Go code fences, and a tool call every few kilobytes in PTK and
// Hermes form, some with a file's content as an argument.
func benchReply(n int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the parser reads what a model writes and finds the calls in it while the
rest is text for the user so it must be fast on prose which is most of a reply
and careful with every bracket brace and tag that could start a call`)
	var b strings.Builder
	call := 0
	for b.Len() < n {
		switch k := rng.IntN(10); {
		case k < 6: // prose paragraph
			for s := 0; s < 4+rng.IntN(4); s++ {
				for w := 0; w < 8+rng.IntN(12); w++ {
					if w > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(words[rng.IntN(len(words))])
					switch rng.IntN(40) {
					case 0:
						b.WriteString(" (see above)")
					case 1:
						b.WriteString(" [1]")
					case 2:
						b.WriteString(" `go test`")
					case 3:
						b.WriteString(" a < b > c")
					case 4:
						b.WriteString(" {x}")
					}
				}
				b.WriteString(". ")
			}
			b.WriteString("\n\n")
		case k < 8: // code fence
			b.WriteString("```go\nfunc main() {\n\tm := map[string]int{\"a\": 1}\n\tfmt.Println(m[\"a\"], len(os.Args))\n}\n```\n\n")
		default: // a call
			call++
			if call%2 == 0 {
				fmt.Fprintf(&b, "<PTK_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"src/file%d.go\", \"offset\": %d}, \"reasoning\": \"need it\"}\n</PTK_CALL>\n\n", call, call)
			} else {
				fmt.Fprintf(&b, "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"go test ./... -run Test%d && echo \\\"done\\\"\"}}\n</tool_call>\n\n", call)
			}
		}
	}
	return b.String()
}

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
// of Go source, escaped as a JSON string: the shape of a coding agent's
// largest replies, and the one the README's parser table measures.
func writeFileReply(n int) string {
	src := goSource(n)
	arg, _ := json.Marshal(src)
	return "I'll write the file.\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"main.go\", \"content\": " + string(arg) + "}}\n</tool_call>"
}

// goSource returns about n bytes of Go-like source: tabs, quotes, line
// breaks, the characters JSON escapes.
func goSource(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "func handle%d(w http.ResponseWriter, r *http.Request) {\n\tif r.Method != \"GET\" {\n\t\thttp.Error(w, \"method %d not allowed\", 405)\n\t\treturn\n\t}\n\tfmt.Fprintf(w, \"%%s\\n\", r.URL.Path)\n}\n\n", i, i)
	}
	return b.String()[:n]
}

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
