package browser

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm/browser/browsertest"
)

// TestAnswer: the page's answer, read as the page shows it: paragraphs,
// line breaks, a code block without its label and Copy button.
func TestAnswer(t *testing.T) {
	answer := "Here is the plan.\n\nFirst line\nsecond line\n\n```json\n{\"a\": 1,\n  \"b\": [true, null]}\n```\n\nDone."
	p := browsertest.NewPage(t, browsertest.Options{Reply: func(string) browsertest.Reply { return browsertest.Reply{Text: answer} }})
	m := model(t, p)
	resp, err := m.Generate(t.Context(), ask("Make a plan."))
	if err != nil {
		t.Fatal(err)
	}
	want := "Here is the plan.\n\nFirst line\nsecond line\n\n{\"a\": 1,\n  \"b\": [true, null]}\n\nDone."
	if resp.Content != want {
		t.Errorf("content %q\nwant    %q", resp.Content, want)
	}
	if msgs := p.Messages(); len(msgs) != 1 || msgs[0].Text != "Make a plan." {
		t.Errorf("the page was sent %+v", msgs)
	}
	if left := tabs(t, p.URL); len(left) != 0 {
		t.Errorf("tabs left open: %+v", left)
	}
}

// TestStreamsBeforeTheEnd: text arrives, a line at a time, while the page
// is still writing the answer; the pieces make the answer.
func TestStreamsBeforeTheEnd(t *testing.T) {
	var lines []string
	for i := 1; i <= 12; i++ {
		lines = append(lines, fmt.Sprintf("Line %d of the answer, with a **bold** word.", i))
	}
	answer := strings.Join(lines, "\n")
	p := browsertest.NewPage(t, browsertest.Options{Delay: 25 * time.Millisecond,
		Reply: func(string) browsertest.Reply { return browsertest.Reply{Text: answer} }})
	m := model(t, p)
	var (
		got        strings.Builder
		first      time.Time
		pieces     int
		screenshot bool
	)
	for ch, err := range m.Stream(t.Context(), ask("Write twelve lines.")) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.Text != "" {
			pieces++
			if first.IsZero() {
				first = time.Now()
			}
			if !screenshot && pieces == 3 {
				screenshot = true
				shoot(t, p.URL, "browser-streaming")
			}
		}
		got.WriteString(ch.Text)
	}
	if got.String() != answer {
		t.Fatalf("streamed %q\nwant     %q", got.String(), answer)
	}
	msgs := p.Messages()
	if len(msgs) != 1 || msgs[0].Finished.IsZero() {
		t.Fatalf("messages %+v", msgs)
	}
	ahead := msgs[0].Finished.Sub(first)
	t.Logf("%d pieces; the first %v before the page finished writing", pieces, ahead.Round(time.Millisecond))
	if pieces < 3 || ahead < 100*time.Millisecond {
		t.Errorf("the answer was not streamed: %d pieces, the first %v before the end", pieces, ahead)
	}
}
