package wire

import (
	"bytes"

	"github.com/ptkit/ptk/internal/jsonfast"
	"github.com/ptkit/ptk/llm/internal/jsoncache"
)

// The gateway writes a streamed answer as a dozen events or more, each
// through encoding/json: reflection, and every MarshalJSON method's output
// (a block's, a delta's) checked again. The AppendJSON methods write them
// in one pass, byte for byte as encoding/json does (a test holds the two to
// the same output).
//
// Each method appends the value as encoding/json writes it (json.Marshal
// with escapeHTML, an Encoder with SetEscapeHTML(false) without it),
// without the Encoder's newline. It reports false, appending nothing, for a
// value it leaves to encoding/json: one encoding/json refuses (a
// json.RawMessage that is not valid JSON), or a delta of a type that is
// not a plain name. What a MarshalJSON method of the package writes (a
// Block, a Delta, a Content) has its HTML characters escaped whatever
// escapeHTML says, since those methods call json.Marshal.

// writer is a jsonfast.Writer with the package's types, and a cache for
// the long strings and schemas a request repeats (nil: none).
type writer struct {
	jsonfast.Writer
	cache *jsoncache.Cache
}

func newWriter(dst []byte, escapeHTML bool) writer {
	return writer{Writer: jsonfast.NewWriter(dst, escapeHTML)}
}

// text writes a string that may be long and repeated: a prompt, a turn's
// text, a description.
func (w *writer) text(s string) { w.B = w.cache.String(w.B, s, w.EscapeHTML) }

// raw writes a json.RawMessage that may be long and repeated (a schema),
// as RawMessage does.
func (w *writer) raw(m []byte) {
	if m == nil {
		w.Raw("null")
		return
	}
	var ok bool
	if w.B, ok = w.cache.Compact(w.B, m, w.EscapeHTML); !ok {
		w.Fail()
	}
}

// AppendJSON appends the request as encoding/json writes it.
func (r *Request) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	return r.AppendJSONCached(dst, escapeHTML, nil)
}

// AppendJSONCached is AppendJSON with the JSON of the request's long
// strings and schemas (the system prompt, the tools, the turns a
// conversation sends again) taken from c when it holds them, and kept in
// it. The bytes are the same as AppendJSON's.
func (r *Request) AppendJSONCached(dst []byte, escapeHTML bool, c *jsoncache.Cache) ([]byte, bool) {
	w := writer{Writer: jsonfast.NewWriter(dst, escapeHTML), cache: c}
	w.request(r)
	return w.Done(dst)
}

func (w *writer) request(r *Request) {
	w.Raw("{")
	if r.Model != "" {
		w.Raw(`"model":`)
		w.String(r.Model)
		w.Raw(",")
	}
	w.Raw(`"max_tokens":`)
	w.Int(int64(r.MaxTokens))
	if r.System != nil {
		w.Raw(`,"system":`)
		w.content(r.System)
	}
	w.Raw(`,"messages":`)
	jsonfast.Array(&w.Writer, r.Messages, func(m *Message) {
		w.Raw(`{"role":`)
		w.String(m.Role)
		w.Raw(`,"content":`)
		w.content(&m.Content)
		w.Raw("}")
	})
	if len(r.Tools) > 0 {
		w.Raw(`,"tools":[`)
		for i := range r.Tools {
			if i > 0 {
				w.Raw(",")
			}
			w.tool(&r.Tools[i])
		}
		w.Raw("]")
	}
	if tc := r.ToolChoice; tc != nil {
		w.Raw(`,"tool_choice":{"type":`)
		w.String(tc.Type)
		w.optString(`,"name":`, tc.Name)
		if tc.DisableParallelToolUse {
			w.Raw(`,"disable_parallel_tool_use":true`)
		}
		w.Raw("}")
	}
	if r.Temperature != nil {
		w.Raw(`,"temperature":`)
		w.Float(*r.Temperature)
	}
	if r.TopP != nil {
		w.Raw(`,"top_p":`)
		w.Float(*r.TopP)
	}
	if r.TopK != nil {
		w.Raw(`,"top_k":`)
		w.Int(int64(*r.TopK))
	}
	if len(r.StopSequences) > 0 {
		w.Raw(`,"stop_sequences":[`)
		for i, s := range r.StopSequences {
			if i > 0 {
				w.Raw(",")
			}
			w.String(s)
		}
		w.Raw("]")
	}
	if r.Stream {
		w.Raw(`,"stream":true`)
	}
	w.optRaw(`,"metadata":`, r.Metadata)
	if t := r.Thinking; t != nil {
		w.Raw(`,"thinking":{"type":`)
		w.String(t.Type)
		if t.BudgetTokens != 0 {
			w.Raw(`,"budget_tokens":`)
			w.Int(int64(t.BudgetTokens))
		}
		w.optString(`,"display":`, t.Display)
		w.Raw("}")
	}
	w.Raw("}")
}

