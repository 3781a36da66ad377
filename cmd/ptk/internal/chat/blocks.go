package chat

import (
	"encoding/json"
	"fmt"
	"image/color"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/aymanbagabas/go-udiff"
	"github.com/charmbracelet/x/ansi"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/term"
	"github.com/ptkit/ptk/tool"
)

// styles are the screen's styles. Colours are dropped by the renderer on a
// terminal without them and under NO_COLOR; bold and faint stay.
type styles struct {
	user, heading, strong, code, dim, err, ok, notice, status, key lipgloss.Style
	add, del, hunk, ask, toolName, border                          lipgloss.Style
}

func newStyles() *styles {
	c := func(s string) color.Color { return lipgloss.Color(s) }
	return &styles{
		user:     lipgloss.NewStyle().Bold(true).Foreground(c("12")),
		heading:  lipgloss.NewStyle().Bold(true).Foreground(c("13")),
		strong:   lipgloss.NewStyle().Bold(true),
		code:     lipgloss.NewStyle().Foreground(c("11")),
		dim:      lipgloss.NewStyle().Faint(true),
		err:      lipgloss.NewStyle().Foreground(c("9")),
		ok:       lipgloss.NewStyle().Foreground(c("10")),
		notice:   lipgloss.NewStyle().Foreground(c("14")),
		status:   lipgloss.NewStyle().Reverse(true),
		key:      lipgloss.NewStyle().Bold(true),
		add:      lipgloss.NewStyle().Foreground(c("2")),
		del:      lipgloss.NewStyle().Foreground(c("1")),
		hunk:     lipgloss.NewStyle().Foreground(c("6")),
		ask:      lipgloss.NewStyle().Bold(true).Foreground(c("11")),
		toolName: lipgloss.NewStyle().Bold(true),
		border:   lipgloss.NewStyle().Foreground(c("8")),
	}
}

type blockKind uint8

const (
	blockUser blockKind = iota
	blockText
	blockReasoning
	blockTool
	blockNotice
	blockError
)

// toolState is where a tool call is.
type toolState uint8

const (
	toolWriting     toolState = iota // the model is writing the call
	toolWaiting                      // written, not started
	toolAsking                       // waiting for the user's approval
	toolRunning                      // the tool runs
	toolDone                         // answered
	toolFailed                       // answered with an error, or cannot run
	toolDenied                       // not approved
	toolDuplicate                    // not run: repeats a recent call
	toolInterrupted                  // the run was stopped before it was answered
)

// A block is one thing on the conversation's screen: a user message, an
// answer, reasoning, a tool call, a notice. It keeps its rendered lines
// until it changes or the width does, so a frame renders only what changed.
type block struct {
	kind blockKind
	text strings.Builder
	// done marks an answer complete: it is then rendered as Markdown.
	done bool
	// interrupted marks an answer the user stopped; attached lists the
	// files a message attached (@path); dim makes a notice quiet.
	interrupted bool
	attached    []string
	dim         bool

	// A tool call.
	index    int
	call     ptk.Call
	args     int // bytes of arguments streamed so far
	state    toolState
	result   string
	note     string // why it failed, was denied or not run
	why      string // why the user is asked, or ""
	duration time.Duration
	subject  tool.Subject
	preview  string // what an approval will do: a diff, the content

	// The rendering cache: lines, valid for key.
	lines []string
	key   renderKey
	dirty bool
}

// renderKey is everything besides the block's own content that its lines
// depend on.
type renderKey struct {
	width              int
	expand, reason     bool
	frame              int
	valid, approvalFor bool
}

// touch marks the block changed.
func (b *block) touch() { b.dirty = true }

