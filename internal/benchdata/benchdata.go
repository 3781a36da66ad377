// Package benchdata makes the model replies the parser's benchmarks read, so
// that protocol's benchmarks and the bench module (ptk beside Ollama's
// parser) measure the same bytes.
package benchdata

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// WriteFileReply is a Hermes/Qwen reply whose one write_file call carries
// about n bytes of Go source escaped as a JSON string: the shape of a coding
// agent's largest replies, and the one the README's parser tables measure.
func WriteFileReply(n int) string {
	arg, _ := json.Marshal(GoSource(n))
	return "I'll write the file.\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"main.go\", \"content\": " + string(arg) + "}}\n</tool_call>"
}

// GoSource returns about n bytes of Go-like source: tabs, quotes, line
// breaks, the characters JSON escapes.
func GoSource(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "func handle%d(w http.ResponseWriter, r *http.Request) {\n\tif r.Method != \"GET\" {\n\t\thttp.Error(w, \"method %d not allowed\", 405)\n\t\treturn\n\t}\n\tfmt.Fprintf(w, \"%%s\\n\", r.URL.Path)\n}\n\n", i, i)
	}
	return b.String()[:n]
}

// ProseReply is the README's prose-and-calls reply of about n bytes, the
// same for a given n every time: paragraphs of prose (with the parentheses,
// brackets, braces, inline code and angle brackets real prose has), Go code
// fences, and a tool call every kilobyte or so in PTK and Hermes form.
func ProseReply(n int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the parser reads what a model writes and finds the calls in it while the
rest is text for the user so it must be fast on prose which is most of a reply
and careful with every bracket brace and tag that could start a call`)
	var b strings.Builder
	call := 0
	for b.Len() < n {
		switch k := rng.IntN(10); {
		case k < 6:
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
		case k < 8:
			b.WriteString("```go\nfunc main() {\n\tm := map[string]int{\"a\": 1}\n\tfmt.Println(m[\"a\"], len(os.Args))\n}\n```\n\n")
		default:
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

// EventReads is a stream that gives one event per Read, as a server that
// flushes each: the events it holds are consumed as they are read.
type EventReads struct {
	Events [][]byte
	i      int
}

func (r *EventReads) Read(p []byte) (int, error) {
	if r.i == len(r.Events) {
		return 0, io.EOF
	}
	n := copy(p, r.Events[r.i])
	r.Events[r.i] = r.Events[r.i][n:]
	if len(r.Events[r.i]) == 0 {
		r.i++
	}
	return n, nil
}
