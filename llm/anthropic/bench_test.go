package anthropic

// A request's body built and written, as the gateway does for every call
// to an Anthropic upstream.
//
//	go test ./llm/anthropic -run '^$' -bench . -benchmem -count 6

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// BenchmarkMarshal: a coding agent's request, a 12 KB system prompt and
// twelve tools shaped like Claude Code's (descriptions of a kilobyte or
// two, draft 2020-12 schemas), with the strings new for each call as the
// gateway decodes them.
func BenchmarkMarshal(b *testing.B) {
	var tools []ptk.ToolInfo
	for i, name := range []string{"Task", "Bash", "Glob", "Grep", "LS", "Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "WebFetch", "TodoWrite"} {
		var d strings.Builder
		fmt.Fprintf(&d, "Use the %s tool when the task needs it.\n\nUsage:\n", name)
		for j := range 8 + i%5 {
			fmt.Fprintf(&d, "- Rule %d: the \"%s\" tool takes an absolute path, never a relative one; <important>read a file before you edit it</important> & keep the user's style.\n", j, name)
		}
		tools = append(tools, ptk.ToolInfo{Name: name, Description: d.String(), Parameters: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
			`"properties":{"file_path":{"type":"string","description":"The absolute path to the file"},"offset":{"type":"number"},"limit":{"type":"number"}},"required":["file_path"],"additionalProperties":false}`)})
	}
	var system strings.Builder
	for i := range 60 {
		fmt.Fprintf(&system, "%d. When you run a non-trivial bash command, explain what it does and why; use `rg` rather than \"grep\", and <example>user: 2 + 2\nassistant: 4</example> & so on.\n", i)
	}
	req := llm.Request{Model: "claude-sonnet-4-5", Tools: tools, Messages: []ptk.Message{
		{Role: ptk.RoleSystem, Content: system.String()},
		{Role: ptk.RoleUser, Content: "Read go.mod and tell me which Go version this module needs."},
	}}
	c := New("http://127.0.0.1")
	body, err := c.marshal(req, true)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := req
		r.Messages = []ptk.Message{req.Messages[0], req.Messages[1]}
		r.Messages[0].Content = strings.Clone(r.Messages[0].Content)
		if _, err := c.marshal(r, true); err != nil {
			b.Fatal(err)
		}
	}
}
