package wire

import (
	"github.com/ptkit/ptk/internal/jsonfast"
	"github.com/ptkit/ptk/llm/internal/jsoncache"
)

// The gateway writes a stream's chunks by the dozen for every answer:
// encoding/json writes each through reflection, and checks again what the
// json.RawMessage fields hold. AppendJSON writes them in one pass, byte for
// byte as encoding/json does (a test holds the two to the same output).

// AppendJSON appends c as encoding/json writes it (json.Marshal with
// escapeHTML, an Encoder with SetEscapeHTML(false) without it), without
// the Encoder's newline. It reports false, appending nothing, for a value
// it leaves to encoding/json, which refuses it: a json.RawMessage field
// that is not valid JSON.
func (c *Completion) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := writer{Writer: jsonfast.NewWriter(dst, escapeHTML)}
	w.Raw(`{"id":`)
	w.String(c.ID)
	w.Raw(`,"object":`)
	w.String(c.Object)
	w.Raw(`,"created":`)
	w.Int(c.Created)
	w.Raw(`,"model":`)
	w.String(c.Model)
	w.Raw(`,"choices":`)
	jsonfast.Array(&w.Writer, c.Choices, w.choice)
	if c.Usage != nil {
		w.Raw(`,"usage":`)
		w.usage(c.Usage)
	}
	if len(c.Error) > 0 {
		w.Raw(`,"error":`)
		w.RawMessage(c.Error)
	}
	w.Raw("}")
	return w.Done(dst)
}

// writer is a jsonfast.Writer with the package's types, and a cache for
// the long strings and schemas a request repeats (nil: none).
type writer struct {
	jsonfast.Writer
	cache *jsoncache.Cache
}

func (w *writer) choice(ch *Choice) {
	w.Raw(`{"index":`)
	w.Int(int64(ch.Index))
	if ch.Message != nil {
		w.Raw(`,"message":`)
		w.reply(ch.Message)
	}
	if ch.Delta != nil {
		w.Raw(`,"delta":`)
		w.delta(ch.Delta)
	}
	w.Raw(`,"finish_reason":`)
	if ch.FinishReason == nil {
		w.Raw("null")
	} else {
		w.String(*ch.FinishReason)
	}
	w.Raw(`,"logprobs":`)
	if ch.Logprobs == nil {
		w.Raw("null")
	} else {
		w.RawMessage(*ch.Logprobs)
	}
	w.Raw("}")
}

func (w *writer) reply(m *Reply) {
	w.Raw(`{"role":`)
	w.String(m.Role)
	w.Raw(`,"content":`)
	if m.Content == nil {
		w.Raw("null")
	} else {
		w.String(string(*m.Content))
	}
	if m.ReasoningContent != "" {
		w.Raw(`,"reasoning_content":`)
		w.String(string(m.ReasoningContent))
	}
	if m.Reasoning != "" {
		w.Raw(`,"reasoning":`)
		w.String(string(m.Reasoning))
	}
	if len(m.ToolCalls) > 0 {
		w.Raw(`,"tool_calls":`)
		w.toolCalls(m.ToolCalls)
	}
	w.Raw(`,"refusal":`)
	if m.Refusal == nil {
		w.Raw("null")
	} else {
		w.String(*m.Refusal)
	}
	w.Raw("}")
}

func (w *writer) delta(d *Delta) {
	w.Raw("{")
	sep := false
	field := func(key string) {
		if sep {
			w.Raw(",")
		}
		sep = true
		w.Raw(key)
	}
	if d.Role != "" {
		field(`"role":`)
		w.String(d.Role)
	}
	if d.Content != "" {
		field(`"content":`)
		w.String(string(d.Content))
	}
	if d.ReasoningContent != "" {
		field(`"reasoning_content":`)
		w.String(string(d.ReasoningContent))
	}
	if d.Reasoning != "" {
		field(`"reasoning":`)
		w.String(string(d.Reasoning))
	}
	if len(d.ToolCalls) > 0 {
		field(`"tool_calls":`)
		w.toolCalls(d.ToolCalls)
	}
	w.Raw("}")
}

func (w *writer) toolCalls(tcs []ToolCall) {
	w.Raw("[")
	for i := range tcs {
		tc := &tcs[i]
		if i > 0 {
			w.Raw(",")
		}
		w.Raw("{")
		if tc.Index != nil {
			w.Raw(`"index":`)
			w.Int(int64(*tc.Index))
			w.Raw(",")
		}
		if tc.ID != "" {
			w.Raw(`"id":`)
			w.String(tc.ID)
			w.Raw(",")
		}
		if tc.Type != "" {
			w.Raw(`"type":`)
			w.String(tc.Type)
			w.Raw(",")
		}
		w.Raw(`"function":{`)
		if tc.Function.Name != "" {
			w.Raw(`"name":`)
			w.String(tc.Function.Name)
			w.Raw(",")
		}
		w.Raw(`"arguments":`)
		w.B = w.cache.String(w.B, string(tc.Function.Arguments), w.EscapeHTML)
		w.Raw("}}")
	}
	w.Raw("]")
}

