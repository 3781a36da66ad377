package responses

import (
	"encoding/json"

	"github.com/ptkit/ptk/internal/jsonfast"
	"github.com/ptkit/ptk/llm/internal/jsoncache"
)

// A stream of the Responses API is a dozen events or more, three of them
// carrying the whole response (the request's tools included): through
// encoding/json, which writes each through reflection and checks again
// what every MarshalJSON method and json.RawMessage field writes, they
// were a third of the gateway's cost of a streamed answer. The AppendJSON
// methods write them in one pass, byte for byte as encoding/json does (a
// test holds the two to the same output).
//
// Each method appends the value as encoding/json writes it (json.Marshal
// with escapeHTML, an Encoder with SetEscapeHTML(false) without it),
// without the Encoder's newline. It reports false, appending nothing, for
// a value it leaves to encoding/json, which refuses it: a json.RawMessage
// that is not valid JSON, a float that is NaN or infinite. What a MarshalJSON method of the package
// writes (an Item, a Part, a Content) is written with its HTML characters
// escaped whatever escapeHTML says, since those methods call json.Marshal.

// writer is a jsonfast.Writer with the package's types.
type writer struct{ jsonfast.Writer }

// echoSchemas keeps the tools' schemas a response repeats from its
// request, written: a client sends the same tools on every request, and
// checking and compacting them again was most of writing a whole response.
var echoSchemas = jsoncache.New(4 << 20)

func newWriter(dst []byte, escapeHTML bool) writer {
	return writer{jsonfast.NewWriter(dst, escapeHTML)}
}

// AppendJSON appends the response as encoding/json writes it.
func (r *Response) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.response(r)
	return w.Done(dst)
}

func (w *writer) response(r *Response) {
	w.state(r)
	w.echo(r)
}

// state writes the response's fields up to instructions: what changes
// while it is answered.
func (w *writer) state(r *Response) {
	w.Raw(`{"id":`)
	w.String(r.ID)
	w.Raw(`,"object":`)
	w.String(r.Object)
	w.Raw(`,"created_at":`)
	w.Int(r.CreatedAt)
	w.Raw(`,"status":`)
	w.String(r.Status)
	w.Raw(`,"model":`)
	w.String(r.Model)
	w.Raw(`,"output":`)
	jsonfast.Array(&w.Writer, r.Output, w.item)
	w.Raw(`,"usage":`)
	if u := r.Usage; u == nil {
		w.Raw("null")
	} else {
		w.Raw(`{"input_tokens":`)
		w.Int(int64(u.InputTokens))
		w.Raw(`,"input_tokens_details":{"cached_tokens":`)
		w.Int(int64(u.InputTokensDetails.CachedTokens))
		w.Raw(`},"output_tokens":`)
		w.Int(int64(u.OutputTokens))
		w.Raw(`,"output_tokens_details":{"reasoning_tokens":`)
		w.Int(int64(u.OutputTokensDetails.ReasoningTokens))
		w.Raw(`},"total_tokens":`)
		w.Int(int64(u.TotalTokens))
		w.Raw("}")
	}
	w.Raw(`,"error":`)
	if e := r.Error; e == nil {
		w.Raw("null")
	} else {
		w.Raw(`{"code":`)
		w.String(e.Code)
		w.Raw(`,"message":`)
		w.String(e.Message)
		w.Raw("}")
	}
	w.Raw(`,"incomplete_details":`)
	if d := r.IncompleteDetails; d == nil {
		w.Raw("null")
	} else {
		w.Raw(`{"reason":`)
		w.String(d.Reason)
		w.Raw("}")
	}
}

// An Echo is what a response repeats of its request — its fields from
// instructions on: previous_response_id, parallel_tool_calls, tool_choice,
// tools, temperature, top_p, max_output_tokens, store and metadata —
// encoded once. A stream carries the response three times
// (response.created, response.in_progress and the last event), and the
// request's tools, their schemas compacted and checked each time, were
// most of what writing them cost; with the Echo they are copied.
type Echo struct {
	json       []byte
	escapeHTML bool
}

// Echo encodes what r repeats of its request, as AppendJSON writes it
// with escapeHTML; false when a field is one AppendJSON leaves to
// encoding/json. The Echo holds what r's fields are now: a ResponseEvent
// that carries it is written with the Echo's bytes, whatever its Response
// says from instructions on.
func (r *Response) Echo(escapeHTML bool) (*Echo, bool) {
	n := 256 + len(r.ToolChoice) + len(r.Metadata) + toolsSize(r.Tools)
	if r.Instructions != nil {
		n += len(*r.Instructions)
	}
	w := newWriter(make([]byte, 0, n), escapeHTML)
	w.echo(r)
	b, ok := w.Done(nil)
	if !ok {
		return nil, false
	}
	return &Echo{json: b, escapeHTML: escapeHTML}, true
}

