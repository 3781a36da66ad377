package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/internal/term"
)

// progress shows a run on stderr while the user waits: each model call,
// each tool call with its arguments and a short result, a spinner while the
// model thinks, the text as it streams. Colour and the spinner only on a
// terminal (and colour not with NO_COLOR set).
type progress struct {
	w      io.Writer
	tty    bool
	color  bool
	stream bool

	mu       sync.Mutex // guards the writer between events and the spinner
	spinStop chan struct{}
	spinDone chan struct{}
	// midLine reports that streamed text left the cursor mid-line.
	midLine bool
	// streamed makes the streamed text safe, a piece at a time.
	streamed term.Stream
	// call is the model call line waiting for the context's fill, which
	// follows it; fill is the latest fill, peak the highest.
	call       string
	fill, peak agent.Fill
}

func newProgress(w io.Writer, stream bool) *progress {
	tty := isTerminal(w)
	// Its own colours and spinner go to the writer under a term.Writer;
	// what a model or a tool wrote goes through term.Text on the way.
	return &progress{w: term.Unwrap(w), tty: tty, color: tty && os.Getenv("NO_COLOR") == "", stream: stream}
}

// isTerminal reports whether v (a reader or a writer, or a term.Writer on
// one) is a terminal.
func isTerminal(v any) bool {
	if w, ok := v.(io.Writer); ok {
		v = term.Unwrap(w)
	}
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

const (
	dim    = "\x1b[2m"
	red    = "\x1b[31m"
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
	reset  = "\x1b[0m"
)

func (p *progress) paint(color, s string) string {
	if !p.color {
		return s
	}
	return color + s + reset
}

// line writes one line of progress, after ending any streamed text.
func (p *progress) line(s string) {
	p.stopSpinner()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endText()
	io.WriteString(p.w, s+"\n")
}

// prompt writes a question that the user answers on the same line.
func (p *progress) prompt(s string) {
	p.stopSpinner()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endText()
	io.WriteString(p.w, p.paint(yellow, s))
}

// endText ends the streamed text: what the stream held back, and a line
// break if it left the cursor mid-line.
func (p *progress) endText() {
	if rest := p.streamed.Flush(); rest != "" {
		io.WriteString(p.w, p.paint(dim, rest))
		p.midLine = !strings.HasSuffix(rest, "\n")
	}
	if p.midLine {
		io.WriteString(p.w, "\n")
		p.midLine = false
	}
}

// text writes the next piece of the model's streamed text, made safe.
func (p *progress) text(s string) {
	p.stopSpinner()
	p.mu.Lock()
	defer p.mu.Unlock()
	if s = p.streamed.Text(s); s != "" {
		io.WriteString(p.w, p.paint(dim, s))
		p.midLine = !strings.HasSuffix(s, "\n")
	}
}

func (p *progress) event(e agent.Event) {
	if p.call != "" && e.Kind != agent.EventContext && e.Kind != agent.EventCompact {
		p.line(p.paint(dim, p.call))
		p.call = ""
		p.startSpinner()
	}
	switch e.Kind {
	case agent.EventIteration:
		// Said with the context's fill, which comes next when the window
		// is known.
		p.call = "· model call " + strconv.Itoa(e.Iteration)
	case agent.EventContext:
		f := *e.Fill
		if f.Measured {
			p.fill = f
			if f.Percent() > p.peak.Percent() {
				p.peak = f
			}
			return
		}
		if p.call != "" {
			p.line(p.paint(dim, p.call+fmt.Sprintf(" · context %d%% of %s", f.Percent(), tokenCount(f.Window))))
			p.call = ""
			p.startSpinner()
		}
	case agent.EventCompact:
		c := e.Compaction
		p.line(p.paint(yellow, fmt.Sprintf("· compacted: %d earlier messages replaced by the model's notes (about %s → %s tokens of %s)",
			c.Replaced, tokenCount(c.Before), tokenCount(c.After), tokenCount(c.Window))))
	case agent.EventText, agent.EventReasoning:
		if p.stream && e.Text != "" {
			p.text(e.Text)
		}
	case agent.EventCallEnd:
		call := term.Text(e.Call.Tool + " " + clip(compactJSON(e.Call.Args), 160))
		if e.Err != nil {
			p.line(p.paint(red, "✗ "+call+": "+term.Text(clip(e.Err.Message, 200))))
			return
		}
		p.line(p.paint(cyan, "→ "+call))
	case agent.EventToolResult:
		r := e.ToolResult
		first, n := summary(r.Content)
		s := "  ← " + term.Text(first)
		if n > 1 {
			s += fmt.Sprintf(" (%d lines)", n)
		}
		if e.Cached {
			s += " (cached)"
		}
		if r.IsError {
			p.line(p.paint(red, s))
		} else {
			p.line(p.paint(dim, s))
		}
	case agent.EventDenied:
		// all of the reason: it says how to allow the call
		p.line(p.paint(yellow, "  ⊘ "+term.Text(e.Call.Tool+" denied: "+strings.Join(strings.Fields(e.Text), " "))))
	case agent.EventDuplicate:
		p.line(p.paint(yellow, "  ↺ "+term.Text(e.Call.Tool)+" repeats a recent call; not run"))
	case agent.EventModeSwitch:
		p.line(p.paint(yellow, "· "+term.Text(e.Text)))
	case agent.EventModelDone:
		p.stopSpinner()
	case agent.EventDone:
		p.stopSpinner()
		if r := e.Run; r != nil {
			s := fmt.Sprintf("· %d model call%s, %d tool call%s, %d+%d tokens, %s",
				r.Iterations, plural(r.Iterations), r.TotalToolCalls, plural(r.TotalToolCalls),
				r.Usage.PromptTokens, r.Usage.CompletionTokens, r.Duration.Round(time.Millisecond))
			if r.Cost > 0 {
				s += fmt.Sprintf(", $%.4f", r.Cost)
			}
			if p.peak.Window > 0 {
				s += fmt.Sprintf(", context at most %d%% of %s", p.peak.Percent(), tokenCount(p.peak.Window))
			}
			if n := len(r.Compactions); n > 0 {
				s += fmt.Sprintf(", compacted %d time%s", n, plural(n))
			}
			if r.Success {
				p.line(p.paint(green, s))
			} else {
				p.line(p.paint(red, s))
			}
		}
	}
}

// tokenCount writes a number of tokens short: 4096, 32k, 128k, 1M.
func tokenCount(n int) string {
	switch {
	case n >= 1_000_000 && n%100_000 == 0 || n >= 10_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "M"
	case n >= 10_000:
		return strconv.Itoa((n+500)/1000) + "k"
	}
	return strconv.Itoa(n)
}

// compactJSON returns JSON on one line without spaces, or b as it is when
// it is not JSON.
func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// summary returns the first non-blank line of s, clipped, and the number
// of lines.
func summary(s string) (string, int) {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "(empty)", 0
	}
	n := strings.Count(s, "\n") + 1
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) != "" {
			return clip(l, 120), n
		}
	}
	return "", n
}

// clip shortens s to about n bytes on one line, on a rune boundary.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func (p *progress) startSpinner() {
	if !p.tty {
		return
	}
	p.stopSpinner()
	stop, done := make(chan struct{}), make(chan struct{})
	p.spinStop, p.spinDone = stop, done
	go func() {
		defer close(done)
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		start := time.Now()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			p.mu.Lock()
			fmt.Fprintf(p.w, "\r%s thinking %.1fs", p.paint(cyan, frames[i%len(frames)]), time.Since(start).Seconds())
			p.mu.Unlock()
			select {
			case <-stop:
				p.mu.Lock()
				io.WriteString(p.w, "\r\x1b[K")
				p.mu.Unlock()
				return
			case <-t.C:
			}
		}
	}()
}

func (p *progress) stopSpinner() {
	if p.spinStop == nil {
		return
	}
	close(p.spinStop)
	<-p.spinDone
	p.spinStop, p.spinDone = nil, nil
}
