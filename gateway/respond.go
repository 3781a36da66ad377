package gateway

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/ptkit/ptk"
)

// chatResponder writes one answer in the Chat Completions shape: whole, or
// as a stream of chunks when the client asked for one.
type chatResponder struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	x       *exchange
	stream  bool
	id      string
	created int64
	model   string
	// includeUsage: the client asked for the usage in a chunk of its own.
	includeUsage bool

	text      strings.Builder
	reasoning strings.Builder
	// texted: text was given; sep: the next text starts a new paragraph.
	texted, sep bool
	calls       []outToolCall
	// deltaCalls counts the native calls passed on in pieces.
	deltaCalls int
	// dirty: chunks were written since the last flush.
	dirty bool
	buf   bytes.Buffer
	enc   *json.Encoder
	// cur, one and delta are the chunk being written, reused from one
	// chunk to the next: a chunk costs no allocation.
	cur   completion
	one   [1]choice
	delta outDelta
}

var _ responder = (*chatResponder)(nil)

func (c *chatAPI) respond(x *exchange, w http.ResponseWriter) responder {
	r := &chatResponder{w: w, x: x, stream: x.stream, id: "chatcmpl-" + randomID(), created: time.Now().Unix(), model: x.name,
		includeUsage: c.req.StreamOptions != nil && c.req.StreamOptions.IncludeUsage}
	r.enc = json.NewEncoder(&r.buf)
	r.enc.SetEscapeHTML(false)
	if r.stream {
		r.rc = http.NewResponseController(w)
	}
	return r
}

// begin writes the stream's headers and its first chunk, once.
func (r *chatResponder) begin() {
	if !r.stream || r.x.wrote.Load() {
		return
	}
	h := r.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	r.w.WriteHeader(http.StatusOK)
	r.x.wrote.Store(true)
	r.chunk(&outDelta{Role: "assistant"}, nil, nil)
}

// chunk writes one chunk of the stream (d nil: one with no choices).
func (r *chatResponder) chunk(d *outDelta, finish *string, u *usage) {
	c := &r.cur
	*c = completion{ID: r.id, Object: "chat.completion.chunk", Created: r.created, Model: r.model, Usage: u}
	if d != nil {
		r.delta = *d
		r.one[0] = choice{Delta: &r.delta, FinishReason: finish}
		c.Choices = r.one[:]
	} else {
		c.Choices = r.one[:0]
	}
	r.event(c)
}

// event writes one server-sent event holding c, into the connection's
// buffer: flush sends it.
func (r *chatResponder) event(c *completion) {
	r.buf.Reset()
	r.buf.WriteString("data: ")
	encodeJSON(&r.buf, r.enc, c)
	r.buf.WriteByte('\n')
	r.w.Write(r.buf.Bytes())
	r.dirty = true
}

// flush sends the chunks written since the last flush.
func (r *chatResponder) flush() {
	if r.dirty {
		r.dirty = false
		r.rc.Flush()
	}
}

var jsonNull = json.RawMessage("null")

func (r *chatResponder) addText(s string) {
	if s == "" {
		return
	}
	if r.sep && r.texted {
		s = "\n\n" + s
	}
	r.sep, r.texted = false, true
	if r.stream {
		r.begin()
		r.chunk(&outDelta{Content: outText(s)}, nil, nil)
		return
	}
	r.text.WriteString(s)
}

func (r *chatResponder) addReasoning(s string) {
	if s == "" {
		return
	}
	if r.stream {
		r.begin()
		r.chunk(&outDelta{ReasoningContent: outText(s)}, nil, nil)
		return
	}
	r.reasoning.WriteString(s)
}

func (r *chatResponder) separate()       { r.sep = true }
func (r *chatResponder) stop()           {}
func (r *chatResponder) streaming() bool { return r.stream }
func (r *chatResponder) hasText() bool   { return r.texted }
func (r *chatResponder) callCount() int  { return len(r.calls) + r.deltaCalls }

