package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/ptkit/ptk/llm/internal/splitread"
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
	s.sc.Buffer(nil, 64)
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

// FuzzSSEReader checks that how the bytes arrive never changes the events.
func FuzzSSEReader(f *testing.F) {
	for _, tt := range sseTests {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
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
