package openai

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/openai/wire"
)

// noParameters is the schema sent for a tool whose Parameters are nil.
var noParameters = json.RawMessage(`{"type":"object","properties":{}}`)

func newChatRequest(req llm.Request, stream bool) wire.Request {
	r := wire.Request{
		Model:       req.Model,
		Temperature: req.Temperature,
		Messages:    make([]wire.Message, 0, len(req.Messages)),
	}
	if n := req.MaxTokens; n > 0 {
		r.MaxTokens = &n
	}
	if len(req.Stop) > 0 {
		r.Stop, _ = json.Marshal(req.Stop)
	}
	for _, m := range req.Messages {
		r.Messages = append(r.Messages, newChatMessage(m))
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = noParameters
		}
		r.Tools = append(r.Tools, wire.Tool{Type: "function", Function: wire.Function{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	if len(r.Tools) > 0 {
		r.ToolChoice = wire.ToolChoiceOf(req.ToolChoice)
	}
	if stream {
		r.Stream = true
		r.StreamOptions = &wire.StreamOptions{IncludeUsage: true}
	}
	return r
}

// newChatMessage maps a turn to the wire. Raw and IsError are not sent: the
// provider's own format carries the calls, and a failed tool's Content
// already says it failed.
func newChatMessage(m ptk.Message) wire.Message {
	out := wire.Message{Role: string(m.Role)}
	if m.Role == ptk.RoleTool {
		out.ToolCallID = m.CallID
	}
	if m.Content != "" || len(m.Calls) == 0 {
		out.Content = wire.TextContent(m.Content)
	}
	for _, c := range m.Calls {
		tc := wire.ToolCall{ID: c.ID, Type: "function", Function: wire.FunctionCall{Name: c.Tool, Arguments: wire.Arguments(c.Args)}}
		if len(c.Args) == 0 {
			tc.Function.Arguments = "{}"
		}
		out.ToolCalls = append(out.ToolCalls, tc)
	}
	return out
}

// response maps a whole answer that has at least one choice. A call
// without an ID gets "call_N" and one without arguments gets "{}", as
// [llm.Collector] does for a stream.
func response(r *wire.Completion) *llm.Response {
	c := &r.Choices[0]
	out := &llm.Response{
		Content:      c.Message.Text(),
		Reasoning:    c.Message.ReasoningText(),
		FinishReason: c.Finish(),
		Model:        r.Model,
	}
	var calls []wire.ToolCall
	if c.Message != nil {
		calls = c.Message.ToolCalls
	}
	for i, tc := range calls {
		id, args := tc.ID, string(tc.Function.Arguments)
		if id == "" {
			id = "call_" + strconv.Itoa(i+1)
		}
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		out.Calls = append(out.Calls, ptk.Call{ID: id, Tool: tc.Function.Name, Args: json.RawMessage(args)})
	}
	if r.Usage != nil {
		out.Usage = r.Usage.Usage()
	}
	return out
}
