package wire

import (
	"github.com/ptkit/ptk/internal/jsonfast"
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
	w := writer{jsonfast.NewWriter(dst, escapeHTML)}
	w.Raw(`{"id":`)
	w.String(c.ID)
	w.Raw(`,"object":`)
	w.String(c.Object)
	w.Raw(`,"created":`)
	w.Int(c.Created)
	w.Raw(`,"model":`)
	w.String(c.Model)
	w.Raw(`,"choices":`)
	if c.Choices == nil {
		w.Raw("null")
	} else {
		w.Raw("[")
		for i := range c.Choices {
			if i > 0 {
				w.Raw(",")
			}
			w.choice(&c.Choices[i])
		}
		w.Raw("]")
	}
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

// writer is a jsonfast.Writer with the package's types.
type writer struct{ jsonfast.Writer }

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
		w.String(string(tc.Function.Arguments))
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
