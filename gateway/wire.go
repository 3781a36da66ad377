package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
)

// chatRequest is what the gateway reads of a Chat Completions request. The
// body itself is kept: a request that passes through is sent as it came.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Tools               []chatTool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	Temperature         *float64        `json:"temperature"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stop                json.RawMessage `json:"stop"`
	N                   *int            `json:"n"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string    `json:"name"`
		Arguments arguments `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
}

// arguments are a call's arguments: the JSON text in a string, as the API
// defines them, or the JSON value itself, as some clients send them.
type arguments string

func (a *arguments) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		err := json.Unmarshal(b, &s)
		*a = arguments(s)
		return err
	case string(b) != "null":
		*a = arguments(b)
	}
	return nil
}

// contentText is a message's content as text: a string, null, or an array
// of parts whose text parts are joined. A part of another kind (an image,
// audio) is an error: the text protocol carries text only.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", err
		}
		var b strings.Builder
		for _, p := range parts {
			switch p.Type {
			case "text", "input_text", "output_text":
				b.WriteString(p.Text)
			default:
				return "", errors.New("a content part of type " + strconv.Quote(p.Type) + " cannot be sent in the text protocol, which carries text only")
			}
		}
		return b.String(), nil
	}
	return "", errors.New("content must be a string or an array of content parts")
}

// completion is a whole answer (object "chat.completion") or one chunk of a
// stream ("chat.completion.chunk").
type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage,omitempty"`
}

type choice struct {
	Index   int         `json:"index"`
	Message *outMessage `json:"message,omitempty"`
	Delta   *outDelta   `json:"delta,omitempty"`
	// FinishReason is null in every chunk but the last.
	FinishReason *string         `json:"finish_reason"`
	Logprobs     json.RawMessage `json:"logprobs"`
}

type outMessage struct {
	Role    string  `json:"role"`
	Content *string `json:"content"`
	// ReasoningContent is the model's reasoning, under the name DeepSeek
	// and vLLM give it; clients that do not know it ignore it.
	ReasoningContent string        `json:"reasoning_content,omitempty"`
	ToolCalls        []outToolCall `json:"tool_calls,omitempty"`
	Refusal          *string       `json:"refusal"`
}

type outDelta struct {
	Role             string        `json:"role,omitempty"`
	Content          string        `json:"content,omitempty"`
	ReasoningContent string        `json:"reasoning_content,omitempty"`
	ToolCalls        []outToolCall `json:"tool_calls,omitempty"`
}

type outToolCall struct {
	// Index is the call's position in the answer; set in stream chunks only.
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        int           `json:"prompt_tokens"`
	CompletionTokens    int           `json:"completion_tokens"`
	TotalTokens         int           `json:"total_tokens"`
	PromptTokensDetails *tokenDetails `json:"prompt_tokens_details,omitempty"`
}

type tokenDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

func usageOf(u ptk.Usage) *usage {
	out := &usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	if u.CacheReadTokens > 0 {
		out.PromptTokensDetails = &tokenDetails{CachedTokens: u.CacheReadTokens}
	}
	return out
}

// apiError is the body of every error answer, in the OpenAI shape.
type apiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}
