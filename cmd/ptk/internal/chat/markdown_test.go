package chat

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestMarkdown(t *testing.T) {
	st := newStyles()
	for _, tc := range []struct{ in, want string }{
		{"# Title\nplain **bold** and `code`", "Title\nplain bold and code"},
		{"- one\n  - two\n* three", "• one\n  • two\n• three"},
		{"```go\nfunc f() {\n\treturn\n}\n```\nafter", "  func f() {\n      return\n  }\nafter"},
		{"> quoted", "│ quoted"},
		// Markers that are not closed stay as written; a lone * is text.
		{"2 * 3, **a, `b", "2 * 3, **a, `b"},
		{"a long line that has to be wrapped at twenty", "a long line that has\nto be wrapped at\ntwenty"},
		{"- a bullet that wraps under itself", "• a bullet that\n  wraps under itself"},
	} {
		lines := markdown(tc.in, 20, st)
		for i := range lines {
			lines[i] = strings.TrimRight(ansi.Strip(lines[i]), " ")
		}
		if got := strings.Join(lines, "\n"); got != tc.want {
			t.Errorf("markdown(%q) =\n%s\nwant\n%s", tc.in, got, tc.want)
		}
	}
}
