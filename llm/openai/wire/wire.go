// Package wire holds the JSON types of OpenAI's Chat Completions API, as
// both sides of it use them: llm/openai writes requests and reads answers
// and stream chunks; the gateway reads requests and writes answers, chunks
// and errors. One set of types, so the client and the server cannot drift
// apart.
//
// The types read what servers and clients send in the wild, not only what
// OpenAI documents: message content as a string, null or an array of parts;
// a call's arguments as a JSON string or as the JSON value itself; the
// reasoning under DeepSeek's and vLLM's name (reasoning_content) or
// OpenRouter's and Ollama's (reasoning); DeepSeek's cache counts. What they
// write is what OpenAI writes: fields a side does not set are left out,
// except the ones OpenAI's own answers always carry (content, refusal,
// finish_reason and logprobs, null when empty).
//
// Request-side and answer-side types are separate where the API's shapes
// differ: a request's Message has content parts, an answer's Reply has
// text; a stream chunk carries a Delta.
package wire

import (
	"cmp"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
)

// Request is the body of POST /chat/completions. A client sets what it
// needs; a server reads what it needs and may keep the body itself to pass
// it on as it came.
type Request struct {
	Model       string    `json:"model,omitempty"`
	Messages    []Message `json:"messages"`
	Temperature *float64  `json:"temperature,omitempty"`
	MaxTokens   *int      `json:"max_tokens,omitempty"`
	// Stop is a string or an array of strings (see StopOf).
	Stop  json.RawMessage `json:"stop,omitempty"`
	Tools []Tool          `json:"tools,omitempty"`
	// ToolChoice is "auto", "none", "required" or an object naming a
	// function (see NamedToolChoice).
	ToolChoice          json.RawMessage `json:"tool_choice,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *StreamOptions  `json:"stream_options,omitempty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"`
	N                   *int            `json:"n,omitempty"`
}

// StreamOptions are a streamed request's options.
type StreamOptions struct {
	// IncludeUsage asks for a last chunk, with no choices, that holds the
	// usage.
	IncludeUsage bool `json:"include_usage"`
}

// Message is one message of a request's conversation.
type Message struct {
	Role string `json:"role"`
	// Content is null (nil) for an assistant turn that only calls tools.
	Content    *Content   `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Content is a request message's content: a string (Text), or an array of
// content parts (Parts, not nil). It writes itself as the one it holds. It
// reads any JSON value: one that is neither a string nor an array of parts
// is an error that AsText reports, so that a server can say which message
// holds it.
type Content struct {
	Text  string
	Parts []ContentPart
	err   error
}

// ContentPart is one part of a message's content. Parts other than text
// (an image, audio) keep only their type here.
type ContentPart struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// TextContent returns content that is the text s.
func TextContent(s string) *Content { return &Content{Text: s} }

// MarshalJSON writes the content as a string, or as its array of parts.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return json.Marshal(c.Parts)
	}
	return json.Marshal(c.Text)
}

// UnmarshalJSON reads a string or an array of parts; anything else is kept
// as an error for AsText.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	switch b[0] {
	case '"':
		return json.Unmarshal(b, &c.Text)
	case '[':
		if err := json.Unmarshal(b, &c.Parts); err != nil {
			c.Parts, c.err = nil, err
		}
		if c.Parts == nil && c.err == nil {
			c.Parts = []ContentPart{}
		}
	case 'n': // null, in an array of messages read into values
	default:
		c.err = errors.New("content must be a string or an array of content parts")
	}
	return nil
}

// AsText returns the content as text: the string, or the text parts
// joined ("text", "input_text" and "output_text"). A part of another kind
// is an error: what reads it carries text only. Nil content is "".
func (c *Content) AsText() (string, error) {
	switch {
	case c == nil:
		return "", nil
	case c.err != nil:
		return "", c.err
	case c.Parts == nil:
		return c.Text, nil
	}
	var b strings.Builder
	for _, p := range c.Parts {
		switch p.Type {
		case "text", "input_text", "output_text":
			b.WriteString(p.Text)
		default:
			return "", errors.New("a content part of type " + strconv.Quote(p.Type) + " cannot be sent in the text protocol, which carries text only")
		}
	}
	return b.String(), nil
}

// ToolCall is a native tool call: in a request's assistant message, in an
// answer's message, or a piece of one in a stream's delta (Index set).
type ToolCall struct {
	// Index is the call's position in the answer; in stream chunks only.
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function FunctionCall `json:"function"`
}

// Streamed is the call as a stream carries it at index, in the two pieces
// OpenAI sends: its index, id, type and name with empty arguments, then its
// arguments.
func (tc ToolCall) Streamed(index int) []ToolCall {
	head := tc
	head.Index, head.Function.Arguments = &index, ""
	args := ToolCall{Index: &index}
	args.Function.Arguments = tc.Function.Arguments
	return []ToolCall{head, args}
}

// FunctionCall is the function a ToolCall calls.
type FunctionCall struct {
	Name      string    `json:"name,omitempty"`
	Arguments Arguments `json:"arguments"`
}

// Arguments are the JSON text of a call's arguments, written as a string
// as the API defines them. They are read from a string, or from the JSON
// value itself, as some servers and clients send them (null as "").
type Arguments string

// UnmarshalJSON reads a JSON string's text, or any other JSON value as it
// is written.
func (a *Arguments) UnmarshalJSON(b []byte) error {
	switch {
	case b[0] == '"':
		var s string
		err := json.Unmarshal(b, &s)
		*a = Arguments(s)
		return err
	case string(b) != "null":
		*a = Arguments(b)
	}
	return nil
}

