package sse

import (
	"bytes"
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
