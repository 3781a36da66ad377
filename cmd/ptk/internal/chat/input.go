package chat

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/ptkit/ptk/protocol"
)

// Files are the workspace's files, as @path mentions see them: the files
// the tools see (ignored ones left out), and their text read as the tools
// read it, confined to the workspace. *fs.Workspace is one.
type Files interface {
	Files(ctx context.Context, limit int) ([]string, bool, error)
	Text(ctx context.Context, path string) (string, error)
}

// Limits of @path mentions.
const (
	maxIndexed      = 50_000   // files completions are found among
	maxCompletions  = 8        // completions shown
	maxAttachedFile = 32 << 10 // bytes of one attached file
	maxAttached     = 96 << 10 // bytes of all of a message's
)

// completion is the list of paths an @ mention being typed may complete
// to.
type completion struct {
	token     string // the mention as typed, "@" included
	items     []string
	sel       int
	dismissed bool // esc closed it; it opens again when the mention changes
}

// mentionAtEnd is the @ mention the input ends with, being typed: "" when
// the input does not end with one.
func mentionAtEnd(s string) string {
	i := strings.LastIndexFunc(s, unicode.IsSpace)
	tok := s[i+1:]
	if i >= 0 {
		_, size := utf8.DecodeRuneInString(s[i:])
		tok = s[i+size:]
	}
	if !strings.HasPrefix(tok, "@") {
		return ""
	}
	return tok
}

// updateCompletion finds the completions of the mention being typed at
// the end of the input.
func (m *Model) updateCompletion() {
	if m.cfg.Files == nil {
		return
	}
	v := m.input.Value()
	tok := ""
	if m.input.Line() == m.input.LineCount()-1 && m.input.Column() == utf8.RuneCountInString(lastLine(v)) {
		tok = mentionAtEnd(v)
	}
	if tok == "" {
		m.complete = nil
		return
	}
	if m.complete != nil && m.complete.token == tok {
		return
	}
	if m.files == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		files, _, err := m.cfg.Files.Files(ctx, maxIndexed)
		cancel()
		if err != nil {
			m.flash = "@: cannot list the workspace's files: " + err.Error()
		}
		m.files = append(files, []string{}...) // not nil: read once
	}
	m.complete = &completion{token: tok, items: matchPaths(m.files, tok[1:], maxCompletions)}
}

