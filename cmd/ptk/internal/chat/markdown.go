package chat

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// markdown renders a finished answer for the terminal, wrapped to width:
// headings, lists, quotes, fenced code, tables and the inline **strong**
// and `code` that models write most. It is small on purpose (see
// docs/chat.md for why not glamour); whatever it does not know stays as
// written.
func markdown(s string, width int, st *styles) []string {
	var out []string
	inFence := false
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if !inFence && strings.HasPrefix(trimmed, "|") && i+1 < len(lines) && isDelimiterRow(lines[i+1]) {
			aligns := alignments(lines[i+1])
			rows := [][]string{cells(trimmed)}
			for i += 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				rows = append(rows, cells(strings.TrimSpace(lines[i])))
			}
			i--
			out = append(out, table(rows, aligns, width, st)...)
			continue
		}
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

// isDelimiterRow reports whether line is a table's delimiter row:
// | --- | :-: | --: |.
func isDelimiterRow(line string) bool {
	t := strings.TrimSpace(line)
	if !strings.Contains(t, "-") || !strings.HasPrefix(t, "|") && !strings.Contains(t, "|") {
		return false
	}
	for _, c := range cells(t) {
		c = strings.TrimSpace(c)
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

// cells splits a table row at the pipes that are not escaped.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, "\\|") {
		row = row[:len(row)-1]
	}
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

type align uint8

const (
	alignLeft align = iota
	alignCenter
	alignRight
)

// alignments reads the columns' alignments from the delimiter row.
func alignments(row string) []align {
	var out []align
	for _, c := range cells(row) {
		c = strings.TrimSpace(c)
		switch {
		case strings.HasPrefix(c, ":") && strings.HasSuffix(c, ":"):
			out = append(out, alignCenter)
		case strings.HasSuffix(c, ":"):
			out = append(out, alignRight)
		default:
			out = append(out, alignLeft)
		}
	}
	return out
}

// table draws a table in a box, its columns narrowed (their cells
// wrapped) to fit width; too narrow for a box, each row is a line of its
// cells.
func table(rows [][]string, aligns []align, width int, st *styles) []string {
	n := 0
	for _, r := range rows {
		n = max(n, len(r))
	}
	styled := make([][]string, len(rows))
	widths := make([]int, n)
	for i, r := range rows {
		styled[i] = make([]string, n)
		for j := range n {
			c := ""
			if j < len(r) {
				c = inline(r[j], st)
			}
			if i == 0 {
				c = st.strong.Render(c)
			}
			styled[i][j] = c
			widths[j] = max(widths[j], lipgloss.Width(c), 1)
		}
	}
	avail := width - 1 - 3*n // "│ " before each cell, " " after, "│" at the end
	if avail < 3*n {
		var out []string
		for _, r := range styled {
			out = append(out, wrap(strings.Join(r, " │ "), width)...)
		}
		return out
	}
	for total(widths) > avail {
		widest := 0
		for j := range widths {
			if widths[j] > widths[widest] {
				widest = j
			}
		}
		widths[widest]--
	}
	rule := func(l, m, r string) string {
		var b strings.Builder
		b.WriteString(l)
		for j, w := range widths {
			if j > 0 {
				b.WriteString(m)
			}
			b.WriteString(strings.Repeat("─", w+2))
		}
		b.WriteString(r)
		return st.border.Render(b.String())
	}
	bar := st.border.Render("│")
	out := []string{rule("┌", "┬", "┐")}
	for i, r := range styled {
		cellLines := make([][]string, n)
		height := 1
		for j, c := range r {
			cellLines[j] = wrap(c, widths[j])
			height = max(height, len(cellLines[j]))
		}
		for k := range height {
			var b strings.Builder
			b.WriteString(bar)
			for j := range n {
				c := ""
				if k < len(cellLines[j]) {
					c = cellLines[j][k]
				}
				a := alignLeft
				if j < len(aligns) {
					a = aligns[j]
				}
				b.WriteString(" " + pad(c, widths[j], a) + " " + bar)
			}
			out = append(out, b.String())
		}
		if i == 0 && len(styled) > 1 {
			out = append(out, rule("├", "┼", "┤"))
		}
	}
	return append(out, rule("└", "┴", "┘"))
}

func total(ws []int) int {
	t := 0
	for _, w := range ws {
		t += w
	}
	return t
}

// pad pads s to width w, aligned as a says.
func pad(s string, w int, a align) string {
	gap := max(w-lipgloss.Width(s), 0)
	switch a {
	case alignRight:
		return strings.Repeat(" ", gap) + s
	case alignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}