// addCall adds a complete call. In a stream it is two chunks, as OpenAI
// sends them: the call's index, id and name, then its arguments.
func (r *chatResponder) addCall(c ptk.Call) {
	r.x.calls++
	tc := callOut(c)
	r.calls = append(r.calls, tc)
	if !r.stream {
		return
	}
	r.begin()
	pieces := tc.Streamed(len(r.calls) - 1)
	r.chunk(&outDelta{ToolCalls: pieces[:1]}, nil, nil)
	r.chunk(&outDelta{ToolCalls: pieces[1:]}, nil, nil)
}

// callOut is a call as the API writes it.
func callOut(c ptk.Call) outToolCall {
	tc := outToolCall{ID: c.ID, Type: "function"}
	tc.Function.Name, tc.Function.Arguments = c.Tool, arguments(compactArgs(c.Args))
	return tc
}

// addCallDelta passes on a piece of a native call in a stream, as it came:
// the first piece of a call carries its id and name.
func (r *chatResponder) addCallDelta(index int, id, name, args string) {
	tc := outToolCall{Index: &index, ID: id}
	if id != "" || name != "" {
		r.x.calls++
		r.deltaCalls++
		tc.Type = "function"
	}
	tc.Function.Name, tc.Function.Arguments = name, arguments(args)
	r.begin()
	r.chunk(&outDelta{ToolCalls: []outToolCall{tc}}, nil, nil)
}

// finish ends the answer. The usage goes in every answer: a stream whose
// client asked for it (stream_options.include_usage) gets OpenAI's last
// chunk with no choices; other streams get it on the chunk that finishes.
func (r *chatResponder) finish(upstream string, u ptk.Usage) {
	reason := finishReason(upstream, r.callCount() > 0)
	out := usageOf(u)
	if !r.stream {
		msg := &outMessage{Role: "assistant", ReasoningContent: outText(r.reasoning.String())}
		if t := outText(r.text.String()); t != "" || len(r.calls) == 0 {
			msg.Content = &t
		}
		msg.ToolCalls = r.calls
		c := completion{ID: r.id, Object: "chat.completion", Created: r.created, Model: r.model, Usage: out,
			Choices: []choice{{Message: msg, FinishReason: &reason}}}
		r.x.wrote.Store(true)
		writeJSON(r.w, http.StatusOK, &c)
		return
	}
	r.begin()
	if r.includeUsage {
		r.chunk(&outDelta{}, &reason, nil)
		r.chunk(nil, nil, out)
	} else {
		r.chunk(&outDelta{}, &reason, out)
	}
	r.w.Write([]byte("data: [DONE]\n\n"))
	r.dirty = false
	r.x.end(r.rc)
}

// finishReason is the finish_reason of an answer.
func finishReason(upstream string, calls bool) string {
	switch {
	case calls:
		return "tool_calls"
	case upstream == "length" || upstream == "content_filter":
		return upstream
	}
	return "stop"
}

// writeStreamError ends a stream that has begun with an error event, which
// the OpenAI SDKs raise as an error.
func writeStreamError(w http.ResponseWriter, e *httpError) {
	var body apiError
	body.Error.Message, body.Error.Type = e.msg, e.typ
	if e.code != "" {
		body.Error.Code = &e.code
	}
	var b bytes.Buffer
	b.WriteString("data: ")
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(body)
	b.WriteByte('\n')
	w.Write(b.Bytes())
	http.NewResponseController(w).Flush()
}

// compactArgs is a call's arguments as the JSON text a client reads: compact,
// and {} when there are none.
func compactArgs(args json.RawMessage) string {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if json.Compact(&b, args) == nil {
		return b.String()
	}
	return string(args)
}

// randomID is 24 random letters and digits, as in OpenAI's ids.
func randomID() string {
	const digits = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [24]byte
	for i := range b {
		b[i] = digits[rand.IntN(len(digits))]
	}
	return string(b[:])
}
