package sse

import (
	"bufio"
	"bytes"
	"io"
)

// MaxLine is the longest line a Reader accepts, terminator excluded.
const MaxLine = 16 << 20

// Event is one server-sent event.
type Event struct {
	// Type is the event's "event:" field; empty means the default, "message".
	Type string
	// Data is the event's "data:" lines joined by "\n". It is valid until the
	// next call to Next.
	Data []byte
}

// Reader reads server-sent events, the text/event-stream format of the
// HTML standard: lines ended by LF, CRLF or CR; "field: value" lines, with
// or without the space; ":" comments; a blank line ends an event. It keeps
// "event" and "data" and ignores "id", "retry" and unknown fields. It
// depends on nothing in this package, so that other providers can share it.
type Reader struct {
	sc      *bufio.Scanner
	data    []byte
	started bool // a line has been read (a byte-order mark may open the first)
	afterCR bool // the last line ended with CR: an LF that follows is part of it
	scanned int  // bytes at the start of the scanner's buffer known to hold no line end
	partial bool // the last line ended with the stream, without a terminator
}

func NewReader(r io.Reader) *Reader {
	s := &Reader{sc: bufio.NewScanner(r)}
	s.sc.Buffer(make([]byte, 0, 4096), MaxLine)
	s.sc.Split(s.splitLines)
	return s
}

// Next returns the next event that has data, or io.EOF at the end of the
// stream. An event whose lines all arrived but whose closing blank line did
// not is returned; one whose last line was cut off is not. Any other error
// is the underlying reader's, or bufio.ErrTooLong for a line longer than
// MaxLine.
func (s *Reader) Next() (Event, error) {
	var typ string
	s.data = s.data[:0]
	hasData := false
	for s.sc.Scan() && !s.partial {
		line := s.sc.Bytes()
		if !s.started {
			s.started = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if len(line) == 0 {
			if hasData {
				return Event{Type: typ, Data: s.data}, nil
			}
			typ = ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			hasData = true
		case "event":
			typ = string(value)
		}
	}
	if err := s.sc.Err(); err != nil {
		return Event{}, err
	}
	if hasData && !s.partial {
		return Event{Type: typ, Data: s.data}, nil
	}
	return Event{}, io.EOF
}

// splitLines is a bufio.SplitFunc for lines ended by LF, CRLF or CR. A CR
// ends its line at once, so that an event is never held back waiting for
// the byte after it; an LF right after it is skipped with the next line.
func (s *Reader) splitLines(data []byte, atEOF bool) (int, []byte, error) {
	start := 0
	if s.afterCR && len(data) > 0 && data[0] == '\n' {
		start = 1
	}
	from := min(max(start, s.scanned), len(data))
	if i := bytes.IndexAny(data[from:], "\r\n"); i >= 0 {
		i += from
		s.scanned = 0
		s.afterCR = data[i] == '\r'
		return i + 1, data[start:i], nil
	}
	if atEOF && len(data) > start {
		s.partial = true
		return len(data), data[start:], nil
	}
	s.scanned = len(data)
	return 0, nil, nil
}