// content writes content as Content.MarshalJSON does: through json.Marshal,
// so with HTML escaped.
func (w *writer) content(c *Content) {
	w.Escaped(func() {
		if c.Blocks != nil {
			w.blocks(c.Blocks)
		} else {
			w.text(c.Text)
		}
	})
}

// tool writes a tool as encoding/json does, its description and schema
// through the cache.
func (w *writer) tool(t *Tool) {
	w.Raw("{")
	if t.Type != "" {
		w.Raw(`"type":`)
		w.String(t.Type)
		w.Raw(",")
	}
	w.Raw(`"name":`)
	w.String(t.Name)
	if t.Description != "" {
		w.Raw(`,"description":`)
		w.text(t.Description)
	}
	if len(t.InputSchema) > 0 {
		w.Raw(`,"input_schema":`)
		w.raw(t.InputSchema)
	}
	if t.DeferLoading {
		w.Raw(`,"defer_loading":true`)
	}
	w.optRaw(`,"cache_control":`, t.CacheControl)
	w.Raw("}")
}

// AppendJSON appends the response as encoding/json writes it.
func (r *Response) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.response(r)
	return w.Done(dst)
}

func (w *writer) response(r *Response) {
	w.Raw(`{"id":`)
	w.String(r.ID)
	w.Raw(`,"type":`)
	w.String(r.Type)
	w.Raw(`,"role":`)
	w.String(r.Role)
	w.Raw(`,"model":`)
	w.String(r.Model)
	w.Raw(`,"content":`)
	w.blocks(r.Content)
	w.Raw(`,"stop_reason":`)
	w.StringPtr(r.StopReason)
	w.Raw(`,"stop_sequence":`)
	w.StringPtr(r.StopSequence)
	w.Raw(`,"usage":`)
	w.usage(&r.Usage)
	if r.Error != nil {
		w.Raw(`,"error":`)
		w.error(r.Error)
	}
	w.Raw("}")
}

func (w *writer) usage(u *Usage) {
	w.Raw(`{"input_tokens":`)
	w.Int(int64(u.InputTokens))
	w.Raw(`,"output_tokens":`)
	w.Int(int64(u.OutputTokens))
	w.Raw(`,"cache_creation_input_tokens":`)
	w.Int(int64(u.CacheCreationInputTokens))
	w.Raw(`,"cache_read_input_tokens":`)
	w.Int(int64(u.CacheReadInputTokens))
	w.Raw("}")
}

func (w *writer) error(e *Error) {
	w.Raw(`{"type":`)
	w.String(e.Type)
	w.Raw(`,"message":`)
	w.String(e.Message)
	w.Raw("}")
}

// blocks writes blocks: null for nil, as encoding/json writes the slice.
func (w *writer) blocks(bs []Block) { jsonfast.Array(&w.Writer, bs, w.block) }

