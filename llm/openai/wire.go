package openai

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model         string         `json:"model,omitempty"`
	Messages      []chatMessage  `json:"messages"`
	Temperature   *float64       `json:"temperature,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Stop          []string       `json:"stop,omitempty"`
	Tools         []chatTool     `json:"tools,omitempty"`
	ToolChoice    any            `json:"tool_choice,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is null for an assistant turn that only calls tools.
	Content    *string        `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// namedToolChoice is the tool_choice that forces one tool.
type namedToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// noParameters is the schema sent for a tool whose Parameters are nil.
var noParameters = json.RawMessage(`{"type":"object","properties":{}}`)

func newChatRequest(req llm.Request, stream bool) chatRequest {
	r := chatRequest{
		Model:       req.Model,
		Messages:    make([]chatMessage, 0, len(req.Messages)),
		Temperature: req.Temperature,
		MaxTokens:   max(req.MaxTokens, 0),
		Stop:        req.Stop,
	}
	for _, m := range req.Messages {
		r.Messages = append(r.Messages, newChatMessage(m))
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = noParameters
		}
		r.Tools = append(r.Tools, chatTool{Type: "function", Function: chatFunction{t.Name, t.Description, params}})
	}
	if len(r.Tools) > 0 {
		switch req.ToolChoice {
		case "":
		case "auto", "none", "required":
			r.ToolChoice = req.ToolChoice
		default:
			c := namedToolChoice{Type: "function"}
			c.Function.Name = req.ToolChoice
			r.ToolChoice = c
		}
	}
	if stream {
		r.Stream = true
		r.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	return r
}

// newChatMessage maps a turn to the wire. Raw and IsError are not sent: the
// provider's own format carries the calls, and a failed tool's Content
// already says it failed.
func newChatMessage(m ptk.Message) chatMessage {
	out := chatMessage{Role: string(m.Role)}
	if m.Role == ptk.RoleTool {
		out.ToolCallID = m.CallID
	}
	if m.Content != "" || len(m.Calls) == 0 {
		out.Content = &m.Content
	}
	for _, c := range m.Calls {
		tc := chatToolCall{ID: c.ID, Type: "function"}
		tc.Function.Name = c.Tool
		tc.Function.Arguments = string(c.Args)
		if len(c.Args) == 0 {
			tc.Function.Arguments = "{}"
		}
		out.ToolCalls = append(out.ToolCalls, tc)
	}
	return out
}

// chatResponse is a whole answer (its choices hold a Message) or one chunk
// of a stream (its choices hold a Delta). Either may instead carry an error.
type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message      chatReply `json:"message"`
		Delta        chatReply `json:"delta"`
		FinishReason string    `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
	// Error is set by servers that report a failure in a 200 answer or in
	// the middle of a stream (OpenRouter, vLLM); older vLLM sends the error
	// as the whole object, with Object "error".
	Error  json.RawMessage `json:"error"`
	Object string          `json:"object"`
}

func (r *chatResponse) failed() bool {
	return len(r.Error) > 0 && string(r.Error) != "null" || r.Object == "error"
}

type chatReply struct {
	Content text `json:"content"`
	// ReasoningContent is DeepSeek's and vLLM's name for the reasoning;
	// Reasoning is OpenRouter's and Ollama's.
	ReasoningContent text `json:"reasoning_content"`
	Reasoning        text `json:"reasoning"`
	ToolCalls        []struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string    `json:"name"`
			Arguments arguments `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func (r *chatReply) reasoning() string {
	if r.ReasoningContent != "" {
		return string(r.ReasoningContent)
	}
	return string(r.Reasoning)
}

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"` // DeepSeek
}

func (u *chatUsage) usage() ptk.Usage {
	out := ptk.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CacheReadTokens: u.PromptCacheHitTokens}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		out.CacheReadTokens = d.CachedTokens
	}
	return out
}

// response maps a whole answer that has at least one choice. A call
// without an ID gets "call_N" and one without arguments gets "{}", as
// [llm.Collector] does for a stream.
func (r *chatResponse) response() *llm.Response {
	c := &r.Choices[0]
	out := &llm.Response{
		Content:      string(c.Message.Content),
		Reasoning:    c.Message.reasoning(),
		FinishReason: c.FinishReason,
		Model:        r.Model,
	}
	for i, tc := range c.Message.ToolCalls {
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
		out.Usage = r.Usage.usage()
	}
	return out
}

// text is message content: a string, null, or (as some servers send it) an
// array of parts, of which the "text" ones are kept. Any other JSON value
// reads as no text.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case '"':
		var s string
		err := json.Unmarshal(b, &s)
		*t = text(s)
		return err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				sb.WriteString(p.Text)
			}
		}
		*t = text(sb.String())
	}
	return nil
}

// arguments are a call's arguments: the JSON text in a string, as the API
// defines them, or the JSON value itself, as some servers send it.
type arguments string

func (a *arguments) UnmarshalJSON(b []byte) error {
	switch {
	case b[0] == '"':
		var s string
		err := json.Unmarshal(b, &s)
		*a = arguments(s)
		return err
	case string(b) != "null":
		*a = arguments(b)
	}
	return nil
}
