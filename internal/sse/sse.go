// Package sse reads server-sent events, the text/event-stream format of
// the WHATWG HTML standard (section 9.2, "Server-sent events"), for the
// provider clients under llm/ and for the gateway, which reads an upstream's
// stream as it passes it on.
//
// It has two layers. [Lines] cuts a byte stream into lines as the format
// does (ended by LF, CRLF or CR; one leading byte-order mark dropped) and is
// fed as bytes arrive, so a caller that passes lines on can flush once per
// read. [Reader] reads whole events from an io.Reader on top of it,
// interpreting the fields as the standard says: "data" lines joined by LF,
// "event" (the type), "id" (the last event ID, kept from one event to the
// next; ignored when it holds a NUL), "retry" (the reconnection time, only
// ASCII digits), ":" comments and unknown fields ignored, a field name
// without a colon taken whole with an empty value, one space after the
// colon dropped, and a blank line dispatching the event when it has data.
//
// One difference from the standard, on purpose: at the end of the stream an
// event whose lines all arrived whole but whose closing blank line did not
// is dispatched (some servers close the connection right after the last
// data line), while one whose last line was cut off is not.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"time"
)

// MaxLine is the longest line a Reader or Lines accepts, terminator
// excluded.
const MaxLine = 16 << 20

// bom is the byte-order mark that may open a stream, in UTF-8.
const bom = "\uFEFF"

// Lines cuts a byte stream into lines ended by LF, CRLF or CR. Write what
// arrives, then take the complete lines with Next; at the end of the
// stream, End returns the last line if it had no terminator. A CR ends its
// line at once, so a line is never held back waiting for the byte after
// it: an LF right after it is skipped with the next line. The zero value is
// ready to use.
type Lines struct {
	// Max, when above zero, is the longest line accepted instead of
	// MaxLine.
	Max int

	buf     []byte
	off     int  // buf[off:] has not been returned
	scanned int  // buf[off:off+scanned] holds no line end
	afterCR bool // the last line ended with CR: an LF that follows is part of it
	started bool // a line has been returned (a byte-order mark may open the first)
	err     error
}

// Write adds p, the next bytes of the stream. It never fails; the lines
// Next returned before are no longer valid.
func (l *Lines) Write(p []byte) (int, error) {
	l.compact()
	l.buf = append(l.buf, p...)
	return len(p), nil
}

// minRead is the least room ReadOnce reads into.
const minRead = 4096

// ReadOnce reads from r once, into the buffer itself: Write without a
// copy. The lines Next returned before are no longer valid.
func (l *Lines) ReadOnce(r io.Reader) (int, error) {
	l.compact()
	if l.buf == nil {
		l.buf = (*bufs.Get().(*[]byte))[:0]
	}
	if cap(l.buf)-len(l.buf) < minRead {
		rest := l.buf[l.off:]
		buf := make([]byte, len(rest), max(2*cap(l.buf), len(rest)+minRead))
		copy(buf, rest)
		l.buf, l.off = buf, 0
	}
	n, err := r.Read(l.buf[len(l.buf):cap(l.buf)])
	l.buf = l.buf[:len(l.buf)+n]
	return n, err
}

// A stream's first read takes a buffer of firstRead bytes from bufs (an
// answer's events fit in it), and Reader.Close gives it back, so that a
// program that reads many streams (the gateway) does not allocate one for
// each; one grown past maxPooled is left to the collector.
const (
	firstRead = 16 << 10
	maxPooled = 64 << 10
)

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, firstRead); return &b }}

// release gives the buffer back to bufs; the lines returned before are no
// longer valid.
func (l *Lines) release() {
	if l.buf != nil && cap(l.buf) <= maxPooled {
		b := l.buf[:0]
		bufs.Put(&b)
	}
	l.buf, l.off, l.scanned = nil, 0, 0
}

// compact moves what has not been returned to the start of the buffer,
// when that frees half of it or more.
func (l *Lines) compact() {
	if l.off == len(l.buf) {
		l.buf, l.off = l.buf[:0], 0
	} else if l.off > 0 && l.off >= len(l.buf)/2 {
		n := copy(l.buf, l.buf[l.off:])
		l.buf, l.off = l.buf[:n], 0
	}
}

