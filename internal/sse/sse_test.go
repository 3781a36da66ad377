package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ptkit/ptk/internal/splitread"
)

type event struct{ Type, Data string }

var sseTests = []struct {
	name, in string
	want     []event
}{
	{"two events", "data: a\n\ndata: b\n\n", []event{{"", "a"}, {"", "b"}}},
	{"no space after the colon", "data:a\n\n", []event{{"", "a"}}},
	{"only one space is dropped", "data:  a \n\n", []event{{"", " a "}}},
	{"multi-line data", "data: a\ndata:\ndata: b\n\n", []event{{"", "a\n\nb"}}},
	{"comments", ": OPENROUTER PROCESSING\n\n: keep-alive\ndata: a\n: between\n\n", []event{{"", "a"}}},
	{"CRLF", "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n", []event{{"", "a\nb"}, {"", "c"}}},
	{"CR", "data: a\r\rdata: b\r\r", []event{{"", "a"}, {"", "b"}}},
	{"mixed line ends", "data: a\r\n\rdata: b\n\r\ndata: c\r\n\n", []event{{"", "a"}, {"", "b"}, {"", "c"}}},
	{"event type", "event: error\ndata: {\"error\":{}}\n\ndata: x\n\n", []event{{"error", `{"error":{}}`}, {"", "x"}}},
	{"event without data is not dispatched", "event: ping\n\ndata: a\n\n", []event{{"", "a"}}},
	{"empty data is dispatched", "data:\n\ndata\n\n", []event{{"", ""}, {"", ""}}},
	{"id, retry and unknown fields are ignored", "id: 7\nretry: 100\nerror: x\ndata: a\n\n", []event{{"", "a"}}},
	{"byte-order mark", "\uFEFFdata: a\n\n", []event{{"", "a"}}},
	{"DONE is data", "data: [DONE]\n\n", []event{{"", "[DONE]"}}},
	{"blank lines only", "\n\r\n\r\n", nil},
	{"last event without its blank line", "data: a\n\ndata: b\n", []event{{"", "a"}, {"", "b"}}},
	{"last line cut off", "data: a\n\ndata: b\ndata: {\"cho", []event{{"", "a"}}},
	{"empty", "", nil},
	{"CRLF at the very end", "data:\r\n", []event{{"", ""}}},
	{"CR at the very end", "data: a\r", []event{{"", "a"}}},
	{"UTF-8", "data: la Ville Lumière “é”\n\n", []event{{"", "la Ville Lumière “é”"}}},
	{"a field without a colon has an empty value", "data\ndata\n\nevent\ndata: a\n\n", []event{{"", "\n"}, {"", "a"}}},
	{"field names are case-sensitive", "Data: a\nDATA: b\ndata: c\n\n", []event{{"", "c"}}},
	{"a space before the colon is part of the name", "data : a\ndata: b\n\n", []event{{"", "b"}}},
	{"only the first colon separates", "data: a: b\n\n", []event{{"", "a: b"}}},
	{"a tab is not the space dropped", "data:\ta\n\n", []event{{"", "\ta"}}},
	{"the event type resets after each event", "event: x\ndata: a\n\ndata: b\n\n", []event{{"x", "a"}, {"", "b"}}},
	{"the last event type wins", "event: x\nevent: y\ndata: a\n\n", []event{{"y", "a"}}},
	{"only one byte-order mark is dropped", "\uFEFF\uFEFFdata: a\n\ndata: b\n\n", []event{{"", "b"}}},
	{"a byte-order mark later is data", "data: a\n\n\uFEFFdata: b\n\ndata: \uFEFFc\n\n", []event{{"", "a"}, {"", "\uFEFFc"}}},
	{"a byte-order mark alone on the first line", "\uFEFF\ndata: a\n\n", []event{{"", "a"}}},
	{"CR then LF split across events", "data: a\r\r\ndata: b\r\n\r", []event{{"", "a"}, {"", "b"}}},
	{"NUL in data is kept", "data: a\x00b\n\n", []event{{"", "a\x00b"}}},
}

