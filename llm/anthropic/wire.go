package anthropic

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic/wire"
)

// noParameters is the schema sent for a tool whose Parameters are nil.
var noParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// newRequest maps a request to the wire. System turns, wherever they are,
// become the top-level system prompt, joined by blank lines. Tool results
// are user turns, and consecutive turns of one role are merged into one
// message, since the API wants the roles to alternate. A turn with nothing
// to send (no text, no calls) is left out. Raw is not sent, as in
// llm/openai: the calls go as tool_use blocks.
func newRequest(req llm.Request, maxTokens int, stream bool) wire.Request {
	r := wire.Request{
		Model:         req.Model,
		MaxTokens:     maxTokens,
		Messages:      []wire.Message{},
		Temperature:   req.Temperature,
		StopSequences: req.Stop,
		Stream:        stream,
	}
	if req.MaxTokens > 0 {
		r.MaxTokens = req.MaxTokens
	}
	var system []string
	for _, m := range req.Messages {
		if m.Role == ptk.RoleSystem {
			if m.Content != "" {
				system = append(system, m.Content)
			}
			continue
		}
		role, blocks := "user", newBlocks(m)
		if m.Role == ptk.RoleAssistant {
			role = "assistant"
		}
		switch n := len(r.Messages); {
		case len(blocks) == 0:
		case n > 0 && r.Messages[n-1].Role == role:
			r.Messages[n-1].Content.Blocks = append(r.Messages[n-1].Content.Blocks, blocks...)
		default:
			r.Messages = append(r.Messages, wire.Message{Role: role, Content: wire.BlockContent(blocks...)})
		}
	}
	if len(system) > 0 {
		r.System = wire.TextContent(strings.Join(system, "\n\n"))
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = noParameters
		}
		r.Tools = append(r.Tools, wire.Tool{Name: t.Name, Description: t.Description, InputSchema: params})
	}
	if len(r.Tools) > 0 {
		switch req.ToolChoice {
		case "":
		case "auto", "none":
			r.ToolChoice = &wire.ToolChoice{Type: req.ToolChoice}
		case "required":
			r.ToolChoice = &wire.ToolChoice{Type: "any"}
		default:
			r.ToolChoice = &wire.ToolChoice{Type: "tool", Name: req.ToolChoice}
		}
	}
	return r
}

// newBlocks maps a turn to content blocks: a tool turn to its tool_result,
// any other to its text (unless blank, which the API rejects) and its
// calls.
func newBlocks(m ptk.Message) []wire.Block {
	if m.Role == ptk.RoleTool {
		b := wire.Block{Type: "tool_result", ToolUseID: m.CallID, IsError: m.IsError}
		if m.Content != "" {
			b.Content = wire.TextContent(m.Content)
		}
		return []wire.Block{b}
	}
	var out []wire.Block
	if strings.TrimSpace(m.Content) != "" {
		out = append(out, wire.Block{Type: "text", Text: m.Content})
	}
	for _, c := range m.Calls {
		out = append(out, wire.Block{Type: "tool_use", ID: c.ID, Name: c.Tool, Input: objectArgs(c.Args)})
	}
	return out
}

// objectArgs returns args if they are a JSON object, and {} otherwise: the
// API takes only an object as a tool_use's input, and arguments the model
// wrote may be anything.
func objectArgs(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return args
}

// usageOf maps the count to ptk's, whose PromptTokens include the cached
// tokens, as [llm.Price.Cost] expects.
func usageOf(u wire.Usage) ptk.Usage {
	return ptk.Usage{
		PromptTokens:     u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CompletionTokens: u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

// response maps a whole answer: the text blocks make Content, the thinking
// blocks Reasoning, the tool_use blocks Calls (their input as it came). A
// call without an ID gets "call_N" and one without input gets "{}", as
// [llm.Collector] does for a stream.
func response(r *wire.Response) *llm.Response {
	var text, reasoning strings.Builder
	out := &llm.Response{Usage: usageOf(r.Usage), FinishReason: r.Stop(), Model: r.Model}
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			reasoning.WriteString(b.Thinking)
		case "tool_use":
			id, args := b.ID, b.Input
			if id == "" {
				id = "call_" + strconv.Itoa(len(out.Calls)+1)
			}
			if s := strings.TrimSpace(string(args)); s == "" || s == "null" {
				args = json.RawMessage("{}")
			}
			out.Calls = append(out.Calls, ptk.Call{ID: id, Tool: b.Name, Args: args})
		}
	}
	out.Content, out.Reasoning = text.String(), reasoning.String()
	return out
}
