package openai

// The upstream side of a request through the gateway, on one goroutine:
// the request's body built and written, and a streamed answer read.
//
//	go test ./llm/openai -run '^$' -bench . -benchmem -count 6

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/benchdata"
	"github.com/ptkit/ptk/llm"
)

// benchTools are twelve tools shaped like Claude Code's (Read, Edit,
// Bash...): descriptions of a kilobyte or two, with lines, quotes and
// <tags>, and JSON Schemas of draft 2020-12 with a few properties each.
func benchTools() []ptk.ToolInfo {
	var tools []ptk.ToolInfo
	for i, name := range []string{"Task", "Bash", "Glob", "Grep", "LS", "Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "WebFetch", "TodoWrite"} {
		var d strings.Builder
		fmt.Fprintf(&d, "Use the %s tool when the task needs it.\n\nUsage:\n", name)
		for j := range 8 + i%5 {
			fmt.Fprintf(&d, "- Rule %d: the \"%s\" tool takes an absolute path, never a relative one; <important>read a file before you edit it</important> & keep the user's style. Results longer than 30000 characters are cut.\n", j, name)
		}
		tools = append(tools, ptk.ToolInfo{Name: name, Description: d.String(), Parameters: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
			`"properties":{"file_path":{"type":"string","description":"The absolute path to the file"},"offset":{"type":"number","description":"The line number to start reading from"},` +
			`"limit":{"type":"number","description":"The number of lines to read"},"replace_all":{"type":"boolean","default":false}},"required":["file_path"],"additionalProperties":false}`)})
	}
	return tools
}

// benchSystem is a system prompt of about 12 KB, as a coding agent sends.
func benchSystem() string {
	var b strings.Builder
	b.WriteString("You are an interactive CLI tool that helps users with software engineering tasks.\n\n# Tone and style\n")
	for i := range 60 {
		fmt.Fprintf(&b, "%d. When you run a non-trivial bash command, explain what it does and why; use `rg` rather than \"grep\", and <example>user: 2 + 2\nassistant: 4</example> & so on.\n", i)
	}
	return b.String()
}

func BenchmarkMarshal(b *testing.B) {
	tools, system := benchTools(), benchSystem()
	native := llm.Request{Model: "bench-upstream", Tools: tools, MaxTokens: 32000, Messages: []ptk.Message{
		{Role: ptk.RoleSystem, Content: system},
		{Role: ptk.RoleUser, Content: "Read go.mod and tell me which Go version this module needs."},
	}}
	// In PTK mode the tools are written in the system prompt instead.
	var prompt strings.Builder
	prompt.WriteString(system)
	for _, t := range tools {
		fmt.Fprintf(&prompt, "\n## %s\n%s\nParameters: %s\n", t.Name, t.Description, t.Parameters)
	}
	ptkMode := llm.Request{Model: "bench-upstream", MaxTokens: 32000, Messages: []ptk.Message{
		{Role: ptk.RoleSystem, Content: prompt.String()},
		{Role: ptk.RoleUser, Content: "Read go.mod and tell me which Go version this module needs."},
	}}
	for _, c := range []struct {
		name string
		req  llm.Request
	}{{"native-12-tools", native}, {"ptk", ptkMode}} {
		b.Run(c.name, func(b *testing.B) {
			client := New("http://127.0.0.1")
			body, err := benchMarshal(client, c.req)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				// The request is decoded anew for each call through the
				// gateway: its strings are new each time.
				req := c.req
				req.Messages = []ptk.Message{req.Messages[0], req.Messages[1]}
				req.Messages[0].Content = strings.Clone(req.Messages[0].Content)
				if _, err := benchMarshal(client, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchEvents is a streamed answer as the gateway's benchmark upstream
// sends one: the role, a reply in pieces of 5 bytes, the finish reason,
// the usage and [DONE] — 33 events — in the key order OpenAI and vLLM
// write.
func benchEvents() [][]byte {
	const reply = "I'll check the current weather in Paris for you.\n\n<PTK_CALL>\n{\"tool\": \"get_weather\", \"args\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</PTK_CALL>"
	head := `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"bench-upstream","choices":[`
	var evs [][]byte
	add := func(choice string) { evs = append(evs, []byte(head+choice+"]}\n\n")) }
	add(`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`)
	for i := 0; i < len(reply); i += 5 {
		piece, _ := json.Marshal(reply[i:min(i+5, len(reply))])
		add(`{"index":0,"delta":{"content":` + string(piece) + `},"logprobs":null,"finish_reason":null}`)
	}
	add(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}`)
	evs = append(evs, []byte(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"bench-upstream","choices":[],"usage":{"prompt_tokens":912,"completion_tokens":41,"total_tokens":953}}`+"\n\n"))
	return append(evs, []byte("data: [DONE]\n\n"))
}

// BenchmarkReadStream reads a 33-event streamed answer into chunks (per
// op: the whole answer).
func BenchmarkReadStream(b *testing.B) {
	evs := benchEvents()
	if len(evs) != 33 {
		b.Fatalf("%d events, want 33", len(evs))
	}
	b.ReportAllocs()
	reads := make([][]byte, len(evs))
	for b.Loop() {
		copy(reads, evs)
		n := 0
		if err := readStream(&benchdata.EventReads{Events: reads}, func(llm.Chunk) bool { n++; return true }); err != nil || n != 32 {
			b.Fatalf("%d chunks, %v", n, err)
		}
	}
}
