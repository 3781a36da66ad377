// Package responses holds the JSON types of OpenAI's Responses API
// (POST /v1/responses), as a server and its clients use them: the gateway
// reads requests and writes responses and stream events with them, and
// tests read what it wrote. It is the Responses API's counterpart of
// llm/openai/wire, which holds Chat Completions'.
//
// The types read what clients send in the wild: input as a string or an
// array of items (a message's content as a string or parts, items without a
// type that have a role), instructions as a string or null, function tools
// and the namespaces Codex groups some in, built-in tools (web_search,
// which Codex always sends) and custom tools, reasoning items passed back.
// What they write is what the API writes: an item has exactly the fields of
// its type, and each event of a stream the fields it carries.
package responses

import (
	"encoding/json"
	"errors"
)

// Request is the body of POST /v1/responses.
type Request struct {
	Model string `json:"model,omitempty"`
	// Input is the conversation: a string (one user message) or items.
	Input Input `json:"input"`
	// Instructions are the system prompt; Codex sends none (null) and
	// gives its own as developer messages.
	Instructions      string          `json:"instructions,omitempty"`
	Tools             []Tool          `json:"tools,omitempty"`
	ToolChoice        json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	MaxOutputTokens   *int            `json:"max_output_tokens,omitempty"`
	Temperature       *float64        `json:"temperature,omitempty"`
	TopP              *float64        `json:"top_p,omitempty"`
	Stream            bool            `json:"stream,omitempty"`
	// Store, true unless set to false, keeps the response for a later
	// request's PreviousResponseID.
	Store              *bool           `json:"store,omitempty"`
	PreviousResponseID string          `json:"previous_response_id,omitempty"`
	Reasoning          json.RawMessage `json:"reasoning,omitempty"`
	Include            []string        `json:"include,omitempty"`
	PromptCacheKey     string          `json:"prompt_cache_key,omitempty"`
	Metadata           json.RawMessage `json:"metadata,omitempty"`
	Text               *TextConfig     `json:"text,omitempty"`
}

// Stored reports whether the response is to be kept (store is true unless
// set to false).
func (r *Request) Stored() bool { return r.Store == nil || *r.Store }

// TextConfig is a request's text options: the answer's format.
type TextConfig struct {
	// Format is {"type": "text"}, {"type": "json_object"} or {"type":
	// "json_schema", "name": …, "schema": …, "strict": …}.
	Format json.RawMessage `json:"format,omitempty"`
}

// Input is a request's input: a string (Text), or items (Items, not nil).
type Input struct {
	Text  string
	Items []Item
}

// MarshalJSON writes the input as a string, or as its array of items.
func (in Input) MarshalJSON() ([]byte, error) {
	if in.Items != nil {
		return json.Marshal(in.Items)
	}
	return json.Marshal(in.Text)
}

// UnmarshalJSON reads a string or an array of items.
func (in *Input) UnmarshalJSON(b []byte) error {
	*in = Input{}
	switch b[0] {
	case '"':
		return json.Unmarshal(b, &in.Text)
	case '[':
		if err := json.Unmarshal(b, &in.Items); err != nil {
			return err
		}
		if in.Items == nil {
			in.Items = []Item{}
		}
		return nil
	case 'n':
		return nil
	}
	return errors.New("input must be a string or an array of items")
}

