package dialect

import (
	"io"
	"unsafe"

	"github.com/ptkit/ptk/dialect/internal/inbuf"
	"github.com/ptkit/ptk/dialect/result"
)

// Config is what the scanner needs to know of the parser that runs it. It
// must not change while a parse uses it.
type Config struct {
	// Declared reports that tools are declared: some constructs (bare JSON,
	// name(...) in prose) are calls only when they name one.
	Declared bool
	// Lookup reports whether name is a declared tool (exactly, or also by a
	// close spelling), and whether its schema requires arguments.
	Lookup func(name string, exact bool) (found, requiresArgs bool)
	// Finish checks a call read from the reply against the declared tools and
	// makes it an Attempt with id, with what was wrong or repaired.
	Finish func(c RawCall, id string) (result.Attempt, []result.Diagnostic)
	// InThink: the reply begins inside a reasoning block.
	InThink bool
	// IDPrefix starts the ids of the calls, numbered from 1.
	IDPrefix string
}

// known reports whether name is a declared tool.
func (c *Config) known(name string, exact bool) bool {
	found, _ := c.Lookup(name, exact)
	return found
}

// Parse reads a whole reply.
func Parse(cfg *Config, text string) result.Parsed { return parse(cfg, text, false) }

// ParseCut reads a whole reply that the model's token limit cut off (the
// provider said so): the repetition loop rule counts it cut off wherever it
// ended (loop.go).
func ParseCut(cfg *Config, text string) result.Parsed { return parse(cfg, text, true) }

func parse(cfg *Config, text string, cut bool) result.Parsed {
	m := getMachine(cfg, nil)
	r := m.parse(text, cut)
	putMachine(m)
	return r
}

// parse reads the whole text with m, new.
func (m *machine) parse(text string, cut bool) result.Parsed {
	m.loop.limit = cut
	// The machine never writes to its input: read the string in place.
	m.buf = unsafe.Slice(unsafe.StringData(text), len(text))
	m.eof = true
	m.run()
	m.judgeLoop()
	return m.result()
}

// Stream reads a reply chunk by chunk. Create one with NewStream, Write the
// chunks as they arrive, then call Finish. A Stream is for one reply and one
// goroutine.
type Stream struct {
	// m reads the reply; Finish hands it to the next parse and keeps what
	// it read in res.
	m   *machine
	res result.Parsed
	// unread counts the bytes at the end of m.buf taken in and not read yet
	// (see maxDeferred); Finish sets it past maxDeferred, so that a Write
	// takes the slow path, which fails.
	unread int
	// room is m.buf's unused capacity, up to maxDeferred bytes: small chunks
	// are copied there, m.buf extended over them when they are read.
	room []byte
	// pooled is the pool's slice header m.buf came from, reused to put a
	// buffer back without an allocation.
	pooled *[]byte
}

var (
	_ io.Writer       = (*Stream)(nil)
	_ io.StringWriter = (*Stream)(nil)
)

// NewStream starts reading a streamed reply. emit, if not nil, receives the
// events as they happen, from inside Write and Finish. The concatenated
// EventText texts are exactly the final Parsed.Text.
func NewStream(cfg *Config, emit func(result.Event)) *Stream {
	s := &Stream{m: getMachine(cfg, emit)}
	s.m.stream = true
	s.m.buf, s.pooled = inbuf.Get()
	s.room = s.m.buf[:min(cap(s.m.buf), maxDeferred)]
	return s
}

// Write feeds the next chunk. It fails only after Finish.
func (s *Stream) Write(b []byte) (int, error) {
	if n := s.unread + len(b); n <= len(s.room) {
		s.unread = n
		return copy(s.room[n-len(b):], b), nil
	}
	return s.write(b, "")
}

// WriteString feeds the next chunk. It fails only after Finish.
func (s *Stream) WriteString(str string) (int, error) {
	// A reply streamed in token-sized deltas makes a million of these
	// calls per MiB: the common case copies and returns.
	if n := s.unread + len(str); n <= len(s.room) {
		if len(str) <= 8 { // a call of memmove costs more
			p := s.room[s.unread:n]
			for i := range p {
				p[i] = str[i]
			}
		} else {
			copy(s.room[s.unread:], str)
		}
		s.unread = n
		return len(str), nil
	}
	return s.write(nil, str)
}