// lastLine is s's last line.
func lastLine(s string) string {
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// matchPaths returns at most n of files that q names: those that start
// with q first, then those whose name starts with it, then those that hold
// it, each in path order; case is ignored.
func matchPaths(files []string, q string, n int) []string {
	q = strings.ToLower(q)
	var starts, names, holds []string
	for _, f := range files {
		lf := strings.ToLower(f)
		switch {
		case strings.HasPrefix(lf, q):
			starts = append(starts, f)
		case strings.HasPrefix(lf[strings.LastIndexByte(lf, '/')+1:], q):
			names = append(names, f)
		case strings.Contains(lf, q):
			holds = append(holds, f)
		}
		if len(starts) >= n {
			break
		}
	}
	out := slices.Concat(starts, names, holds)
	return out[:min(len(out), n)]
}

// acceptCompletion puts the chosen path in place of the mention.
func (m *Model) acceptCompletion() {
	c := m.complete
	v := m.input.Value()
	m.input.SetValue(strings.TrimSuffix(v, c.token) + "@" + c.items[c.sel] + " ")
	m.complete = nil
}

func (m *Model) completionLines() []string {
	c := m.complete
	var out []string
	for i, item := range c.items {
		line := "  @" + item
		if i == c.sel {
			line = m.st.key.Render("› @" + item)
		} else {
			line = m.st.dim.Render(line)
		}
		out = append(out, line)
	}
	out = append(out, m.st.dim.Render("  tab completes · ↑ ↓ choose · esc closes"))
	for i := range out {
		out[i] = truncate(out[i], m.width)
	}
	return out
}

// mentions are the paths text mentions (@path), in order, once each.
func mentions(text string) []string {
	var out []string
	for f := range strings.FieldsSeq(text) {
		if p, ok := strings.CutPrefix(f, "@"); ok {
			p = strings.TrimRight(p, ".,;:!?)\"'")
			if p != "" && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// attachedHeader starts the part of a message that holds the files it
// mentions.
const attachedHeader = "\n\n---\nThe files mentioned above, as they are now in the workspace:\n"

// attach returns the message to send for text: text, then the files it
// mentions (@path) that are files of the workspace, read through Files
// (so confined to the workspace), each cut to a bound and made inert
// (protocol.Neutralize: a file cannot read as a call or a result). It also
// returns the paths attached, and a line for each mention that could not
// be.
func (m *Model) attach(text string) (content string, attached, problems []string) {
	if m.cfg.Files == nil {
		return text, nil, nil
	}
	var b strings.Builder
	total := 0
	for _, p := range mentions(text) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		body, err := m.cfg.Files.Text(ctx, p)
		cancel()
		if err != nil {
			if strings.ContainsAny(p, "/.") || slices.Contains(m.files, p) {
				problems = append(problems, fmt.Sprintf("@%s is not attached: %v", p, err))
			}
			continue // a mention of a person, not a file
		}
		if total >= maxAttached {
			problems = append(problems, fmt.Sprintf("@%s is not attached: the message already holds %d KB of files", p, maxAttached>>10))
			continue
		}
		limit := min(maxAttachedFile, maxAttached-total)
		note := ""
		if len(body) > limit {
			body, note = cutBytes(body, limit), fmt.Sprintf(" (the first %d KB of %d KB; read_file reads the rest)", limit>>10, len(body)>>10)
		}
		total += len(body)
		fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
		fmt.Fprintf(&b, "\n@%s%s:\n%s\n%s\n%s\n", p, note, fence, protocol.Neutralize(strings.TrimRight(body, "\n")), fence)
		attached = append(attached, p)
	}
	if len(attached) == 0 {
		return text, nil, problems
	}
	return text + attachedHeader + b.String(), attached, problems
}

// splitAttached parts a sent message into what the user typed and the
// paths of the files attached to it.
func splitAttached(content string) (string, []string) {
	text, files, ok := strings.Cut(content, attachedHeader)
	if !ok {
		return content, nil
	}
	var paths []string
	for l := range strings.SplitSeq(files, "\n") {
		if p, ok := strings.CutPrefix(l, "@"); ok && strings.HasSuffix(l, ":") {
			p, _, _ = strings.Cut(strings.TrimSuffix(p, ":"), " (")
			paths = append(paths, p)
		}
	}
	return text, paths
}

// longestRun is the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := range len(s) {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// cutBytes cuts s to at most n bytes, on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// edit opens the message in the user's editor (Ctrl+G); what it holds
// when the editor exits becomes the message.
func (m *Model) edit() tea.Cmd {
	if len(m.cfg.Editor) == 0 {
		m.errorBlock("ctrl+g opens $VISUAL or $EDITOR, and neither is set: export EDITOR=vim (or nano, or code -w)")
		return nil
	}
	f, err := os.CreateTemp("", "ptk-message-*.md")
	if err != nil {
		m.errorBlock("ctrl+g: " + err.Error())
		return nil
	}
	name := f.Name()
	_, err = f.WriteString(m.input.Value())
	f.Close()
	if err != nil {
		os.Remove(name)
		m.errorBlock("ctrl+g: " + err.Error())
		return nil
	}
	cmd := exec.Command(m.cfg.Editor[0], append(slices.Clone(m.cfg.Editor[1:]), name)...)
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		defer os.Remove(name)
		if err != nil {
			return editedMsg{err: err}
		}
		b, err := os.ReadFile(name)
		return editedMsg{text: string(b), err: err}
	})
}

// copyAnswer puts the last answer on the clipboard (OSC 52, which the
// terminal and tmux pass on), without the control characters a model may
// have written into it: pasted into a terminal, they would act there.
func (m *Model) copyAnswer() tea.Cmd {
	for i := len(m.blocks) - 1; i >= 0; i-- {
		if b := m.blocks[i]; b.kind == blockText && b.text.Len() > 0 {
			text := clipText(b.text.String())
			m.flash = fmt.Sprintf("copied the last answer (%d lines) to the clipboard", strings.Count(text, "\n")+1)
			return tea.SetClipboard(text)
		}
	}
	m.flash = "no answer to copy yet"
	return nil
}

// clipText is s without control characters other than tab and newline,
// and without the bidirectional controls that reorder what is shown.
func clipText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == utf8.RuneError:
			return -1
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
			return -1
		}
		return r
	}, strings.TrimRight(s, "\n"))
}
