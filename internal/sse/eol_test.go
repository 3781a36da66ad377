package sse

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// FuzzIndexEOL holds indexEOL to bytes.IndexAny, which it replaces.
func FuzzIndexEOL(f *testing.F) {
	for _, s := range []string{"", "a", "\n", "\r", "\r\n", "ab\ncd\r", "abc\rdef\nx", strings.Repeat("x", 40) + "\n\r"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := indexEOL(b), bytes.IndexAny(b, "\r\n"); got != want {
			t.Fatalf("indexEOL(%q) = %d, bytes.IndexAny = %d", b, got, want)
		}
	})
}

// A stream's event types are kept whatever their number: more than the
// reader remembers, each read right every time.
func TestEventTypes(t *testing.T) {
	var in strings.Builder
	var want []string
	for i := range 40 {
		typ := fmt.Sprintf("type%d", i%11)
		if i%7 == 3 {
			typ = ""
		}
		fmt.Fprintf(&in, "event: %s\nid: %d\ndata: x\n\n", typ, i/3)
		want = append(want, typ)
	}
	s := NewReader(strings.NewReader(in.String()))
	for i, w := range want {
		ev, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != w || ev.ID != fmt.Sprint(i/3) {
			t.Fatalf("event %d: type %q id %q, want %q %q", i, ev.Type, ev.ID, w, fmt.Sprint(i/3))
		}
	}
}