func (s *Stream) write(b []byte, str string) (int, error) {
	if s.unread > maxDeferred {
		return 0, errFinished
	}
	m := s.m
	m.buf = m.buf[:len(m.buf)+s.unread] // the small chunks in room
	m.buf = inbuf.Grow(m.buf, len(b)+len(str))
	m.buf = append(m.buf, b...)
	m.buf = append(m.buf, str...)
	s.unread = 0
	m.run()
	m.flushEvents()
	if len(m.buf) == cap(m.buf) {
		m.buf = inbuf.Grow(m.buf, 1)
	}
	s.room = m.buf[len(m.buf):min(cap(m.buf), len(m.buf)+maxDeferred)]
	return len(b) + len(str), nil
}

// maxDeferred bounds how many bytes of small chunks a stream takes in
// before it reads them.
const maxDeferred = 1024

// A Stream takes small chunks in without reading them at once, up to
// maxDeferred bytes: reading later never changes what is read (a decision
// depends only on the bytes, never on where a chunk ended), and for a reply
// streamed in token-sized deltas of 1 to 6 bytes it saves a pass of the
// machine per delta. Events are delayed by at most maxDeferred bytes, or
// until Flush; a larger chunk is read at once.

// Flush reads the small chunks taken in and not read yet, so that their
// events come now: for a caller that streams to a person and would rather
// not wait for maxDeferred bytes when the model writes slowly. What is read
// does not change.
func (s *Stream) Flush() {
	if s != nil && s.unread > 0 && s.unread <= maxDeferred {
		s.write(nil, "")
	}
}

// Cut tells the stream, before Finish, that the model's token limit cut the
// reply off (the provider said so): Finish then returns what ParseCut
// returns for the whole text.
func (s *Stream) Cut() {
	if s != nil && s.m != nil {
		s.m.loop.limit = true
	}
}

// Finish ends the reply and returns the Parsed reply, the same as Parse would
// give on the whole text.
func (s *Stream) Finish() result.Parsed {
	if m := s.m; m != nil {
		m.buf = m.buf[:len(m.buf)+s.unread]
		s.unread, s.room = maxDeferred+1, nil
		m.eof = true
		m.run()
		m.judgeLoop()
		m.flushEvents()
		s.recycle()
		s.res = m.result()
		s.m = nil
		putMachine(m)
	}
	return s.res
}

// holds reports whether b lies in the machine's buffer.
func (m *machine) holds(b []byte) bool {
	if len(m.buf) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&m.buf[0]))
	return p >= lo && p < lo+uintptr(cap(m.buf))
}

// recycle hands the finished stream's input buffer to the next stream;
// nothing a stream reports points into it, but a call's arguments may be a
// slice of it (machine.shared).
func (s *Stream) recycle() {
	inbuf.Put(s.m.buf, s.pooled, s.m.shared)
	s.m.buf, s.pooled = nil, nil
}

type finishedError struct{}

func (finishedError) Error() string { return "protocol: write after Finish" }

var errFinished error = finishedError{}

// growText makes room for n more bytes of text, in a new array when it
// grows (text already reported is never moved or written over), doubling its
// capacity. The first is the input's size when the whole input is there and
// small (a reply read whole, or a short stream read at its end), which the
// text rarely exceeds: prose alone takes one buffer of its size, returned
// as it is (textResult); else 256 bytes.
func (m *machine) growText(n int) {
	b := m.text
	if len(b)+n <= cap(b) {
		return
	}
	c := max(2*cap(b), len(b)+n, minText)
	if cap(b) == 0 && m.eof {
		c = max(n, min(len(m.buf), maxFirstText))
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	m.text = nb
}

// The first text buffer's size: minText streamed, up to maxFirstText read
// whole.
const (
	minText      = 256
	maxFirstText = 4096
)

// toolPrefix returns the longest declared tool name that s starts with.
func (m *machine) toolPrefix(s string) (string, bool) {
	for n := len(s) - 1; n > 0; n-- {
		if m.cfg.Declared && m.cfg.known(s[:n], true) {
			return s[:n], true
		}
	}
	return "", false
}

// declared reports whether name may be a call's tool: a declared tool, or
// any name when none is declared.
func (m *machine) declared(name string) bool {
	return !m.cfg.Declared || m.cfg.known(name, false)
}