// Next returns the next complete line, without its terminator; ok is false
// when no complete line is held (write more, or call End). The line is
// valid until the next Write.
func (l *Lines) Next() (line []byte, ok bool) {
	if l.err != nil {
		return nil, false
	}
	if l.afterCR && l.off < len(l.buf) {
		l.afterCR = false
		if l.buf[l.off] == '\n' {
			l.off++
		}
	}
	rest := l.buf[l.off:]
	if i := indexEOL(rest[min(l.scanned, len(rest)):]); i >= 0 {
		i += min(l.scanned, len(rest))
		if i > l.max() {
			l.err = bufio.ErrTooLong
			return nil, false
		}
		line = rest[:i]
		l.afterCR = rest[i] == '\r'
		l.off += i + 1
		l.scanned = 0
		return l.first(line), true
	}
	l.scanned = len(rest)
	if len(rest) > l.max() {
		l.err = bufio.ErrTooLong
	}
	return nil, false
}

// indexEOL returns the index of the first CR or LF in b, or -1, as
// bytes.IndexAny(b, "\r\n") does: but with two IndexByte scans, which run
// many bytes at a time, where IndexAny tests each byte against a set. Every
// byte of a stream is scanned twice (Next, then Buffered): reading a
// 33-event answer (BenchmarkReader) took half the time it did with
// IndexAny.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	return i
}

// End returns what is left at the end of the stream: the last line when it
// had no terminator (ok is true), and bufio.ErrTooLong when a line was
// longer than the maximum.
func (l *Lines) End() (line []byte, ok bool, err error) {
	if l.err != nil {
		return nil, false, l.err
	}
	if l.afterCR && l.off < len(l.buf) && l.buf[l.off] == '\n' {
		l.off++
	}
	l.afterCR = false
	rest := l.buf[l.off:]
	l.off = len(l.buf)
	if len(rest) > l.max() {
		l.err = bufio.ErrTooLong
		return nil, false, l.err
	}
	if len(rest) == 0 {
		return nil, false, nil
	}
	return l.first(rest), true, nil
}

// Err reports a line longer than the maximum (bufio.ErrTooLong).
func (l *Lines) Err() error { return l.err }

// first drops the byte-order mark from the first line of the stream.
func (l *Lines) first(line []byte) []byte {
	if !l.started {
		l.started = true
		line = bytes.TrimPrefix(line, []byte(bom))
	}
	return line
}

func (l *Lines) max() int {
	if l.Max > 0 {
		return l.Max
	}
	return MaxLine
}

// Event is one server-sent event.
type Event struct {
	// Type is the event's "event:" field; empty means the default,
	// "message".
	Type string
	// Data is the event's "data:" lines joined by "\n". It is valid until
	// the next call to Next.
	Data []byte
	// ID is the last event ID when the event was dispatched: the value of
	// the last "id:" field of this event or of one before it.
	ID string
}

// Reader reads server-sent events from a byte stream.
type Reader struct {
	r     io.Reader
	lines Lines

	typ     string
	types   [8]string // the event types last seen (intern)
	ntypes  int
	data    []byte
	hasData bool
	id      string // the last event ID buffer
	lastID  string // the last event ID, set when an event is dispatched
	retry   time.Duration
	eof     bool
	err     error
}

// NewReader returns a Reader of the events in r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r}
}

// Next returns the next event that has data, or io.EOF at the end of the
// stream. An event whose lines all arrived but whose closing blank line did
// not is returned; one whose last line was cut off is not. Any other error
// is the underlying reader's, or bufio.ErrTooLong for a line longer than
// MaxLine.
func (s *Reader) Next() (Event, error) {
	for {
		if line, ok := s.lines.Next(); ok {
			if ev, ok := s.line(line); ok {
				return ev, nil
			}
			continue
		}
		if err := s.lines.Err(); err != nil {
			return Event{}, err
		}
		if s.err != nil {
			return Event{}, s.err
		}
		if s.eof {
			return s.end()
		}
		_, err := s.lines.ReadOnce(s.r)
		switch {
		case err == io.EOF:
			s.eof = true
		case err != nil:
			s.err = err
		}
	}
}

