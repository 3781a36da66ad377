package browser

import (
	"strings"
	"testing"
)

// TestFollower: only whole lines that stood still between two readings
// are streamed; the pieces and the end make the answer; a page that
// changes streamed text is caught.
func TestFollower(t *testing.T) {
	readings := []string{
		"",
		"Hel",
		"Hello **wor",
		"Hello world\nSecond",        // the renderer rewrote the line being written
		"Hello world\nSecond line",   // line 1 stood still: streamed
		"Hello world\nSecond line\n", // still
		"Hello world\nSecond line\n\n```js",
		"Hello world\nSecond line\n\ncode()", // a code block replaced its fence
		"Hello world\nSecond line\n\ncode()\nmore",
	}
	var f follower
	var got []string
	for _, r := range readings {
		if d := f.see(r); d != "" {
			got = append(got, d)
		}
	}
	final := "Hello world\nSecond line\n\ncode()\nmore text"
	rest, ok := f.end(final)
	if !ok {
		t.Fatal("end refused a final text that extends what was streamed")
	}
	got = append(got, rest)
	if strings.Join(got, "") != final {
		t.Fatalf("pieces %q do not make %q", got, final)
	}
	if len(got) < 3 || got[0] != "Hello world\n" {
		t.Errorf("pieces %q: want whole lines as they stood still, the first \"Hello world\\n\"", got)
	}

	var g follower
	g.see("one\ntwo\n")
	g.see("one\ntwo\nthree")
	g.see("ONE\ntwo\nthree") // the page changed what was streamed
	if _, ok := g.end("ONE\ntwo\nthree"); ok {
		t.Error("end took a text that changed streamed text")
	}
}
