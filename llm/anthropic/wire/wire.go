// Package wire holds the JSON types of Anthropic's Messages API, as both
// sides of it use them: llm/anthropic writes requests and reads answers and
// stream events; the gateway reads requests and writes answers, events and
// errors. One set of types, so the client and the server cannot drift
// apart.
//
// The types read what clients send in the wild, not only the documented
// minimum: a system prompt and a message's content as a string or an array
// of blocks; a tool_result's content as a string or blocks; tools of
// Anthropic's own types (web_search_20250305, bash_20250124), which have no
// input_schema; cache_control and defer_loading on tools; system messages
// inside messages, which Claude Code sends. A field a side does not know is
// ignored. What they write is what the API writes: a block has exactly the
// fields of its type (a text block its text, even when empty), and the
// events of a stream the fields each event carries.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// Request is the body of POST /v1/messages (and of
// /v1/messages/count_tokens, which ignores max_tokens and stream).
type Request struct {
	Model     string `json:"model,omitempty"`
	MaxTokens int    `json:"max_tokens"`
	// System is the system prompt: a string, or an array of text blocks.
	System        *Content        `json:"system,omitempty"`
	Messages      []Message       `json:"messages"`
	Tools         []Tool          `json:"tools,omitempty"`
	ToolChoice    *ToolChoice     `json:"tool_choice,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	TopK          *int            `json:"top_k,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	Thinking      *Thinking       `json:"thinking,omitempty"`
}

// Message is one message of a request's conversation: role "user" or
// "assistant" (and "system", which Claude Code sends after the first user
// message).
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content is a message's content, a system prompt or a tool_result's
// content: a string (Text), or an array of blocks (Blocks, not nil). It
// writes itself as the one it holds.
type Content struct {
	Text   string
	Blocks []Block
}

// TextContent returns content that is the text s.
func TextContent(s string) *Content { return &Content{Text: s} }

// BlockContent returns content that is the blocks bs (an empty array when
// there are none).
func BlockContent(bs ...Block) Content {
	if bs == nil {
		bs = []Block{}
	}
	return Content{Blocks: bs}
}

// MarshalJSON writes the content as a string, or as its array of blocks.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Blocks != nil {
		return json.Marshal(c.Blocks)
	}
	return json.Marshal(c.Text)
}

// errContent is the error of content that is neither a string nor an
// array of blocks.
var errContent = errors.New("content must be a string or an array of content blocks")

// UnmarshalJSON reads a string or an array of blocks; null is no content.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	switch b[0] {
	case '"':
		return json.Unmarshal(b, &c.Text)
	case '[':
		if err := json.Unmarshal(b, &c.Blocks); err != nil {
			return err
		}
		if c.Blocks == nil {
			c.Blocks = []Block{}
		}
		return nil
	case 'n':
		return nil
	}
	return errContent
}

// Block is a content block. Which fields it has depends on its Type:
//
//	text               Text
//	thinking           Thinking, Signature
//	redacted_thinking  Data
//	tool_use           ID, Name, Input
//	tool_result        ToolUseID, Content, IsError
//	image, document    Source
//	tool_reference     ToolName (in a tool_result: a deferred tool found)
//
// Blocks of other types (server_tool_use, web_search_tool_result...) keep
// only what these fields read of them.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *Content        `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Source    json.RawMessage `json:"source,omitempty"`
	ToolName  string          `json:"tool_name,omitempty"`
	// CacheControl is read and written back as it came; the gateway
	// ignores it.
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// block is Block without its methods, for the default encoding.
type block Block

// emptyInput is the input of a tool_use that has none.
var emptyInput = json.RawMessage("{}")

