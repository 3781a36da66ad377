package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/ptkit/ptk/internal/sse"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/openai/wire"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/turn"
)

// forward passes the request through to an OpenAI-compatible upstream, as
// it came (only its model named again when needed), and copies the answer
// back as it arrives, reading its usage and calls for the log line.
//
// With read, the answer is also read on its way back for calls the model
// wrote as text: a server without a tool parser takes the tools and answers
// with the model's own call format in the content. Such calls become
// tool_calls and leave the content; the rest of the answer (ids, usage,
// native calls, every other field) is kept. A stream whose client did not
// ask for the usage then asks for it, and gets it on its finishing chunk.
func (c *chatAPI) forward(x *exchange, ctx context.Context, w http.ResponseWriter, read bool) error {
	x.mode = modeNative
	var parser *protocol.Parser
	if read {
		var err error
		if parser, err = x.toolsParser(); err != nil {
			return badRequest("tools: %v", err)
		}
	}
	body := c.body
	set := obj{}
	if c.req.Model != x.up.Name {
		set["model"] = marshal(x.up.Name)
	}
	moveUsage := read && c.req.Stream && (c.req.StreamOptions == nil || !c.req.StreamOptions.IncludeUsage)
	if moveUsage {
		set["stream_options"] = json.RawMessage(`{"include_usage":true}`)
	}
	if len(set) > 0 {
		var err error
		if body, err = setFields(body, set); err != nil {
			return badRequest("the request body is not a JSON object: %v", err)
		}
	}
	resp, err := x.up.Forward.Forward(ctx, body, c.req.Stream)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	copyHeaders(w, resp)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return &llm.Error{Kind: llm.ErrConnection, Message: "reading the upstream answer: " + err.Error(), Err: err}
		}
		if read {
			data = x.readWhole(parser, data)
		}
		x.readStats(data)
		w.WriteHeader(resp.StatusCode)
		x.wrote.Store(true)
		w.Write(data)
		return nil
	}
	w.WriteHeader(resp.StatusCode)
	x.wrote.Store(true)
	rc := http.NewResponseController(w)
	rc.Flush()
	sr := &streamReader{x: x, w: w, moveUsage: moveUsage}
	if read {
		sr.ps = parser.NewStream(sr.event)
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if read {
				sr.lines(buf[:n])
			} else {
				// Passed on as it came, in one write; its lines are
				// read only for the log line's figures.
				w.Write(buf[:n])
				sr.stats(buf[:n])
			}
			rc.Flush() // what came in one read goes out at once
		}
		if err == nil {
			err = sr.split.Err()
		}
		if err == io.EOF {
			last, ok, err := sr.split.End()
			if err != nil {
				return &llm.Error{Kind: llm.ErrBadResponse, Message: "the upstream stream: " + err.Error(), Err: err}
			}
			switch {
			case ok && read:
				sr.line(last) // no line end: none added
			case ok:
				sr.stat(last)
			}
			sr.finish()
			sr.release()
			x.end(rc)
			return nil
		}
		if err != nil {
			return &llm.Error{Kind: llm.ErrConnection, Message: "the upstream stream broke: " + err.Error(), Err: err}
		}
	}
}

