package pgtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is text a run may record that PostgreSQL's text cannot hold as
// it is: NUL bytes, bytes that are not UTF-8, and the escape itself.
var hostile = []string{
	"a NUL \x00 in the middle",
	"\x00",
	"a cut character \xe2\x82 and a stray \xff byte",
	"the escape " + Esc + "0 written by hand, and " + Esc + "x41, " + Esc,
	"plain text, ünïcödé and emoji 🙂",
	"",
}

func TestTextRoundTrip(t *testing.T) {
	for _, s := range append(hostile, Esc+Esc+"e", "\xf4\x8f\xbf", Esc[:3]+"0") {
		e := Escape(s)
		if strings.IndexByte(e, 0) >= 0 || !utf8.ValidString(e) {
			t.Errorf("Escape(%q) = %q: PostgreSQL cannot hold it", s, e)
		}
		if got := Unescape(e); got != s {
			t.Errorf("Unescape(Escape(%q)) = %q", s, got)
		}
	}
	if s := "nothing to escape"; Escape(s) != s {
		t.Error("plain text must be written as it is")
	}
}

func FuzzText(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if strings.IndexByte(e, 0) >= 0 || !utf8.ValidString(e) {
			t.Fatalf("Escape(%q) = %q", s, e)
		}
		if got := Unescape(e); got != s {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
	})
}

// The cost of Escape on 4 KiB of a tool result: plain text (all but a few
// values) and text holding NUL bytes.
func BenchmarkEscape(b *testing.B) {
	plain := strings.Repeat("package main // ünïcödé\n", 170)
	nul := strings.Repeat("\x00binary\xff", 400)
	for name, s := range map[string]string{"plain": plain, "nul": nul} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				Escape(s)
			}
		})
	}
}