// Item is one item of a request's input or a response's output. Which
// fields it has depends on its Type:
//
//	message               Role, Content, Status (output: ID)
//	function_call         CallID, Name, Arguments, Namespace, Status, ID
//	function_call_output  CallID, Output
//	reasoning             Summary, Content (reasoning_text), EncryptedContent, ID
//	custom_tool_call      CallID, Name, Input
//
// An input message may leave Type out (an "easy" message with a role).
type Item struct {
	Type   string `json:"type,omitempty"`
	ID     string `json:"id,omitempty"`
	Status string `json:"status,omitempty"`
	Role   string `json:"role,omitempty"`
	// Content is a message's content (a string or parts), or a reasoning
	// item's reasoning_text parts.
	Content   *Content `json:"content,omitempty"`
	CallID    string   `json:"call_id,omitempty"`
	Name      string   `json:"name,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Arguments string   `json:"arguments,omitempty"`
	// Output is a function_call_output's output: a string, or an array of
	// parts (input_text, input_image).
	Output           *Content `json:"output,omitempty"`
	Summary          []Part   `json:"summary,omitempty"`
	EncryptedContent string   `json:"encrypted_content,omitempty"`
	Input            string   `json:"input,omitempty"`
}

// item is Item without its methods, for the default encoding.
type item Item

// MarshalJSON writes the fields of the item's type, as the API does: a
// function_call's arguments even when empty (output_item.added carries
// them empty), a reasoning item's summary even when it has none, a
// message's content as an array.
func (it Item) MarshalJSON() ([]byte, error) {
	switch it.Type {
	case "function_call":
		return json.Marshal(struct {
			Type      string `json:"type"`
			ID        string `json:"id,omitempty"`
			Status    string `json:"status,omitempty"`
			Arguments string `json:"arguments"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Namespace string `json:"namespace,omitempty"`
		}{it.Type, it.ID, it.Status, it.Arguments, it.CallID, it.Name, it.Namespace})
	case "reasoning":
		summary := it.Summary
		if summary == nil {
			summary = []Part{}
		}
		return json.Marshal(struct {
			Type             string   `json:"type"`
			ID               string   `json:"id,omitempty"`
			Status           string   `json:"status,omitempty"`
			Summary          []Part   `json:"summary"`
			Content          *Content `json:"content,omitempty"`
			EncryptedContent string   `json:"encrypted_content,omitempty"`
		}{it.Type, it.ID, it.Status, summary, it.Content, it.EncryptedContent})
	case "message":
		if it.ID != "" { // an output message: its content always an array
			c := it.Content
			if c == nil || c.Parts == nil {
				c = &Content{Parts: []Part{}}
				if it.Content != nil && it.Content.Text != "" {
					c.Parts = []Part{OutputText(it.Content.Text)}
				}
			}
			return json.Marshal(struct {
				Type    string   `json:"type"`
				ID      string   `json:"id"`
				Status  string   `json:"status,omitempty"`
				Role    string   `json:"role"`
				Content *Content `json:"content"`
			}{it.Type, it.ID, it.Status, it.Role, c})
		}
	}
	return json.Marshal(item(it))
}

// Content is a message's content or a function_call_output's output: a
// string (Text), or an array of parts (Parts, not nil).
type Content struct {
	Text  string
	Parts []Part
}

// MarshalJSON writes the content as a string, or as its array of parts.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return json.Marshal(c.Parts)
	}
	return json.Marshal(c.Text)
}

// UnmarshalJSON reads a string or an array of parts; null is no content.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	switch b[0] {
	case '"':
		return json.Unmarshal(b, &c.Text)
	case '[':
		if err := json.Unmarshal(b, &c.Parts); err != nil {
			return err
		}
		if c.Parts == nil {
			c.Parts = []Part{}
		}
		return nil
	case 'n':
		return nil
	}
	return errors.New("content must be a string or an array of content parts")
}

// Part is a part of a message's content: input_text, output_text,
// refusal, input_image, input_file; of a reasoning item: reasoning_text,
// summary_text.
type Part struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// Refusal is a refusal part's text.
	Refusal string `json:"refusal,omitempty"`
	// ImageURL and FileID say where an image is; Filename names a file.
	ImageURL string `json:"image_url,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
	// Annotations are an output_text's: always an array, empty here.
	Annotations *[]json.RawMessage `json:"annotations,omitempty"`
}

// MarshalJSON writes a text part's text even when it is empty (a stream's
// content_part.added carries it empty).
func (p Part) MarshalJSON() ([]byte, error) {
	switch p.Type {
	case "output_text", "input_text", "reasoning_text", "summary_text":
		return json.Marshal(struct {
			Type        string             `json:"type"`
			Text        string             `json:"text"`
			Annotations *[]json.RawMessage `json:"annotations,omitempty"`
		}{p.Type, p.Text, p.Annotations})
	}
	type part Part
	return json.Marshal(part(p))
}

// noAnnotations is the empty array of an output_text's annotations.
var noAnnotations = []json.RawMessage{}

// OutputText returns an output_text part holding s.
func OutputText(s string) Part {
	return Part{Type: "output_text", Text: s, Annotations: &noAnnotations}
}

// Tool is a tool a request declares: a function tool (Name, Description,
// Parameters, Strict), a namespace of function tools (Name, Tools), or a
// built-in or custom tool (web_search, file_search, custom...), which
// only the type says.
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
	// Tools are a namespace's function tools.
	Tools []Tool `json:"tools,omitempty"`
}

// Response is a response: the whole answer, or the state a stream's
// response.* events carry.
type Response struct {
	ID        string `json:"id"`
	Object    string `json:"object"` // "response"
	CreatedAt int64  `json:"created_at"`
	// Status is in_progress, completed, incomplete or failed.
	Status            string          `json:"status"`
	Model             string          `json:"model"`
	Output            []Item          `json:"output"`
	Usage             *Usage          `json:"usage"`
	Error             *Error          `json:"error"`
	IncompleteDetails *Incomplete     `json:"incomplete_details"`
	Instructions      *string         `json:"instructions"`
	PreviousID        *string         `json:"previous_response_id"`
	ParallelToolCalls bool            `json:"parallel_tool_calls"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	Tools             []Tool          `json:"tools"`
	Temperature       *float64        `json:"temperature"`
	TopP              *float64        `json:"top_p"`
	MaxOutputTokens   *int            `json:"max_output_tokens"`
	Store             bool            `json:"store"`
	Metadata          json.RawMessage `json:"metadata"`
}