// render returns the block's lines at width, from the cache when nothing
// changed.
func (b *block) render(k renderKey, st *styles) []string {
	if b.kind != blockTool || b.state != toolRunning && b.state != toolWriting {
		k.frame = 0 // only a running call's spinner moves
	}
	if b.kind != blockTool {
		k.expand = false
	}
	if b.kind != blockReasoning {
		k.reason = false
	}
	k.valid = true
	if !b.dirty && b.key == k {
		return b.lines
	}
	b.lines = b.draw(k, st)
	b.key, b.dirty = k, false
	return b.lines
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// A result shows this many lines until ctrl+o, a diff more.
const (
	collapsedResultLines = 6
	collapsedDiffLines   = 16
)

// draw renders the block. Everything a model, a tool or a file wrote goes
// through term.Text first: its control characters and escape sequences are
// shown, never acted on, and a bidirectional override cannot reorder it.
func (b *block) draw(k renderKey, st *styles) []string {
	w := max(k.width, 10)
	text := term.Text(b.text.String())
	switch b.kind {
	case blockUser:
		lines := hang(st.user.Render("› "), st.user.Render(text), w)
		if len(b.attached) > 0 {
			lines = append(lines, hang("  ", st.dim.Render("attached: "+term.Text(strings.Join(b.attached, ", "))), w)...)
		}
		return lines
	case blockText:
		var lines []string
		if b.done {
			lines = markdown(text, w, st)
		} else {
			lines = wrap(text, w)
		}
		if b.interrupted {
			lines = append(lines, st.dim.Render("⏹ interrupted"))
		}
		return lines
	case blockReasoning:
		lines := strings.Split(strings.TrimSpace(text), "\n")
		if !k.reason {
			head := fmt.Sprintf("▸ reasoning, %d lines (ctrl+r shows it)", len(lines))
			if !b.done {
				head = "▸ reasoning… " + lines[len(lines)-1]
			}
			return []string{st.dim.Render(ansi.Truncate(head, w, "…"))}
		}
		var out []string
		for _, l := range lines {
			out = append(out, wrap(st.dim.Render(l), w)...)
		}
		return out
	case blockNotice:
		if b.dim {
			return wrap(st.dim.Render(text), w)
		}
		return wrap(st.notice.Render(text), w)
	case blockError:
		return hang(st.err.Render("✗ "), st.err.Render(text), w)
	}
	return b.drawTool(k, st, w)
}

func (b *block) drawTool(k renderKey, st *styles, w int) []string {
	bar := st.border.Render("│ ")
	inner := w - 2
	var icon string
	switch b.state {
	case toolWriting, toolRunning:
		icon = spinner[k.frame%len(spinner)]
	case toolWaiting:
		icon = "·"
	case toolAsking:
		icon = st.ask.Render("?")
	case toolDone:
		icon = st.ok.Render("✓")
	case toolDuplicate:
		icon = st.dim.Render("=")
	default:
		icon = st.err.Render("✗")
	}
	head := icon + " " + st.toolName.Render(term.Text(b.call.Tool)) + "  " + b.what()
	if b.duration > 0 {
		head += st.dim.Render("  " + b.duration.Round(time.Millisecond).String())
	}
	lines := []string{ansi.Truncate(head, inner, "…")}
	add := func(ls ...string) {
		for _, l := range ls {
			lines = append(lines, ansi.Truncate(l, inner, "…"))
		}
	}
	// what must be read whole (a command to approve, how to allow a denied
	// call) is wrapped, never cut
	addWrapped := func(prefix, s string) {
		lines = append(lines, hang(prefix, s, inner)...)
	}
	result, note, preview := term.Text(b.result), term.Text(b.note), term.Text(b.preview)
	switch b.state {
	case toolWriting:
		add(st.dim.Render(fmt.Sprintf("writing the call… %d bytes", b.args)))
	case toolRunning:
		add(st.dim.Render("running… (esc interrupts)"))
	case toolAsking:
		if cmd := term.Command(b.subject.Command); cmd != "" && (lipgloss.Width(head) > inner || strings.Contains(cmd, "\n")) {
			// the head line cut it: all of it, as it will run
			addWrapped(st.dim.Render("$ "), cmd)
		}
		if preview != "" {
			add(colorDiff(preview, 20, st)...)
		}
		if b.why != "" {
			addWrapped("", st.dim.Render(term.Text(b.why)))
		}
		add(st.ask.Render("allow? ") + st.key.Render("[y]") + "es  " + st.key.Render("[n]") + "o  " +
			st.key.Render("[a]") + "lways for " + term.Text(b.call.Tool))
	case toolDone, toolFailed:
		if note != "" {
			add(st.err.Render(note))
		}
		if result != "" {
			ls := resultLines(result, b.call.Tool, b.state == toolFailed, st)
			limit := collapsedResultLines
			if b.call.Tool == "write_file" && b.state == toolDone && preview != "" {
				// write_file answers with a line: show what it wrote.
				ls = append(ls, colorDiff(preview, -1, st)...)
			}
			if b.call.Tool == "edit_file" || b.call.Tool == "write_file" {
				limit = collapsedDiffLines
			}
			if !k.expand && len(ls) > limit {
				more := len(ls) - limit
				ls = append(ls[:limit:limit], st.dim.Render(fmt.Sprintf("… %d more lines (ctrl+o shows them)", more)))
			}
			add(ls...)
		}
	case toolDenied:
		addWrapped(st.err.Render("denied: "), note)
	case toolDuplicate:
		add(st.dim.Render("not run: " + note))
	case toolInterrupted:
		add(st.err.Render("interrupted"))
	}
	for i := range lines {
		lines[i] = bar + lines[i]
	}
	return lines
}

// what says what a call acts on: the command, the path, else its
// arguments.
func (b *block) what() string {
	switch {
	case b.subject.Command != "":
		return "$ " + oneLine(term.Command(b.subject.Command))
	case b.subject.Path != "":
		return term.Text(b.subject.Path)
	case len(b.call.Args) > 0:
		return oneLine(term.Text(string(b.call.Args)))
	}
	return ""
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// resultLines are a result's lines, a diff coloured.
func resultLines(s, toolName string, failed bool, st *styles) []string {
	s = strings.TrimRight(s, "\n")
	if failed {
		var out []string
		for l := range strings.SplitSeq(s, "\n") {
			out = append(out, st.err.Render(l))
		}
		return out
	}
	if toolName == "edit_file" {
		return colorDiff(s, -1, st)
	}
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		out = append(out, st.dim.Render(strings.ReplaceAll(l, "\t", "    ")))
	}
	return out
}

// colorDiff colours a unified diff's lines, at most n of them (n < 0: all).
func colorDiff(d string, n int, st *styles) []string {
	var out []string
	ls := strings.Split(strings.TrimRight(d, "\n"), "\n")
	for i, l := range ls {
		if n >= 0 && i == n {
			out = append(out, st.dim.Render(fmt.Sprintf("… %d more lines", len(ls)-n)))
			break
		}
		l = strings.ReplaceAll(l, "\t", "    ")
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			out = append(out, st.strong.Render(l))
		case strings.HasPrefix(l, "+"):
			out = append(out, st.add.Render(l))
		case strings.HasPrefix(l, "-"):
			out = append(out, st.del.Render(l))
		case strings.HasPrefix(l, "@@"):
			out = append(out, st.hunk.Render(l))
		default:
			out = append(out, l)
		}
	}
	return out
}

// preview shows what an edit_file or write_file call will change, as a
// diff of its arguments; "" for other tools.
func preview(c ptk.Call) string {
	var a struct {
		Path      string `json:"path"`
		Content   *string
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	}
	if json.Unmarshal(c.Args, &a) != nil {
		return ""
	}
	switch c.Tool {
	case "edit_file":
		return strings.TrimRight(udiff.Unified("a/"+a.Path, "b/"+a.Path, withNewline(a.OldString), withNewline(a.NewString)), "\n")
	case "write_file":
		if a.Content == nil {
			return ""
		}
		return strings.TrimRight(udiff.Unified("/dev/null", "b/"+a.Path, "", withNewline(*a.Content)), "\n")
	}
	return ""
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}
