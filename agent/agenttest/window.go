package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// WindowModel is a scripted model with a small context window, for long
// runs that must be compacted: it counts every request with its own
// tokenizer (not ptk's estimate: a token per 3 bytes, 4 per message), and
// refuses one that does not fit its window with the context-length error
// OpenAI and vLLM give. For Turns-1 calls it calls a tool, read_file and
// edit_file in turn on a new file, then answers; a request for compaction
// notes (IsNotes) it answers with notes.
//
// It tells its window (llm.Windower) unless Hidden. Use one per run.
type WindowModel struct {
	// Window is the context window it has and tells, in tokens.
	Window int
	// Turns is the model calls of the run, the last one the answer.
	Turns int
	// Native makes its calls native ones; otherwise they are written in
	// the PTK protocol.
	Native bool
	// IsNotes reports a request for compaction notes.
	IsNotes func(llm.Request) bool
	// Hidden keeps the window to itself: an agent learns it from its
	// errors, or is told.
	Hidden bool
	// Keep keeps every request (Requests).
	Keep bool

	mu       sync.Mutex
	turn     int
	notes    int
	max      int
	over     int
	requests []Request
}

// Request is a request the model was sent, as it counted it.
type Request struct {
	Req    llm.Request
	Tokens int
	Notes  bool
	// Turn is the turn it answered (from 0), for a request that is not
	// for notes.
	Turn int
}

var (
	_ llm.Model    = (*WindowModel)(nil)
	_ llm.Windower = (*WindowModel)(nil)
)

// ContextWindow tells its window, unless Hidden.
func (m *WindowModel) ContextWindow(context.Context, string) (llm.Window, error) {
	if m.Hidden {
		return llm.Window{}, nil
	}
	return llm.Window{Tokens: m.Window, Source: "the scripted model"}, nil
}

// Count is the model's own count of a request's tokens.
func Count(req llm.Request) int {
	n := 0
	for _, msg := range req.Messages {
		b := len(msg.Content)
		for _, c := range msg.Calls {
			b += len(c.Tool) + len(c.Args)
		}
		n += 4 + (b+2)/3
	}
	for _, t := range req.Tools {
		n += 8 + (len(t.Name)+len(t.Description)+len(t.Parameters)+2)/3
	}
	return n
}

// Generate answers the run's next call, or a request for notes.
func (m *WindowModel) Generate(_ context.Context, req llm.Request) (*llm.Response, error) {
	tokens := Count(req)
	notes := m.IsNotes != nil && m.IsNotes(req)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.max = max(m.max, tokens)
	if m.Keep {
		m.requests = append(m.requests, Request{Req: req, Tokens: tokens, Notes: notes, Turn: m.turn})
	}
	if tokens > m.Window {
		m.over++
		return nil, &llm.Error{Kind: llm.ErrContextLength, Status: 400,
			Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens. Please reduce the length of the messages.", m.Window, tokens)}
	}
	u := ptk.Usage{PromptTokens: tokens, CompletionTokens: 40}
	if notes {
		m.notes++
		return &llm.Response{Content: "Notes " + strconv.Itoa(m.notes) + ": the files were read and edited one by one; go on with the next one.", Usage: u}, nil
	}
	i := m.turn
	m.turn++
	if i >= m.Turns-1 {
		return &llm.Response{Content: "Done: every file was read or edited.", Usage: u}, nil
	}
	tool := "read_file"
	if i%2 == 1 {
		tool = "edit_file"
	}
	args := `{"path": "src/file_` + strconv.Itoa(i) + `.go"}`
	if m.Native {
		return &llm.Response{Calls: []ptk.Call{{ID: "c" + strconv.Itoa(i), Tool: tool, Args: json.RawMessage(args)}}, Usage: u}, nil
	}
	return &llm.Response{Content: "Next file.\n<PTK_CALL>\n{\"tool\": \"" + tool + "\", \"args\": " + args + "}\n</PTK_CALL>", Usage: u}, nil
}

// Max is the largest request the model was sent, in its tokens; Over
// counts the requests it refused as too long; Notes the notes it wrote.
func (m *WindowModel) Max() (largest, over, notes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.max, m.over, m.notes
}

// Requests returns the requests kept (Keep).
func (m *WindowModel) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.requests...)
}

// FileTools are read_file (read-only) and edit_file, on a file named by
// "path": read_file returns about resultBytes of it, edit_file says it
// changed it.
func FileTools(resultBytes int) []ptk.Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File path relative to the workspace."}},"required":["path"]}`)
	line := "\tx := compute(x) // one more line of the file\n"
	body := strings.Repeat(line, resultBytes/len(line)+1)[:resultBytes]
	read := ptk.NewTool(ptk.ToolInfo{Name: "read_file", Description: "Reads a file.", Parameters: schema, ReadOnly: true},
		func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
			return ptk.Result{Content: "package main\n" + body}, nil
		})
	edit := ptk.NewTool(ptk.ToolInfo{Name: "edit_file", Description: "Changes a file.", Parameters: schema},
		func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
			return ptk.Result{Content: "Changed the file: one line replaced."}, nil
		})
	return []ptk.Tool{read, edit}
}