// Usage is a response's token counts.
type Usage struct {
	InputTokens         int           `json:"input_tokens"`
	InputTokensDetails  InputDetails  `json:"input_tokens_details"`
	OutputTokens        int           `json:"output_tokens"`
	OutputTokensDetails OutputDetails `json:"output_tokens_details"`
	TotalTokens         int           `json:"total_tokens"`
}

// InputDetails break the input tokens down.
type InputDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// OutputDetails break the output tokens down.
type OutputDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// Error is a failed response's error.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Incomplete says why a response is incomplete: "max_output_tokens" or
// "content_filter".
type Incomplete struct {
	Reason string `json:"reason"`
}

// Event is one event of a stream, as a client reads it; which fields are
// set depends on its Type. A server writes the events with the types
// below, which have exactly each event's fields.
type Event struct {
	Type           string    `json:"type"`
	SequenceNumber int       `json:"sequence_number"`
	Response       *Response `json:"response"`
	OutputIndex    int       `json:"output_index"`
	Item           *Item     `json:"item"`
	ItemID         string    `json:"item_id"`
	ContentIndex   int       `json:"content_index"`
	Part           *Part     `json:"part"`
	Delta          string    `json:"delta"`
	Text           string    `json:"text"`
	Name           string    `json:"name"`
	Arguments      string    `json:"arguments"`
	// Code and Message are an error event's.
	Code    string `json:"code"`
	Message string `json:"message"`
}

// The events a server writes, each with its own fields.
type (
	// ResponseEvent is response.created, response.in_progress,
	// response.completed, response.incomplete or response.failed.
	ResponseEvent struct {
		Type           string    `json:"type"`
		SequenceNumber int       `json:"sequence_number"`
		Response       *Response `json:"response"`
		// Echo, when set, is the response's fields from instructions on,
		// encoded once (Response.Echo) for the events of a stream that
		// repeat them: AppendJSON copies it (encoding/json, which does
		// not see it, writes them from Response).
		Echo *Echo `json:"-"`
	}
	// ItemEvent is response.output_item.added or .done.
	ItemEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		OutputIndex    int    `json:"output_index"`
		Item           *Item  `json:"item"`
	}
	// PartEvent is response.content_part.added or .done.
	PartEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		ContentIndex   int    `json:"content_index"`
		Part           Part   `json:"part"`
	}
	// TextDelta is response.output_text.delta or
	// response.reasoning_text.delta.
	TextDelta struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		ContentIndex   int    `json:"content_index"`
		Delta          string `json:"delta"`
	}
	// TextDone is response.output_text.done or
	// response.reasoning_text.done.
	TextDone struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		ContentIndex   int    `json:"content_index"`
		Text           string `json:"text"`
	}
	// ArgsDelta is response.function_call_arguments.delta.
	ArgsDelta struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		Delta          string `json:"delta"`
	}
	// ArgsDone is response.function_call_arguments.done.
	ArgsDone struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		Name           string `json:"name"`
		Arguments      string `json:"arguments"`
	}
)