func (w *writer) usage(u *Usage) {
	w.Raw(`{"prompt_tokens":`)
	w.Int(int64(u.PromptTokens))
	w.Raw(`,"completion_tokens":`)
	w.Int(int64(u.CompletionTokens))
	w.Raw(`,"total_tokens":`)
	w.Int(int64(u.TotalTokens))
	if u.PromptTokensDetails != nil {
		w.Raw(`,"prompt_tokens_details":{"cached_tokens":`)
		w.Int(int64(u.PromptTokensDetails.CachedTokens))
		w.Raw("}")
	}
	if u.PromptCacheHitTokens != 0 {
		w.Raw(`,"prompt_cache_hit_tokens":`)
		w.Int(int64(u.PromptCacheHitTokens))
	}
	w.Raw("}")
}

// AppendJSON appends r as encoding/json writes it (json.Marshal with
// escapeHTML, an Encoder with SetEscapeHTML(false) without it): the
// client's request, kilobytes of system prompt that encoding/json wrote
// through reflection and, for Content's MarshalJSON, scanned again. It
// reports false, appending nothing, for a request encoding/json refuses
// (a tool's parameters that are not valid JSON, a temperature that is not
// a number).
func (r *Request) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	return r.AppendJSONCached(dst, escapeHTML, nil)
}

// AppendJSONCached is AppendJSON with the JSON of the request's long
// strings and schemas (the system prompt, the tools, the turns a
// conversation sends again) taken from c when it holds them, and kept in
// it: a client sends most of a request again with every call. The bytes
// are the same as AppendJSON's.
func (r *Request) AppendJSONCached(dst []byte, escapeHTML bool, c *jsoncache.Cache) ([]byte, bool) {
	w := writer{Writer: jsonfast.NewWriter(dst, escapeHTML), cache: c}
	w.Raw("{")
	sep := false
	field := func(key string) {
		if sep {
			w.Raw(",")
		}
		sep = true
		w.Raw(key)
	}
	if r.Model != "" {
		field(`"model":`)
		w.String(r.Model)
	}
	field(`"messages":`)
	jsonfast.Array(&w.Writer, r.Messages, w.message)
	if r.Temperature != nil {
		field(`"temperature":`)
		w.Float(*r.Temperature)
	}
	if r.MaxTokens != nil {
		field(`"max_tokens":`)
		w.Int(int64(*r.MaxTokens))
	}
	if len(r.Stop) > 0 {
		field(`"stop":`)
		w.RawMessage(r.Stop)
	}
	if len(r.Tools) > 0 {
		field(`"tools":[`)
		for i := range r.Tools {
			if i > 0 {
				w.Raw(",")
			}
			w.tool(&r.Tools[i])
		}
		w.Raw("]")
	}
	if len(r.ToolChoice) > 0 {
		field(`"tool_choice":`)
		w.RawMessage(r.ToolChoice)
	}
	if r.Stream {
		field(`"stream":true`)
	}
	if r.StreamOptions != nil {
		field(`"stream_options":{"include_usage":`)
		w.Bool(r.StreamOptions.IncludeUsage)
		w.Raw("}")
	}
	if r.ParallelToolCalls != nil {
		field(`"parallel_tool_calls":`)
		w.Bool(*r.ParallelToolCalls)
	}
	if r.MaxCompletionTokens != nil {
		field(`"max_completion_tokens":`)
		w.Int(int64(*r.MaxCompletionTokens))
	}
	if r.N != nil {
		field(`"n":`)
		w.Int(int64(*r.N))
	}
	w.Raw("}")
	return w.Done(dst)
}

func (w *writer) message(m *Message) {
	w.Raw(`{"role":`)
	w.String(m.Role)
	w.Raw(`,"content":`)
	switch c := m.Content; {
	case c == nil:
		w.Raw("null")
	case c.Parts != nil:
		// Content's MarshalJSON: encoding/json escapes what it writes as
		// HTML whatever the encoder says.
		w.Escaped(func() { w.parts(c.Parts) })
	default:
		w.B = w.cache.String(w.B, c.Text, true)
	}
	if m.Name != "" {
		w.Raw(`,"name":`)
		w.String(m.Name)
	}
	if len(m.ToolCalls) > 0 {
		w.Raw(`,"tool_calls":`)
		w.toolCalls(m.ToolCalls)
	}
	if m.ToolCallID != "" {
		w.Raw(`,"tool_call_id":`)
		w.String(m.ToolCallID)
	}
	w.Raw("}")
}

// parts writes content parts (never nil here).
func (w *writer) parts(ps []ContentPart) {
	jsonfast.Array(&w.Writer, ps, func(p *ContentPart) {
		w.Raw(`{"type":`)
		w.String(p.Type)
		if p.Text != "" {
			w.Raw(`,"text":`)
			w.String(p.Text)
		}
		w.Raw("}")
	})
}

func (w *writer) tool(t *Tool) {
	w.Raw(`{"type":`)
	w.String(t.Type)
	w.Raw(`,"function":{"name":`)
	w.String(t.Function.Name)
	if t.Function.Description != "" {
		w.Raw(`,"description":`)
		w.B = w.cache.String(w.B, t.Function.Description, w.EscapeHTML)
	}
	w.Raw(`,"parameters":`)
	w.rawMessage(t.Function.Parameters)
	if t.Function.Strict != nil {
		w.Raw(`,"strict":`)
		w.Bool(*t.Function.Strict)
	}
	w.Raw("}}")
}

// rawMessage is jsonfast.Writer.RawMessage through the cache.
func (w *writer) rawMessage(m []byte) {
	if m == nil {
		w.Raw("null")
		return
	}
	var ok bool
	if w.B, ok = w.cache.Compact(w.B, m, w.EscapeHTML); !ok {
		w.Fail()
	}
}