// toolsSize is about the length of the tools' JSON.
func toolsSize(ts []Tool) int {
	n := 0
	for i := range ts {
		t := &ts[i]
		n += 64 + len(t.Name) + len(t.Description) + len(t.Parameters) + toolsSize(t.Tools)
	}
	return n
}

// echo writes the response's fields from instructions on, and closes it.
func (w *writer) echo(r *Response) {
	w.Raw(`,"instructions":`)
	w.StringPtr(r.Instructions)
	w.Raw(`,"previous_response_id":`)
	w.StringPtr(r.PreviousID)
	w.Raw(`,"parallel_tool_calls":`)
	w.Bool(r.ParallelToolCalls)
	w.Raw(`,"tool_choice":`)
	w.RawMessage(r.ToolChoice)
	w.Raw(`,"tools":`)
	w.tools(r.Tools)
	w.Raw(`,"temperature":`)
	w.FloatPtr(r.Temperature)
	w.Raw(`,"top_p":`)
	w.FloatPtr(r.TopP)
	w.Raw(`,"max_output_tokens":`)
	if r.MaxOutputTokens == nil {
		w.Raw("null")
	} else {
		w.Int(int64(*r.MaxOutputTokens))
	}
	w.Raw(`,"store":`)
	w.Bool(r.Store)
	w.Raw(`,"metadata":`)
	w.RawMessage(r.Metadata)
	w.Raw("}")
}

func (w *writer) tools(ts []Tool) {
	if ts == nil {
		w.Raw("null")
		return
	}
	w.Raw("[")
	for i := range ts {
		t := &ts[i]
		if i > 0 {
			w.Raw(",")
		}
		w.Raw(`{"type":`)
		w.String(t.Type)
		if t.Name != "" {
			w.Raw(`,"name":`)
			w.String(t.Name)
		}
		if t.Description != "" {
			w.Raw(`,"description":`)
			w.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			w.Raw(`,"parameters":`)
			var ok bool
			if w.B, ok = echoSchemas.Compact(w.B, t.Parameters, w.EscapeHTML); !ok {
				w.Fail()
			}
		}
		if t.Strict != nil {
			w.Raw(`,"strict":`)
			w.Bool(*t.Strict)
		}
		if len(t.Tools) > 0 {
			w.Raw(`,"tools":`)
			w.tools(t.Tools)
		}
		w.Raw("}")
	}
	w.Raw("]")
}

// item writes an item as Item.MarshalJSON does.
func (w *writer) item(it *Item) {
	w.Escaped(func() {
		switch {
		case it.Type == "function_call":
			w.Raw(`{"type":`)
			w.String(it.Type)
			w.optStr(`,"id":`, it.ID)
			w.optStr(`,"status":`, it.Status)
			w.Raw(`,"arguments":`)
			w.String(it.Arguments)
			w.Raw(`,"call_id":`)
			w.String(it.CallID)
			w.Raw(`,"name":`)
			w.String(it.Name)
			w.optStr(`,"namespace":`, it.Namespace)
			w.Raw("}")
		case it.Type == "reasoning":
			w.Raw(`{"type":`)
			w.String(it.Type)
			w.optStr(`,"id":`, it.ID)
			w.optStr(`,"status":`, it.Status)
			w.Raw(`,"summary":`)
			if it.Summary == nil {
				w.Raw("[]")
			} else {
				w.parts(it.Summary)
			}
			if it.Content != nil {
				w.Raw(`,"content":`)
				w.content(it.Content)
			}
			w.optStr(`,"encrypted_content":`, it.EncryptedContent)
			w.Raw("}")
		case it.Type == "message" && it.ID != "":
			w.Raw(`{"type":`)
			w.String(it.Type)
			w.Raw(`,"id":`)
			w.String(it.ID)
			w.optStr(`,"status":`, it.Status)
			w.Raw(`,"role":`)
			w.String(it.Role)
			w.Raw(`,"content":`)
			switch c := it.Content; {
			case c != nil && c.Parts != nil:
				w.parts(c.Parts)
			case c != nil && c.Text != "":
				w.Raw("[")
				w.part(&Part{Type: "output_text", Text: c.Text, Annotations: &noAnnotations})
				w.Raw("]")
			default:
				w.Raw("[]")
			}
			w.Raw("}")
		default:
			// The default encoding of every field, those left empty left out.
			w.Raw("{")
			n := 0
			field := func(key string) {
				if n > 0 {
					w.Raw(",")
				}
				n++
				w.Raw(key)
			}
			opt := func(key, s string) {
				if s != "" {
					field(key)
					w.String(s)
				}
			}
			opt(`"type":`, it.Type)
			opt(`"id":`, it.ID)
			opt(`"status":`, it.Status)
			opt(`"role":`, it.Role)
			if it.Content != nil {
				field(`"content":`)
				w.content(it.Content)
			}
			opt(`"call_id":`, it.CallID)
			opt(`"name":`, it.Name)
			opt(`"namespace":`, it.Namespace)
			opt(`"arguments":`, it.Arguments)
			if it.Output != nil {
				field(`"output":`)
				w.content(it.Output)
			}
			if len(it.Summary) > 0 {
				field(`"summary":`)
				w.parts(it.Summary)
			}
			opt(`"encrypted_content":`, it.EncryptedContent)
			opt(`"input":`, it.Input)
			w.Raw("}")
		}
	})
}