// TestSSEFields checks the fields that are not in every event: the last
// event ID, which carries from one event to the next, and the
// reconnection time.
func TestSSEFields(t *testing.T) {
	type idEvent struct{ Data, ID string }
	for _, tt := range []struct {
		name, in string
		want     []idEvent
		lastID   string
		retry    time.Duration
	}{
		{"ids carry on", "id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n", []idEvent{{"a", "1"}, {"b", "1"}, {"c", "2"}}, "2", 0},
		{"an empty id resets it", "id: 1\ndata: a\n\nid\ndata: b\n\n", []idEvent{{"a", "1"}, {"b", ""}}, "", 0},
		{"an id with NUL is ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []idEvent{{"a", "1"}, {"b", "1"}}, "1", 0},
		{"an event with no data sets the last ID", "id: 7\n\n", nil, "7", 0},
		{"an id of an event cut off is not taken", "data: a\n\nid: 9\ndata: b", []idEvent{{"a", ""}}, "", 0},
		{"retry in milliseconds", "retry: 1500\ndata: a\n\n", []idEvent{{"a", ""}}, "", 1500 * time.Millisecond},
		{"retry that is not all digits is ignored", "retry: 100\nretry: 2s\nretry: -1\nretry:\nretry: 1 \ndata: a\n\n", []idEvent{{"a", ""}}, "", 100 * time.Millisecond},
		{"retry too large is ignored", "retry: 5\nretry: 99999999999999999999\ndata: a\n\n", []idEvent{{"a", ""}}, "", 5 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for how, r := range splitread.Readers([]byte(tt.in), true) {
				s := NewReader(r())
				var got []idEvent
				for {
					ev, err := s.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("%s: %v", how, err)
					}
					got = append(got, idEvent{string(ev.Data), ev.ID})
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Fatalf("%s: events (-want +got):\n%s", how, diff)
				}
				if s.LastEventID() != tt.lastID || s.Retry() != tt.retry {
					t.Fatalf("%s: last event ID %q, retry %v; want %q, %v", how, s.LastEventID(), s.Retry(), tt.lastID, tt.retry)
				}
			}
		})
	}
}

// TestLines checks the line layer alone, as the gateway uses it: fed
// as bytes arrive, every line out as soon as its terminator is in.
func TestLines(t *testing.T) {
	in := "\uFEFFa\r\nb\rc\n\r\n\rd"
	want := []string{"a", "b", "c", "", "", "d"}
	for i := 0; i <= len(in); i++ {
		var l Lines
		var got []string
		for _, part := range []string{in[:i], in[i:]} {
			l.Write([]byte(part))
			for line, ok := l.Next(); ok; line, ok = l.Next() {
				got = append(got, string(line))
			}
		}
		last, ok, err := l.End()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got = append(got, string(last))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("split at %d: lines (-want +got):\n%s", i, diff)
		}
	}
	// A CR is a whole line end at once: the line comes out before the
	// next byte is known.
	var l Lines
	l.Write([]byte("data: a\r"))
	if line, ok := l.Next(); !ok || string(line) != "data: a" {
		t.Fatalf("after a CR: %q, %v", line, ok)
	}
}

// readEvents reads all the events from r.
func readEvents(r io.Reader) ([]event, error) {
	s := NewReader(r)
	var out []event
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, event{ev.Type, string(ev.Data)})
	}
}

func TestSSEReader(t *testing.T) {
	for _, tt := range sseTests {
		t.Run(tt.name, func(t *testing.T) {
			for how, r := range splitread.Readers([]byte(tt.in), true) {
				got, err := readEvents(r())
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Fatalf("%s: events (-want +got):\n%s", how, diff)
				}
			}
		})
	}
}