// MarshalJSON writes the fields of the block's type, as the API does: a
// text block's text and a thinking block's thinking and signature even when
// empty (a stream's content_block_start carries them empty, and clients
// append the deltas to them), a tool_use's input as {} when it has none.
func (b Block) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case "text":
		return json.Marshal(struct {
			Type         string          `json:"type"`
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control,omitempty"`
		}{b.Type, b.Text, b.CacheControl})
	case "thinking":
		return json.Marshal(struct {
			Type      string `json:"type"`
			Thinking  string `json:"thinking"`
			Signature string `json:"signature"`
		}{b.Type, b.Thinking, b.Signature})
	case "tool_use":
		input := b.Input
		if len(bytes.TrimSpace(input)) == 0 {
			input = emptyInput
		}
		return json.Marshal(struct {
			Type         string          `json:"type"`
			ID           string          `json:"id"`
			Name         string          `json:"name"`
			Input        json.RawMessage `json:"input"`
			CacheControl json.RawMessage `json:"cache_control,omitempty"`
		}{b.Type, b.ID, b.Name, input, b.CacheControl})
	}
	return json.Marshal(block(b))
}

// Tool is a tool a request declares: a custom tool (Type "custom" or
// empty) with its InputSchema, or one of Anthropic's own tools, whose Type
// names its version (web_search_20250305, bash_20250124) and which has no
// schema.
type Tool struct {
	Type        string          `json:"type,omitempty"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// DeferLoading marks a tool the model is not shown until a tool
	// search finds it (a tool_reference block naming it).
	DeferLoading bool            `json:"defer_loading,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// Custom reports whether the tool is one the client runs, with a schema:
// not one of Anthropic's own.
func (t *Tool) Custom() bool { return t.Type == "" || t.Type == "custom" }

// ToolChoice is a request's tool_choice: Type "auto", "any", "tool" (Name
// set) or "none".
type ToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	// DisableParallelToolUse asks for one call at most.
	DisableParallelToolUse bool `json:"disable_parallel_tool_use,omitempty"`
}

// Thinking is a request's thinking: Type "enabled" (with BudgetTokens),
// "adaptive" or "disabled".
type Thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	// Display is "summarized" or "omitted" (Claude Code asks for the latter).
	Display string `json:"display,omitempty"`
}

// On reports whether the request asks for the model's thinking.
func (t *Thinking) On() bool { return t != nil && (t.Type == "enabled" || t.Type == "adaptive") }

// Response is a whole answer (Type "message"), the message a stream's
// message_start carries, or, from servers that report a failure in a 200
// answer, an error (Type "error").
type Response struct {
	ID      string  `json:"id"`
	Type    string  `json:"type"`
	Role    string  `json:"role"`
	Model   string  `json:"model"`
	Content []Block `json:"content"`
	// StopReason is end_turn, max_tokens, stop_sequence, tool_use,
	// pause_turn or refusal; null (nil) in message_start.
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        Usage   `json:"usage"`
	Error        *Error  `json:"error,omitempty"`
}

// Stop returns the stop reason, "" when there is none.
func (r *Response) Stop() string {
	if r.StopReason == nil {
		return ""
	}
	return *r.StopReason
}

