package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// DefaultKeepAlive is how often a stream of the agents' APIs says it is
// alive while the model has nothing to send (Config.KeepAlive).
const DefaultKeepAlive = 10 * time.Second

// sseWriter writes a stream of named events ("event: NAME", "data: JSON"),
// as the Anthropic Messages and Responses APIs send them. It begins the
// stream (headers, status 200, the API's first events) at its first event;
// while the model is slow to answer, a keep-alive begins it and then
// repeats every keepAlive, from a timer's goroutine, so that every write
// holds mu.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	x  *exchange

	// opening is the API's first events, keepAlive its keep-alive, as
	// written: fixed when the writer is made, since the keep-alive's
	// goroutine writes them.
	opening, keepAlive []byte
	every              time.Duration

	mu             sync.Mutex
	begun, stopped bool
	// dirty: events were written since the last flush.
	dirty bool
	timer *time.Timer
	// buf holds the events written since they were last given to w: a
	// piece of the model's answer makes several, which go to w in one
	// Write (drain) when the exchange flushes, instead of one Write each.
	buf bytes.Buffer
	enc *json.Encoder
}

// sseBufs holds the buffers of streams that ended (their events, and an
// opening of minSSEBuf bytes or more), for the next streams: a stream's
// buffer grew by doubling from nothing each time, and a Responses stream
// writes the request's tools three times (its opening and its last
// event), about 17 KB of buffers a request for the benchmark's five tools.
var sseBufs sync.Pool // of *[]byte

// A buffer is kept for another stream when its capacity is within these.
const (
	minSSEBuf = 4 << 10
	maxSSEBuf = 64 << 10
)

// sseBuf returns an empty buffer of at least n bytes' capacity, from
// sseBufs when one there is large enough.
func sseBuf(n int) []byte {
	if p, ok := sseBufs.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, max(n, minSSEBuf))
}

// putSSEBuf gives b to sseBufs; nothing may use it after.
func putSSEBuf(b []byte) {
	if cap(b) >= minSSEBuf && cap(b) <= maxSSEBuf {
		b = b[:0]
		sseBufs.Put(&b)
	}
}

// init readies the writer for w, its buffer with room for room bytes of
// events, and starts its keep-alive when every is above zero. The writer
// owns opening: it gives it to sseBufs once written.
func (s *sseWriter) init(x *exchange, w http.ResponseWriter, every time.Duration, opening, keepAlive []byte, room int) {
	s.w, s.x, s.rc = w, x, http.NewResponseController(w)
	s.opening, s.keepAlive, s.every = opening, keepAlive, every
	s.buf = *bytes.NewBuffer(sseBuf(room))
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	if every > 0 {
		s.mu.Lock() // the timer's goroutine reads s.timer
		s.timer = time.AfterFunc(every, s.tick)
		s.mu.Unlock()
	}
}

// tick is the keep-alive: it begins the stream if need be, says the
// stream is alive, and comes again after every.
func (s *sseWriter) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.begin()
	s.buf.Write(s.keepAlive)
	s.drain()
	s.dirty = false
	s.rc.Flush()
	s.timer.Reset(s.every)
}

// begin writes the headers and the API's first events, once. mu is held.
func (s *sseWriter) begin() {
	if s.begun {
		return
	}
	s.begun = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.x.wrote.Store(true)
	s.w.Write(s.opening) // fixed bytes, given to w as they are: no copy in buf
	putSSEBuf(s.opening) // net/http copied it, or wrote it
	s.opening = nil
	s.dirty = true
}

// drain gives w the events written since it last did, mu held.
func (s *sseWriter) drain() {
	if s.buf.Len() > 0 {
		s.w.Write(s.buf.Bytes())
		s.buf.Reset()
	}
}

// sseEvent is one event as the stream writes it.
func sseEvent[E jsonAppender](name string, v E) []byte {
	var b bytes.Buffer
	appendSSEEvent(&b, nil, name, v)
	return b.Bytes()
}

// appendSSEEvent writes one event to b: its data is v's JSON on one line
// (none when encoding/json refuses v), written by v itself, or by enc (nil:
// a new Encoder) when v leaves it to encoding/json. The functions that
// write an event are generic over its type, so that an event is written
// without being boxed in an interface: a stream is a dozen events or more.
func appendSSEEvent[E jsonAppender](b *bytes.Buffer, enc *json.Encoder, name string, v E) {
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	if out, ok := v.AppendJSON(b.AvailableBuffer(), false); ok {
		b.Write(out)
	} else {
		if enc == nil {
			enc = json.NewEncoder(b)
			enc.SetEscapeHTML(false)
		}
		n := b.Len()
		if enc.Encode(v); b.Len() > n {
			b.Truncate(b.Len() - 1) // the Encoder's newline
		}
	}
	b.WriteString("\n\n")
}

// sseWrite writes one event after those not yet given to w, s.mu held.
func sseWrite[E jsonAppender](s *sseWriter, name string, v E) {
	appendSSEEvent(&s.buf, s.enc, name, v)
	s.dirty = true
}

// writeRaw writes one event whose data is as it is, mu held.
func (s *sseWriter) writeRaw(name string, data []byte) {
	s.buf.WriteString("event: ")
	s.buf.WriteString(name)
	s.buf.WriteString("\ndata: ")
	s.buf.Write(data)
	s.buf.WriteString("\n\n")
	s.dirty = true
}

// sseSend writes one event into the writer's buffer: the exchange flushes
// once the answer has written what one piece of the model's answer makes
// (a call is three or four events, which go out in one write).
func sseSend[E jsonAppender](s *sseWriter, name string, v E) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.begin()
	sseWrite(s, name, v)
}

// flush sends what the events wrote since the last flush.
func (s *sseWriter) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.begun && !s.stopped && s.dirty {
		s.dirty = false
		s.drain()
		s.rc.Flush()
	}
}

// last writes the stream's last events with f (mu held: sseWrite), sends them
// (exchange.end) and stops the writer.
func (s *sseWriter) last(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.begin()
	f()
	s.drain()
	s.dirty = false
	s.x.end(s.rc)
	s.halt()
}

// stop ends the keep-alive: nothing is written once it returns. Events
// written and not yet given to w are given to it first, for net/http to
// send as the handler returns.
func (s *sseWriter) stop() {
	s.mu.Lock()
	if !s.stopped {
		s.drain()
	}
	s.halt()
	s.mu.Unlock()
}

// halt stops the writer, mu held, and gives its buffers to sseBufs:
// nothing is written once stopped.
func (s *sseWriter) halt() {
	s.stopped = true
	if s.timer != nil {
		s.timer.Stop()
	}
	if s.opening != nil {
		putSSEBuf(s.opening)
		s.opening = nil
	}
	s.buf.Reset()
	putSSEBuf(s.buf.AvailableBuffer())
	s.buf = bytes.Buffer{}
}

// fail ends the answer with an error: as the stream's last event when the
// stream has begun (streamErr, mu held), and otherwise as a whole error
// answer (whole); either way the writer stops, so that a keep-alive cannot
// begin a stream under the error.
func (s *sseWriter) fail(whole, streamErr func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.begun:
		whole()
	case !s.stopped:
		streamErr()
		s.drain()
		s.dirty = false
		s.rc.Flush()
	}
	s.halt()
}