func TestSSEReaderLongLine(t *testing.T) {
	long := strings.Repeat("x", 5<<20)
	in := "data: " + long + "\n\ndata: " + long + "\r\n\r\ndata: end\n\n"
	got, err := readEvents(iotest.HalfReader(strings.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Data != long || got[1].Data != long || got[2].Data != "end" {
		t.Fatalf("got %d events, want 3 of 5 MiB, 5 MiB and 3 bytes", len(got))
	}
}

func TestSSEReaderTooLong(t *testing.T) {
	s := NewReader(strings.NewReader("data: " + strings.Repeat("x", 100) + "\n\n"))
	s.lines.Max = 64
	if _, err := s.Next(); !errors.Is(err, bufio.ErrTooLong) {
		t.Fatalf("err = %v, want bufio.ErrTooLong", err)
	}
}

func TestSSEReaderError(t *testing.T) {
	broken := errors.New("connection reset by peer")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(broken))
	got, err := readEvents(r)
	if !errors.Is(err, broken) {
		t.Fatalf("err = %v, want %v", err, broken)
	}
	if diff := cmp.Diff([]event{{"", "a"}}, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

// countingReader counts the reads made of r.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// checkBuffered reads in's events with the reads r makes, and checks that
// whenever Buffered says the next event is held, Next returns an event
// without reading: a caller that trusts it never waits for the network
// with a batch unsent. It returns how many times Buffered said so.
func checkBuffered(t *testing.T, how string, r io.Reader) int {
	t.Helper()
	cr := &countingReader{r: r}
	s := NewReader(cr)
	held := 0
	for {
		buffered := s.Buffered()
		before := cr.reads
		_, err := s.Next()
		if buffered {
			held++
			if err != nil || cr.reads != before {
				t.Fatalf("%s: Buffered said an event was held, then Next read %d times and returned %v", how, cr.reads-before, err)
			}
		}
		if err != nil {
			return held
		}
	}
}

func TestSSEReaderBuffered(t *testing.T) {
	for _, tt := range sseTests {
		for how, r := range splitread.Readers([]byte(tt.in), true) {
			checkBuffered(t, tt.name+", "+how, r())
		}
	}
	// Read whole, every event but the first is held after the one before
	// it; comments, blank lines and fields without data are not events.
	in := ": hi\n\ndata: a\n\nevent: ping\n\n: keep-alive\n\ndata: b\r\n\r\ndata: c\r\rid: 3\n\n"
	if n := checkBuffered(t, "whole", strings.NewReader(in)); n != 2 {
		t.Errorf("Buffered said an event was held %d times, want 2 (b after a, c after b)", n)
	}
	// The attack a batching caller fears: a keep-alive comment after the
	// last event. It is not an event: Buffered is false, and the batch
	// goes out before the reader waits.
	s := NewReader(strings.NewReader("data: a\n\n: keep-alive\n\n"))
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if s.Buffered() {
		t.Error("a keep-alive comment counted as an event")
	}
}

// FuzzSSEReader checks that how the bytes arrive never changes the events,
// and that Buffered never says an event is held when Next would read.
func FuzzSSEReader(f *testing.F) {
	for _, tt := range sseTests {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkBuffered(t, "whole", bytes.NewReader(in))
		checkBuffered(t, "1-3 bytes", splitread.Readers(in, false)["1-3 bytes"]())
		want, err := readEvents(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := readEvents(splitread.Readers(in, false)["1-3 bytes"]())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("events read whole (-) and 1-3 bytes at a time (+):\n%s", diff)
		}
	})
}

// Close gives the buffer back: the next stream's reader may get it, and
// reads its own events, never the bytes the last one left.
func TestSSEReaderClose(t *testing.T) {
	for i := range 50 {
		s := NewReader(strings.NewReader(fmt.Sprintf("data: %d %s\n\ndata: b", i, strings.Repeat("x", i*97))))
		ev, err := s.Next()
		if err != nil || string(ev.Data) != fmt.Sprintf("%d %s", i, strings.Repeat("x", i*97)) {
			t.Fatalf("stream %d: %q, %v", i, ev.Data, err)
		}
		s.Close()
		if _, err := s.Next(); err == nil {
			t.Fatal("Next after Close returned an event")
		}
	}
}
