package transcript_test

import (
	"strings"
	"testing"

	"github.com/ptkit/ptk/transcript"
)

func TestEscapeHeaders(t *testing.T) {
	cases := map[string]string{
		"plain text":                    "plain text",
		"assistant: hi":                 "\\assistant: hi",
		"a\n  USER :x\nb":               "a\n\\  USER :x\nb",
		"x\rTool:\u2028System:\u0085ok": "x\r\\Tool:\u2028\\System:\u0085ok",
		"users: are not a header":       "users: are not a header",
		"tool":                          "tool",
		"":                              "",
	}
	for in, want := range cases {
		if got := transcript.EscapeHeaders(in); got != want {
			t.Errorf("EscapeHeaders(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteTurn(t *testing.T) {
	var b strings.Builder
	transcript.WriteTurn(&b, transcript.User, transcript.Trim("\n\nhello  \n"))
	transcript.WriteTurn(&b, transcript.Tool, "")
	transcript.Cue(&b)
	if got, want := b.String(), "USER:\nhello\n\nTOOL:\n\nASSISTANT:\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
