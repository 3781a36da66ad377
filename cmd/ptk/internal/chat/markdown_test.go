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

// Tables are drawn in a box, aligned as their delimiter row says, with an
// escaped pipe kept in its cell; too wide, their cells wrap.
func TestMarkdownTable(t *testing.T) {
	st := newStyles()
	in := "Before\n\n| name | count | note |\n|:---|---:|:---:|\n| a **b** | 12 | a pipe \\| here |\n| longer name that wraps | 3 | x |\n\nAfter"
	for _, tc := range []struct {
		width int
		want  string
	}{
		{60, `Before

┌────────────────────────┬───────┬───────────────┐
│ name                   │ count │     note      │
├────────────────────────┼───────┼───────────────┤
│ a b                    │    12 │ a pipe | here │
│ longer name that wraps │     3 │       x       │
└────────────────────────┴───────┴───────────────┘

After`},
		{30, `Before

┌─────────┬───────┬──────────┐
│ name    │ count │   note   │
├─────────┼───────┼──────────┤
│ a b     │    12 │ a pipe | │
│         │       │   here   │
│ longer  │     3 │    x     │
│ name    │       │          │
│ that    │       │          │
│ wraps   │       │          │
└─────────┴───────┴──────────┘

After`},
	} {
		lines := markdown(in, tc.width, st)
		for i := range lines {
			if w := ansi.StringWidth(lines[i]); w > tc.width {
				t.Errorf("width %d: line %d is %d wide", tc.width, i, w)
			}
			lines[i] = strings.TrimRight(ansi.Strip(lines[i]), " ")
		}
		if got := strings.Join(lines, "\n"); got != tc.want {
			t.Errorf("width %d:\n%s\nwant\n%s", tc.width, got, tc.want)
		}
	}
	// A row of pipes without a delimiter row is text.
	if got := ansi.Strip(strings.Join(markdown("a | b\nc | d", 40, st), "\n")); !strings.Contains(got, "a | b") {
		t.Errorf("not a table: %q", got)
	}
}