// Usage is the API's token count. Unlike OpenAI's, InputTokens leaves out
// the tokens read from or written to the prompt cache.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// Merge takes the counts a later event of a stream reports. A
// message_delta's counts are cumulative; it may repeat the input counts,
// or leave them out.
func (u *Usage) Merge(v Usage) {
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

// Event is one event of a stream, as a client reads it; which fields are
// set depends on its Type: message_start (Message), content_block_start
// (Index, ContentBlock), content_block_delta (Index, Delta),
// content_block_stop (Index), message_delta (Delta's StopReason and
// StopSequence, Usage), message_stop, ping, error (Error). A server writes
// the events with the types below, which have exactly each event's fields.
type Event struct {
	Type         string   `json:"type"`
	Message      Response `json:"message"`
	Index        int      `json:"index"`
	ContentBlock Block    `json:"content_block"`
	Delta        struct {
		Type         string `json:"type"`
		Text         string `json:"text"`
		Thinking     string `json:"thinking"`
		Signature    string `json:"signature"`
		PartialJSON  string `json:"partial_json"`
		StopReason   string `json:"stop_reason"`
		StopSequence string `json:"stop_sequence"`
	} `json:"delta"`
	Usage *Usage `json:"usage"`
	Error *Error `json:"error"`
}

// The events a server writes, each with its own fields.
type (
	// MessageStart begins a stream: the message with no content yet.
	MessageStart struct {
		Type    string    `json:"type"` // message_start
		Message *Response `json:"message"`
	}
	// BlockStart begins the content block at Index.
	BlockStart struct {
		Type         string `json:"type"` // content_block_start
		Index        int    `json:"index"`
		ContentBlock Block  `json:"content_block"`
	}
	// BlockDelta adds to the content block at Index.
	BlockDelta struct {
		Type  string `json:"type"` // content_block_delta
		Index int    `json:"index"`
		Delta Delta  `json:"delta"`
	}
	// BlockStop ends the content block at Index.
	BlockStop struct {
		Type  string `json:"type"` // content_block_stop
		Index int    `json:"index"`
	}
	// MessageDelta says why the message stopped, and its usage.
	MessageDelta struct {
		Type  string    `json:"type"` // message_delta
		Delta StopDelta `json:"delta"`
		Usage Usage     `json:"usage"`
	}
)

// Delta is what a content_block_delta adds: Type text_delta (Text),
// thinking_delta (Thinking), signature_delta (Signature) or
// input_json_delta (PartialJSON). It writes only its type's field.
type Delta struct {
	Type, Text, Thinking, Signature, PartialJSON string
}

// MarshalJSON writes the delta's type and its one field.
func (d Delta) MarshalJSON() ([]byte, error) {
	key, val := "text", d.Text
	switch d.Type {
	case "thinking_delta":
		key, val = "thinking", d.Thinking
	case "signature_delta":
		key, val = "signature", d.Signature
	case "input_json_delta":
		key, val = "partial_json", d.PartialJSON
	}
	b := make([]byte, 0, len(val)+len(d.Type)+32)
	b = append(b, `{"type":`...)
	b = strconv.AppendQuote(b, d.Type)
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	v, err := json.Marshal(val)
	if err != nil {
		return nil, err
	}
	return append(append(b, v...), '}'), nil
}

// StopDelta is a message_delta's delta: the stop reason and the stop
// sequence met (null when none).
type StopDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

// The constant events.
var (
	MessageStop = []byte(`{"type":"message_stop"}`)
	Ping        = []byte(`{"type":"ping"}`)
)

// ErrorBody is the body of an error answer, and the data of a stream's
// error event.
type ErrorBody struct {
	Type  string `json:"type"` // "error"
	Error Error  `json:"error"`
}

// Error says what went wrong: its Type is one of the API's error types
// (ErrorType).
type Error struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// NewError returns the error body for a status and message.
func NewError(status int, msg string) ErrorBody {
	return ErrorBody{Type: "error", Error: Error{Type: ErrorType(status), Message: msg}}
}

// statusOf is the HTTP status the API answers with for each error type.
var statusOf = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// StatusOf is the HTTP status the API gives an error type; 0 for a type
// it does not know.
func StatusOf(typ string) int { return statusOf[typ] }

// ErrorType is the error type of an HTTP status: the API's own for the
// statuses it uses, invalid_request_error for another 4xx and api_error
// for another 5xx.
func ErrorType(status int) string {
	switch status {
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529, 503:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// CountTokens is the answer of POST /v1/messages/count_tokens.
type CountTokens struct {
	InputTokens int `json:"input_tokens"`
}

// Model is one model of GET /v1/models.
type Model struct {
	Type        string `json:"type"` // "model"
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	// CreatedAt is an RFC 3339 time.
	CreatedAt string `json:"created_at"`
}

// ModelList is the answer of GET /v1/models.
type ModelList struct {
	Data    []Model `json:"data"`
	HasMore bool    `json:"has_more"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
}
