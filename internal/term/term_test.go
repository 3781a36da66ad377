package term

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// hostile are strings a model, a tool or a file may hold, and what a
// terminal must be given instead.
var hostile = []struct{ name, in, want string }{
	{"plain", "ls -la", "ls -la"},
	{"tab, line feed, unicode", "a\tb\nc é ✓ 日本 👨‍👩‍👧 ⚠️", "a\tb\nc é ✓ 日本 👨‍👩‍👧 ⚠️"},
	{"crlf line ends", "one\r\ntwo\r\n", "one\r\ntwo\r\n"},
	{"forged prompt: cursor up and erase line", "touch SPOOFED\x1b[1A\x1b[2K\rls -la", `touch SPOOFED\x1b[1A\x1b[2K\rls -la`},
	{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
	{"carriage return overwrite", "rm -rf ~\rls -la   ", `rm -rf ~\rls -la   `},
	{"final carriage return", "x\r", `x\r`},
	{"window title (OSC)", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
	{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b]52;c;cm0gLXJmIH4=\x07`},
	{"OSC 8 hyperlink", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;http://evil\x1b\click\x1b]8;;\x1b\`},
	{"8-bit CSI", "a\u009b2Jb", `a\u009b2Jb`},
	{"raw 0x9b byte", "a\x9b2Jb", `a\x9b2Jb`},
	{"bell, backspace, DEL", "a\x07b\x08c\x7fd", `a\x07b\x08c\x7fd`},
	{"NUL", "a\x00b", `a\x00b`},
	{"invalid UTF-8", "a\xff\xfeb", `a\xff\xfeb`},
	{"bidi override (Trojan Source)", "ls \u202e fdp.exe", `ls \u202e fdp.exe`},
	{"bidi isolates", "a\u2066b\u2069c\u2067d\u2068e", `a\u2066b\u2069c\u2067d\u2068e`},
	{"bidi marks", "a\u200eb\u200fc\u061cd", `a\u200eb\u200fc\u061cd`},
	{"zero width space", "r\u200bm -rf", `r\u200bm -rf`},
	{"word joiner, BOM", "a\u2060b\ufeffc", `a\u2060b\ufeffc`},
	{"soft hyphen", "rm\u00ad -rf", `rm\u00ad -rf`},
	{"tag characters (ASCII smuggling)", "ok\U000E0072\U000E006D", `ok\U000e0072\U000e006d`},
	{"variation selector", "a\ufe00b", `a\ufe00b`},
	{"line separator", "a\u2028b\u2029c", `a\u2028b\u2029c`},
	{"hangul filler, braille blank", "a\u3164b\u2800c", `a\u3164b\u2800c`},
	{"no-break space is kept in text", "a\u00a0b", "a\u00a0b"},
}

func TestText(t *testing.T) {
	for _, tt := range hostile {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("%s: Text(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestCommand(t *testing.T) {
	for in, want := range map[string]string{
		"ls -la":               "ls -la",
		"rm\u00a0-rf /":        `rm\u00a0-rf /`,
		"a\u2009b\u3000c":      `a\u2009b\u3000c`,
		"echo 👨\u200d👩":        `echo 👨\u200d👩`,
		"x\ufe0f":              `x\ufe0f`,
		"ls\x1b[2K\rtouch bad": `ls\x1b[2K\rtouch bad`,
	} {
		if got := Command(in); got != want {
			t.Errorf("Command(%q) = %q, want %q", in, got, want)
		}
	}
}

// safe is the property every output must have: no byte a terminal acts on
// and no hidden character is left.
func safe(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && !(c == '\r' && i+1 < len(s) && s[i+1] == '\n') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		emoji := r == 0x200d || r == 0xfe0e || r == 0xfe0f
		if r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Bidi_Control, r) ||
			!emoji && (unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Variation_Selector)) ||
			strings.ContainsRune("\u115f\u1160\u3164\uffa0\u2800\u034f", r) {
			return false
		}
		i += size
	}
	return true
}

func TestTextUnchanged(t *testing.T) {
	s := strings.Repeat("plain text, é ✓\tand lines\n", 100)
	if got := Text(s); unsafe.StringData(got) != unsafe.StringData(s) {
		t.Error("Text of safe text does not return it")
	}
}

// TestStream: a hostile character split between pieces is escaped, and the
// pieces' results joined equal Text of the whole.
func TestStream(t *testing.T) {
	for _, tt := range hostile {
		for cut := 0; cut <= len(tt.in); cut++ {
			var st Stream
			got := st.Text(tt.in[:cut]) + st.Text(tt.in[cut:]) + st.Flush()
			if got != tt.want {
				t.Fatalf("%s cut at %d: %q, want %q", tt.name, cut, got, tt.want)
			}
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, p := range []string{"ok ", "\xe2\x80", "\xae x\x1b[2J\n"} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got, want := b.String(), `ok \u202e x\x1b[2J`+"\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if Unwrap(w) != &b || Unwrap(&b) != &b {
		t.Error("Unwrap does not find the writer under")
	}
}

func FuzzText(f *testing.F) {
	for _, tt := range hostile {
		f.Add(tt.in, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		got := Text(s)
		if !safe(got) {
			t.Fatalf("Text(%q) = %q is not safe", s, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Text(%q) = %q is not UTF-8", s, got)
		}
		if safe(s) && utf8.ValidString(s) && got != s {
			t.Fatalf("Text(%q) = %q changed safe text", s, got)
		}
		if c := min(int(cut), len(s)); true {
			var st Stream
			if joined := st.Text(s[:c]) + st.Text(s[c:]) + st.Flush(); joined != got {
				t.Fatalf("streamed %q cut at %d: %q, whole %q", s, c, joined, got)
			}
		}
		if !safe(Command(s)) {
			t.Fatalf("Command(%q) is not safe", s)
		}
	})
}