// Tool is a tool a request declares.
type Tool struct {
	// Type is "function"; other types exist (OpenAI's built-in tools).
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is a function tool's definition.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict,omitempty"`
}

// NamedToolChoice is the tool_choice that forces one function.
type NamedToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// ToolChoiceOf returns the tool_choice for choice: "auto", "none" and
// "required" as strings, any other name as a NamedToolChoice; nil for "".
func ToolChoiceOf(choice string) json.RawMessage {
	switch choice {
	case "":
		return nil
	case "auto", "none", "required":
		return json.RawMessage(strconv.Quote(choice))
	}
	c := NamedToolChoice{Type: "function"}
	c.Function.Name = choice
	b, _ := json.Marshal(c)
	return b
}

// StopOf returns the stop sequences a request's stop field holds: one
// string or an array of them; ok is false when it holds neither. Null or
// absent is none.
func StopOf(raw json.RawMessage) (stop []string, ok bool) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, true
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	if json.Unmarshal(raw, &stop) == nil {
		return stop, true
	}
	return nil, false
}

// Completion is a whole answer (Object "chat.completion", its choices
// holding a Message) or one chunk of a stream ("chat.completion.chunk", its
// choices holding a Delta). A server may instead report an error in it.
type Completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage,omitempty"`
	// Error is set by servers that report a failure in a 200 answer or in
	// the middle of a stream (OpenRouter, vLLM); older vLLM sends the error
	// as the whole object, with Object "error".
	Error json.RawMessage `json:"error,omitempty"`
}

// Failed reports whether the answer is an error.
func (c *Completion) Failed() bool {
	return len(c.Error) > 0 && string(c.Error) != "null" || c.Object == "error"
}

// Choice is one of an answer's choices.
type Choice struct {
	Index   int    `json:"index"`
	Message *Reply `json:"message,omitempty"`
	Delta   *Delta `json:"delta,omitempty"`
	// FinishReason is null in every chunk but the last.
	FinishReason *string `json:"finish_reason"`
	// Logprobs are null (nil) unless asked for; a pointer, so that reading
	// the null every chunk carries costs nothing.
	Logprobs *json.RawMessage `json:"logprobs"`
}

// Finish is the choice's finish reason, "" when there is none yet.
func (c *Choice) Finish() string {
	if c.FinishReason == nil {
		return ""
	}
	return *c.FinishReason
}

// Reply is the message of a whole answer.
type Reply struct {
	Role string `json:"role"`
	// Content is null when the answer only calls tools.
	Content *Text `json:"content"`
	// ReasoningContent is the reasoning under the name DeepSeek and vLLM
	// give it; Reasoning under OpenRouter's and Ollama's. Clients that do
	// not know them ignore them.
	ReasoningContent Text       `json:"reasoning_content,omitempty"`
	Reasoning        Text       `json:"reasoning,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	Refusal          *string    `json:"refusal"`
}

// Text returns the reply's text, "" when it has none.
func (r *Reply) Text() string {
	if r == nil || r.Content == nil {
		return ""
	}
	return string(*r.Content)
}

// ReasoningText returns the reasoning under either name.
func (r *Reply) ReasoningText() string {
	if r == nil {
		return ""
	}
	return string(cmp.Or(r.ReasoningContent, r.Reasoning))
}

// Delta is what one chunk of a stream adds to the answer.
type Delta struct {
	Role             string     `json:"role,omitempty"`
	Content          Text       `json:"content,omitempty"`
	ReasoningContent Text       `json:"reasoning_content,omitempty"`
	Reasoning        Text       `json:"reasoning,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
}

// ReasoningText returns the reasoning under either name.
func (d *Delta) ReasoningText() string {
	if d == nil {
		return ""
	}
	return string(cmp.Or(d.ReasoningContent, d.Reasoning))
}

// Text is an answer's text. It is written as a string, and read from a
// string, null, or (as some servers send it) an array of parts, of which
// the "text" ones are kept; any other JSON value reads as no text.
type Text string

// UnmarshalJSON reads a string, null or an array of parts.
func (t *Text) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case '"':
		var s string
		err := json.Unmarshal(b, &s)
		*t = Text(s)
		return err
	case '[':
		var parts []ContentPart
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				sb.WriteString(p.Text)
			}
		}
		*t = Text(sb.String())
	}
	return nil
}

// Usage is an answer's token counts.
type Usage struct {
	PromptTokens        int           `json:"prompt_tokens"`
	CompletionTokens    int           `json:"completion_tokens"`
	TotalTokens         int           `json:"total_tokens"`
	PromptTokensDetails *TokenDetails `json:"prompt_tokens_details,omitempty"`
	// PromptCacheHitTokens is DeepSeek's count of cached prompt tokens.
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens,omitempty"`
}

// TokenDetails break the prompt tokens down.
type TokenDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// UsageOf returns u as the API writes it.
func UsageOf(u ptk.Usage) *Usage {
	out := &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	if u.CacheReadTokens > 0 {
		out.PromptTokensDetails = &TokenDetails{CachedTokens: u.CacheReadTokens}
	}
	return out
}

// Usage returns the token counts as ptk counts them: cached tokens from
// OpenAI's details or DeepSeek's count.
func (u *Usage) Usage() ptk.Usage {
	out := ptk.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CacheReadTokens: u.PromptCacheHitTokens}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		out.CacheReadTokens = d.CachedTokens
	}
	return out
}

// ErrorBody is the body of an error answer.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}
