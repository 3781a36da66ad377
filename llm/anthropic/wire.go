package anthropic

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// messagesRequest is the body of POST /v1/messages.
type messagesRequest struct {
	Model         string      `json:"model,omitempty"`
	MaxTokens     int         `json:"max_tokens"`
	System        string      `json:"system,omitempty"`
	Messages      []message   `json:"messages"`
	Temperature   *float64    `json:"temperature,omitempty"`
	StopSequences []string    `json:"stop_sequences,omitempty"`
	Tools         []tool      `json:"tools,omitempty"`
	ToolChoice    *toolChoice `json:"tool_choice,omitempty"`
	Stream        bool        `json:"stream,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block: text, thinking, tool_use or tool_result. The
// request sends the first, third and fourth; the answer holds the first
// three (and others, which are ignored).
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type toolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// noParameters is the schema sent for a tool whose Parameters are nil.
var noParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// newRequest maps a request to the wire. System turns, wherever they are,
// become the top-level system prompt, joined by blank lines. Tool results
// are user turns, and consecutive turns of one role are merged into one
// message, since the API wants the roles to alternate. A turn with nothing
// to send (no text, no calls) is left out. Raw is not sent, as in
// llm/openai: the calls go as tool_use blocks.
func newRequest(req llm.Request, maxTokens int, stream bool) messagesRequest {
	r := messagesRequest{
		Model:         req.Model,
		MaxTokens:     maxTokens,
		Messages:      []message{},
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
			r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
		default:
			r.Messages = append(r.Messages, message{Role: role, Content: blocks})
		}
	}
	r.System = strings.Join(system, "\n\n")
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = noParameters
		}
		r.Tools = append(r.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: params})
	}
	if len(r.Tools) > 0 {
		switch req.ToolChoice {
		case "":
		case "auto", "none":
			r.ToolChoice = &toolChoice{Type: req.ToolChoice}
		case "required":
			r.ToolChoice = &toolChoice{Type: "any"}
		default:
			r.ToolChoice = &toolChoice{Type: "tool", Name: req.ToolChoice}
		}
	}
	return r
}

// newBlocks maps a turn to content blocks: a tool turn to its tool_result,
// any other to its text (unless blank, which the API rejects) and its
// calls.
func newBlocks(m ptk.Message) []block {
	if m.Role == ptk.RoleTool {
		return []block{{Type: "tool_result", ToolUseID: m.CallID, Content: m.Content, IsError: m.IsError}}
	}
	var out []block
	if strings.TrimSpace(m.Content) != "" {
		out = append(out, block{Type: "text", Text: m.Content})
	}
	for _, c := range m.Calls {
		out = append(out, block{Type: "tool_use", ID: c.ID, Name: c.Tool, Input: objectArgs(c.Args)})
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

// messagesResponse is a whole answer, or, in a 200 answer from a server
// that reports failures that way, an error ("type": "error").
type messagesResponse struct {
	Type       string    `json:"type"`
	Model      string    `json:"model"`
	Content    []block   `json:"content"`
	StopReason string    `json:"stop_reason"`
	Usage      apiUsage  `json:"usage"`
	Error      *apiError `json:"error"`
}

type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// apiUsage is the API's token count. Unlike OpenAI's, input_tokens leaves
// out the tokens read from or written to the prompt cache.
type apiUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// usage maps the count to ptk's, whose PromptTokens include the cached
// tokens, as [llm.Price.Cost] expects.
func (u apiUsage) usage() ptk.Usage {
	return ptk.Usage{
		PromptTokens:     u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CompletionTokens: u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

// merge takes the counts a later event of a stream reports. A message_delta's
// counts are cumulative; it may repeat the input counts, or leave them out.
func (u *apiUsage) merge(v apiUsage) {
	set := func(to *int, from int) {
		if from > 0 {
			*to = from
		}
	}
	set(&u.InputTokens, v.InputTokens)
	set(&u.OutputTokens, v.OutputTokens)
	set(&u.CacheCreationInputTokens, v.CacheCreationInputTokens)
	set(&u.CacheReadInputTokens, v.CacheReadInputTokens)
}

// response maps a whole answer: the text blocks make Content, the thinking
// blocks Reasoning, the tool_use blocks Calls (their input as it came). A
// call without an ID gets "call_N" and one without input gets "{}", as
// [llm.Collector] does for a stream.
func (r *messagesResponse) response() *llm.Response {
	var text, reasoning strings.Builder
	out := &llm.Response{Usage: r.Usage.usage(), FinishReason: r.StopReason, Model: r.Model}
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

// streamEvent is one event of a stream; which fields are set depends on
// its type.
type streamEvent struct {
	Type         string           `json:"type"`
	Message      messagesResponse `json:"message"`       // message_start
	Index        int              `json:"index"`         // content_block_*
	ContentBlock block            `json:"content_block"` // content_block_start
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"` // message_delta
	} `json:"delta"`
	Usage *apiUsage `json:"usage"` // message_delta
}