// block writes a block as Block.MarshalJSON does.
func (w *writer) block(b *Block) {
	w.Escaped(func() {
		w.Raw(`{"type":`)
		w.String(b.Type)
		switch b.Type {
		case "text":
			w.Raw(`,"text":`)
			w.text(b.Text)
			w.optRaw(`,"cache_control":`, b.CacheControl)
		case "thinking":
			w.Raw(`,"thinking":`)
			w.String(b.Thinking)
			w.Raw(`,"signature":`)
			w.String(b.Signature)
		case "tool_use":
			w.Raw(`,"id":`)
			w.String(b.ID)
			w.Raw(`,"name":`)
			w.String(b.Name)
			w.Raw(`,"input":`)
			if len(bytes.TrimSpace(b.Input)) == 0 {
				w.Raw("{}")
			} else {
				w.raw(b.Input)
			}
			w.optRaw(`,"cache_control":`, b.CacheControl)
		default:
			w.optString(`,"text":`, b.Text)
			w.optString(`,"thinking":`, b.Thinking)
			w.optString(`,"signature":`, b.Signature)
			w.optString(`,"data":`, b.Data)
			w.optString(`,"id":`, b.ID)
			w.optString(`,"name":`, b.Name)
			w.optRaw(`,"input":`, b.Input)
			w.optString(`,"tool_use_id":`, b.ToolUseID)
			if b.Content != nil {
				w.Raw(`,"content":`)
				if b.Content.Blocks != nil {
					w.blocks(b.Content.Blocks)
				} else {
					w.text(b.Content.Text)
				}
			}
			if b.IsError {
				w.Raw(`,"is_error":true`)
			}
			w.optRaw(`,"source":`, b.Source)
			w.optString(`,"tool_name":`, b.ToolName)
			w.optRaw(`,"cache_control":`, b.CacheControl)
		}
		w.Raw("}")
	})
}

func (w *writer) optString(key, s string) {
	if s != "" {
		w.Raw(key)
		w.String(s)
	}
}

func (w *writer) optRaw(key string, m []byte) {
	if len(m) > 0 {
		w.Raw(key)
		w.RawMessage(m)
	}
}

// delta writes a delta as Delta.MarshalJSON does.
func (w *writer) delta(d *Delta) {
	key, val := `,"text":`, d.Text
	switch d.Type {
	case "thinking_delta":
		key, val = `,"thinking":`, d.Thinking
	case "signature_delta":
		key, val = `,"signature":`, d.Signature
	case "input_json_delta":
		key, val = `,"partial_json":`, d.PartialJSON
	}
	// MarshalJSON quotes the type as Go does; for a plain name that is
	// the JSON string.
	for i := 0; i < len(d.Type); i++ {
		if c := d.Type[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			w.Fail()
			return
		}
	}
	w.Raw(`{"type":"`)
	w.Raw(d.Type)
	w.Raw(`"`)
	w.Raw(key)
	w.Escaped(func() { w.String(val) })
	w.Raw("}")
}

// AppendJSON appends the event as encoding/json writes it.
func (e MessageStart) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.Raw(`{"type":`)
	w.String(e.Type)
	w.Raw(`,"message":`)
	if e.Message == nil {
		w.Raw("null")
	} else {
		w.response(e.Message)
	}
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the event as encoding/json writes it.
func (e BlockStart) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.Raw(`{"type":`)
	w.String(e.Type)
	w.Raw(`,"index":`)
	w.Int(int64(e.Index))
	w.Raw(`,"content_block":`)
	w.block(&e.ContentBlock)
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the event as encoding/json writes it.
func (e BlockDelta) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.Raw(`{"type":`)
	w.String(e.Type)
	w.Raw(`,"index":`)
	w.Int(int64(e.Index))
	w.Raw(`,"delta":`)
	w.delta(&e.Delta)
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the event as encoding/json writes it.
func (e BlockStop) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.Raw(`{"type":`)
	w.String(e.Type)
	w.Raw(`,"index":`)
	w.Int(int64(e.Index))
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the event as encoding/json writes it.
func (e MessageDelta) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.Raw(`{"type":`)
	w.String(e.Type)
	w.Raw(`,"delta":{"stop_reason":`)
	w.String(e.Delta.StopReason)
	w.Raw(`,"stop_sequence":`)
	w.StringPtr(e.Delta.StopSequence)
	w.Raw(`},"usage":`)
	w.usage(&e.Usage)
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the error as encoding/json writes it.
func (e ErrorBody) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.Raw(`{"type":`)
	w.String(e.Type)
	w.Raw(`,"error":`)
	w.error(&e.Error)
	w.Raw("}")
	return w.Done(dst)
}