func copyHeaders(w http.ResponseWriter, resp *http.Response) {
	h := w.Header()
	for _, k := range []string{"Content-Type", "Cache-Control", "X-Request-Id", "Openai-Processing-Ms"} {
		if v := resp.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
}

// obj is a JSON object whose members are kept as they are.
type obj = map[string]json.RawMessage

// readWhole returns a whole answer with the calls written in its content
// made tool_calls; data itself when there are none, or it has native calls.
func (x *exchange) readWhole(p *protocol.Parser, data []byte) []byte {
	var top obj
	var choices []obj
	if json.Unmarshal(data, &top) != nil || json.Unmarshal(top["choices"], &choices) != nil || len(choices) != 1 {
		return data
	}
	var msg obj
	if json.Unmarshal(choices[0]["message"], &msg) != nil || hasValue(msg["tool_calls"]) {
		return data
	}
	var content string
	if json.Unmarshal(msg["content"], &content) != nil || content == "" {
		return data
	}
	// A reply the token limit cut may have been cut between two calls of
	// a repetition loop: say so to the parser, as the turn does.
	var reason string
	json.Unmarshal(choices[0]["finish_reason"], &reason)
	var res protocol.Parsed
	if turn.CutOff(reason) {
		res = p.ParseCut(content)
	} else {
		res = p.Parse(content)
	}
	var calls []outToolCall
	for _, c := range res.Calls {
		if x.choice.allows(c.Tool) && !(x.single && len(calls) > 0) {
			c.ID = "call_" + randomID()
			calls = append(calls, callOut(c))
		}
	}
	if len(calls) == 0 {
		return data
	}
	x.mode = modeNativeText
	if res.Text == "" {
		msg["content"] = jsonNull
	} else {
		msg["content"] = marshal(res.Text)
	}
	msg["tool_calls"] = marshal(calls)
	if res.Reasoning != "" && !hasValue(msg["reasoning_content"]) {
		msg["reasoning_content"] = marshal(res.Reasoning)
	}
	choices[0]["message"] = marshal(msg)
	choices[0]["finish_reason"] = marshal("tool_calls")
	top["choices"] = marshal(choices)
	return marshal(top)
}

func hasValue(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null" && string(raw) != "[]"
}

// marshal is v as the gateway writes JSON: HTML characters left as they
// are; empty when encoding/json refuses it.
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	encodeJSON(&b, nil, v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// jsonAppender is a wire value that writes its own JSON in one pass, byte
// for byte as encoding/json does (the wire packages' AppendJSON methods),
// or reports false to leave it to encoding/json.
type jsonAppender interface {
	AppendJSON(dst []byte, escapeHTML bool) ([]byte, bool)
}

// encodeJSON writes v and a newline to buf as an Encoder with
// SetEscapeHTML(false) does (nothing when encoding/json refuses v): in one
// pass when v writes its own JSON, and otherwise with enc, an Encoder into
// buf (nil: a new one).
func encodeJSON(buf *bytes.Buffer, enc *json.Encoder, v any) {
	if a, ok := v.(jsonAppender); ok {
		if b, ok := a.AppendJSON(buf.AvailableBuffer(), false); ok {
			buf.Write(append(b, '\n'))
			return
		}
	}
	if enc == nil {
		enc = json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
	}
	enc.Encode(v)
}

// jsonBufs are the buffers answers are written into: a Responses answer
// repeats the request's tools, and writing it into a new buffer grew it
// six times, 6.5 KB a request.
var jsonBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getJSONBuf() *bytes.Buffer {
	b := jsonBufs.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

// putJSONBuf gives b back, unless an answer made it large: a pool of
// buffers grown by the largest answers would hold their memory.
func putJSONBuf(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		jsonBufs.Put(b)
	}
}

// streamReader passes an upstream's event stream on, line by line (flushed
// after each read from the upstream), each line ended by LF whichever of
// LF, CRLF or CR ended it upstream. With a parser (ps), the content is read by it: the
// text comes out of it as it is read (a possible call held back), calls as
// tool_calls; without, every line goes on as it came.
type streamReader struct {
	x  *exchange
	w  http.ResponseWriter
	ps *protocol.Stream

	// split cuts the stream into lines; line is the one being passed on,
	// with its LF.
	split sse.Lines
	cur   []byte
	// chunks reads a stream's chunks for the log line's figures.
	chunks wire.ChunkReader

	// What the parser gave since the last event went out.
	text, reasoning strings.Builder
	calls           []outToolCall
	// emitted counts the calls read from text; nextIndex is the index the
	// next one gets (after the native calls').
	emitted, nextIndex int
	// last is the last chunk seen, the model of a chunk made up for what
	// the parser gives at the end.
	last     obj
	finished bool
	// moveUsage: the usage chunk OpenAI sends last (with no choices) is
	// put on the finishing chunk, which is held until it comes.
	moveUsage bool
	held      obj
}

func (s *streamReader) event(e protocol.Event) {
	switch e.Kind {
	case protocol.EventText:
		s.text.WriteString(e.Text)
	case protocol.EventReasoning:
		s.reasoning.WriteString(e.Text)
	case protocol.EventCallEnd:
		a := e.Attempt
		if a.Err != nil || !s.x.choice.allows(a.Call.Tool) || s.x.single && s.emitted > 0 {
			return
		}
		i := s.nextIndex
		s.nextIndex++
		s.emitted++
		s.x.mode = modeNativeText
		s.x.calls++
		c := a.Call
		c.ID = "call_" + randomID()
		s.calls = append(s.calls, callOut(c).Streamed(i)...)
	}
}

// copyBufs are the buffers a stream is copied through, 32 KiB each.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// stats reads the lines that data completes for their usage and calls,
// passing nothing on: the stream of a request forwarded as it came.
func (s *streamReader) stats(data []byte) {
	s.split.Write(data)
	for l, ok := s.split.Next(); ok; l, ok = s.split.Next() {
		s.stat(l)
	}
}

// stat reads one line of a stream passed on as it came.
func (s *streamReader) stat(l []byte) {
	if d, ok := bytes.CutPrefix(bytes.TrimSpace(l), []byte("data:")); ok {
		s.x.readChunkStats(&s.chunks, bytes.TrimSpace(d))
	}
}

// lines handles the lines that data completes.
func (s *streamReader) lines(data []byte) {
	s.split.Write(data)
	for l, ok := s.split.Next(); ok; l, ok = s.split.Next() {
		s.cur = append(append(s.cur[:0], l...), '\n')
		s.line(s.cur)
	}
	if !s.finished {
		// What this read brought is passed on now, not held in the
		// parser's batch until the next read.
		s.ps.Flush()
	}
}

// line passes one line of the stream on, rewritten when it is a chunk
// whose content the parser reads.
func (s *streamReader) line(l []byte) {
	d, ok := bytes.CutPrefix(bytes.TrimSpace(l), []byte("data:"))
	if !ok {
		s.write(l)
		return
	}
	d = bytes.TrimSpace(d)
	if string(d) == "[DONE]" {
		s.finish()
		s.release()
		s.write(l)
		return
	}
	if s.ps == nil {
		s.x.readStats(d)
		s.write(l)
		return
	}
	var top obj
	var choices []obj
	if json.Unmarshal(d, &top) != nil || json.Unmarshal(top["choices"], &choices) != nil {
		s.write(l)
		return
	}
	s.x.readUsage(top["usage"])
	if len(choices) == 0 && s.held != nil && hasValue(top["usage"]) {
		s.held["usage"] = top["usage"]
		s.release()
		return
	}
	if len(choices) != 1 {
		s.write(l)
		return
	}
	s.last = top
	ch := choices[0]
	var delta obj
	json.Unmarshal(ch["delta"], &delta)
	var native []struct {
		Index int    `json:"index"`
		ID    string `json:"id"`
	}
	if json.Unmarshal(delta["tool_calls"], &native) == nil {
		for _, n := range native {
			s.nextIndex = max(s.nextIndex, n.Index+1)
			if n.ID != "" {
				s.x.calls++
			}
		}
	}
	var content string
	json.Unmarshal(delta["content"], &content)
	if content != "" {
		s.ps.WriteString(content)
	}
	finishing := hasValue(ch["finish_reason"])
	if finishing {
		var reason string
		if json.Unmarshal(ch["finish_reason"], &reason) == nil && turn.CutOff(reason) {
			s.ps.Cut() // as the turn does: the cut may fall between a loop's calls
		}
		s.ps.Finish()
		s.finished = true
	}
	if content == "" && s.text.Len() == 0 && s.reasoning.Len() == 0 && len(s.calls) == 0 && !(finishing && s.emitted > 0) && !(finishing && s.moveUsage) {
		s.write(l) // nothing to change
		return
	}
	if delta == nil {
		delta = obj{}
	}
	s.take(delta)
	if finishing && s.emitted > 0 {
		ch["finish_reason"] = marshal("tool_calls")
	}
	if len(delta) == 0 && !finishing && !hasValue(top["usage"]) {
		return // all of it held back
	}
	ch["delta"] = marshal(delta)
	top["choices"] = marshal(choices)
	if finishing && s.moveUsage {
		s.held = top
		return
	}
	s.write(append(append([]byte("data: "), marshal(top)...), '\n'))
}

// release sends the held finishing chunk.
func (s *streamReader) release() {
	if s.held == nil {
		return
	}
	s.write(append(append([]byte("data: "), marshal(s.held)...), '\n'))
	s.write([]byte("\n"))
	s.held = nil
}

// take moves what the parser gave into delta: the text as its content
// (none when there is none), the calls after its own.
func (s *streamReader) take(delta obj) {
	if s.text.Len() > 0 {
		delta["content"] = marshal(s.text.String())
		s.text.Reset()
	} else {
		delete(delta, "content")
	}
	if s.reasoning.Len() > 0 && !hasValue(delta["reasoning_content"]) {
		delta["reasoning_content"] = marshal(s.reasoning.String())
		s.reasoning.Reset()
	}
	if len(s.calls) > 0 {
		var own []json.RawMessage
		json.Unmarshal(delta["tool_calls"], &own)
		for _, c := range s.calls {
			own = append(own, marshal(c))
		}
		delta["tool_calls"] = marshal(own)
		s.calls = s.calls[:0]
	}
}

// finish ends the parse, at the end of the stream, and sends what it gave
// in a chunk of its own when the stream had no finishing chunk.
func (s *streamReader) finish() {
	if s.finished || s.ps == nil {
		return
	}
	s.finished = true
	s.ps.Finish()
	if (s.text.Len() == 0 && s.reasoning.Len() == 0 && len(s.calls) == 0) || s.last == nil {
		return
	}
	delta := obj{}
	s.take(delta)
	top := obj{}
	for k, v := range s.last {
		top[k] = v
	}
	delete(top, "usage")
	top["choices"] = marshal([]obj{{"index": marshal(0), "delta": marshal(delta), "finish_reason": jsonNull}})
	s.write(append(append([]byte("data: "), marshal(top)...), '\n'))
	s.write([]byte("\n"))
}

func (s *streamReader) write(b []byte) { s.w.Write(b) }