// Buffered reports whether the next event is held already: Next will
// return it without reading. A caller that passes events on in batches
// (the gateway, which writes what an upstream read brought in one write)
// sends its batch when Buffered is false, before Next waits for the
// network. It reads nothing and changes nothing; false may also mean that
// Next will return an error or the end of the stream.
func (s *Reader) Buffered() bool {
	l := &s.lines
	if s.err != nil || l.err != nil {
		return false
	}
	rest := l.buf[l.off:]
	afterCR, first, hasData := l.afterCR, !l.started, s.hasData
	for {
		if afterCR && len(rest) > 0 && rest[0] == '\n' {
			rest = rest[1:]
		}
		i := indexEOL(rest)
		if i < 0 {
			return false
		}
		line := rest[:i]
		afterCR, rest = rest[i] == '\r', rest[i+1:]
		if first {
			line, first = bytes.TrimPrefix(line, []byte(bom)), false
		}
		switch {
		case len(line) == 0:
			if hasData {
				return true
			}
		case line[0] == ':':
		default:
			if name, _, _ := bytes.Cut(line, []byte(":")); string(name) == "data" {
				hasData = true
			}
		}
	}
}

// Close gives the reader's buffer back for another stream: neither the
// events it returned nor the reader may be used after. It does not close
// the underlying reader.
func (s *Reader) Close() {
	s.lines.release()
	s.err = errClosed
}

var errClosed = errors.New("sse: Next after Close")

// end reads what is left at the end of the stream: the last event, when
// all its lines arrived whole.
func (s *Reader) end() (Event, error) {
	last, cut, err := s.lines.End()
	switch {
	case err != nil:
		return Event{}, err
	case cut:
		_ = last // the last line was cut off: its event is not dispatched
		s.data, s.hasData, s.typ = s.data[:0], false, ""
	case s.hasData:
		return s.dispatch(), nil
	}
	return Event{}, io.EOF
}

// line interprets one line; it returns the event a blank line dispatches.
func (s *Reader) line(line []byte) (Event, bool) {
	if len(line) == 0 {
		if !s.hasData {
			s.lastID = s.id
			s.typ = ""
			return Event{}, false
		}
		return s.dispatch(), true
	}
	if line[0] == ':' {
		return Event{}, false
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "data":
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		s.hasData = true
	case "event":
		s.typ = s.intern(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 && string(value) != s.id {
			s.id = string(value)
		}
	case "retry":
		if ms, ok := digits(value); ok {
			s.retry = time.Duration(ms) * time.Millisecond
		}
	}
	return Event{}, false
}

// intern returns an event type as a string without a copy when it is one
// of the last few seen: a stream repeats a handful (Anthropic's
// content_block_delta, ping...), and copying each was an allocation per
// event.
func (s *Reader) intern(v []byte) string {
	for _, t := range s.types[:min(s.ntypes, len(s.types))] {
		if string(v) == t {
			return t
		}
	}
	t := string(v)
	s.types[s.ntypes%len(s.types)] = t
	s.ntypes++
	return t
}

// dispatch ends the event being read and returns it.
func (s *Reader) dispatch() Event {
	s.lastID = s.id
	ev := Event{Type: s.typ, Data: s.data, ID: s.lastID}
	s.typ, s.hasData = "", false
	s.data = s.data[:0]
	return ev
}

// digits reads a "retry" value: ASCII digits only, at least one.
func digits(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (1<<63-1)/10/int64(time.Millisecond) {
			return 0, false // beyond what a Duration holds
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// LastEventID is the ID of the last event dispatched, what a client that
// reconnects sends as Last-Event-ID.
func (s *Reader) LastEventID() string { return s.lastID }

// Retry is the reconnection time the stream asked for ("retry:"), 0 when
// it did not.
func (s *Reader) Retry() time.Duration { return s.retry }
