package chat

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// markdown renders a finished answer for the terminal, wrapped to width:
// headings, lists, quotes, fenced code and the inline **strong** and
// `code` that models write most. It is small on purpose (see the README
// for why not glamour); whatever it does not know stays as written.
func markdown(s string, width int, st *styles) []string {
	var out []string
	inFence := false
	for line := range strings.SplitSeq(strings.TrimRight(s, "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence {
			out = append(out, wrap(st.code.Render("  "+strings.ReplaceAll(line, "\t", "    ")), width)...)
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, "#"):
			h := strings.TrimSpace(strings.TrimLeft(trimmed, "#"))
			out = append(out, wrap(st.heading.Render(h), width)...)
		case strings.HasPrefix(trimmed, "- "), strings.HasPrefix(trimmed, "* "), strings.HasPrefix(trimmed, "+ "):
			indent := strings.Repeat(" ", len(line)-len(strings.TrimLeft(line, " ")))
			out = append(out, hang(indent+"• ", inline(trimmed[2:], st), width)...)
		case strings.HasPrefix(trimmed, "> "):
			for _, l := range wrap(inline(trimmed[2:], st), width-2) {
				out = append(out, st.dim.Render("│ ")+l)
			}
		default:
			out = append(out, wrap(inline(line, st), width)...)
		}
	}
	return out
}

// inline styles **strong** and `code` spans; an unclosed marker stays as
// written.
func inline(s string, st *styles) string {
	if !strings.ContainsAny(s, "*`") {
		return s
	}
	var b strings.Builder
	for s != "" {
		i := strings.IndexAny(s, "*`")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		marker, style := "`", st.code
		if strings.HasPrefix(s, "**") {
			marker, style = "**", st.strong
		} else if s[0] == '*' {
			b.WriteByte('*')
			s = s[1:]
			continue
		}
		end := strings.Index(s[len(marker):], marker)
		if end <= 0 {
			b.WriteString(marker)
			s = s[len(marker):]
			continue
		}
		b.WriteString(style.Render(s[len(marker) : len(marker)+end]))
		s = s[2*len(marker)+end:]
	}
	return b.String()
}

// wrap wraps s (styles kept) to width and splits it into lines.
func wrap(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	if lipgloss.Width(s) <= width && !strings.Contains(s, "\n") {
		return []string{s}
	}
	return strings.Split(lipgloss.Wrap(s, width, " -/"), "\n")
}

// hang wraps s after a prefix, indenting the next lines under the first.
func hang(prefix, s string, width int) []string {
	w := lipgloss.Width(prefix)
	lines := wrap(s, width-w)
	pad := strings.Repeat(" ", w)
	for i := range lines {
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = pad + lines[i]
		}
	}
	return lines
}