func (w *writer) optStr(key, s string) {
	if s != "" {
		w.Raw(key)
		w.String(s)
	}
}

// content writes content as Content.MarshalJSON does.
func (w *writer) content(c *Content) {
	if c.Parts != nil {
		w.parts(c.Parts)
		return
	}
	w.Escaped(func() { w.String(c.Text) })
}

// parts writes parts (never nil here).
func (w *writer) parts(ps []Part) { jsonfast.Array(&w.Writer, ps, w.part) }

// part writes a part as Part.MarshalJSON does.
func (w *writer) part(p *Part) {
	w.Escaped(func() {
		w.Raw(`{"type":`)
		w.String(p.Type)
		switch p.Type {
		case "output_text", "input_text", "reasoning_text", "summary_text":
			w.Raw(`,"text":`)
			w.String(p.Text)
		default:
			w.optStr(`,"text":`, p.Text)
			w.optStr(`,"refusal":`, p.Refusal)
			w.optStr(`,"image_url":`, p.ImageURL)
			w.optStr(`,"file_id":`, p.FileID)
			w.optStr(`,"filename":`, p.Filename)
		}
		if a := p.Annotations; a != nil {
			w.Raw(`,"annotations":`)
			jsonfast.Array(&w.Writer, *a, func(m *json.RawMessage) { w.RawMessage(*m) })
		}
		w.Raw("}")
	})
}

// head writes an event's type and sequence number.
func (w *writer) head(typ string, seq int) {
	w.Raw(`{"type":`)
	w.String(typ)
	w.Raw(`,"sequence_number":`)
	w.Int(int64(seq))
}

// at writes the item an event is about: its id and output index.
func (w *writer) at(itemID string, outputIndex int) {
	w.Raw(`,"item_id":`)
	w.String(itemID)
	w.Raw(`,"output_index":`)
	w.Int(int64(outputIndex))
}

// AppendJSON appends the event as encoding/json writes it.
func (e ResponseEvent) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.head(e.Type, e.SequenceNumber)
	w.Raw(`,"response":`)
	switch {
	case e.Response == nil:
		w.Raw("null")
	case e.Echo != nil && e.Echo.escapeHTML == escapeHTML:
		w.state(e.Response)
		w.B = append(w.B, e.Echo.json...)
	default:
		w.response(e.Response)
	}
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the event as encoding/json writes it.
func (e ItemEvent) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.head(e.Type, e.SequenceNumber)
	w.Raw(`,"output_index":`)
	w.Int(int64(e.OutputIndex))
	w.Raw(`,"item":`)
	if e.Item == nil {
		w.Raw("null")
	} else {
		w.item(e.Item)
	}
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the event as encoding/json writes it.
func (e PartEvent) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.head(e.Type, e.SequenceNumber)
	w.at(e.ItemID, e.OutputIndex)
	w.Raw(`,"content_index":`)
	w.Int(int64(e.ContentIndex))
	w.Raw(`,"part":`)
	w.part(&e.Part)
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the event as encoding/json writes it.
func (e TextDelta) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.head(e.Type, e.SequenceNumber)
	w.at(e.ItemID, e.OutputIndex)
	w.Raw(`,"content_index":`)
	w.Int(int64(e.ContentIndex))
	w.Raw(`,"delta":`)
	w.String(e.Delta)
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the event as encoding/json writes it.
func (e TextDone) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.head(e.Type, e.SequenceNumber)
	w.at(e.ItemID, e.OutputIndex)
	w.Raw(`,"content_index":`)
	w.Int(int64(e.ContentIndex))
	w.Raw(`,"text":`)
	w.String(e.Text)
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the event as encoding/json writes it.
func (e ArgsDelta) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.head(e.Type, e.SequenceNumber)
	w.at(e.ItemID, e.OutputIndex)
	w.Raw(`,"delta":`)
	w.String(e.Delta)
	w.Raw("}")
	return w.Done(dst)
}

// AppendJSON appends the event as encoding/json writes it.
func (e ArgsDone) AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool) {
	w := newWriter(dst, escapeHTML)
	w.head(e.Type, e.SequenceNumber)
	w.at(e.ItemID, e.OutputIndex)
	w.Raw(`,"name":`)
	w.String(e.Name)
	w.Raw(`,"arguments":`)
	w.String(e.Arguments)
	w.Raw("}")
	return w.Done(dst)
}
