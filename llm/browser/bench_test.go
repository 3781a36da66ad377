package browser

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm/browser/browsertest"
)

// BenchmarkChat: one call, end to end, on the test page in a real
// Chromium: a tab opened, the page loaded, the prompt in, a short answer
// followed to its end, the tab closed. The quiet period (300 ms on the
// test page) is part of it by design; overhead-ms is the rest.
func BenchmarkChat(b *testing.B) {
	p := browsertest.NewPage(b, browsertest.Options{Reply: func(string) browsertest.Reply { return browsertest.Reply{Text: "ok"} }})
	m := model(b, p)
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := m.Generate(context.Background(), ask("hi")); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64((total-time.Duration(b.N)*m.set.quiet).Milliseconds())/float64(b.N), "overhead-ms/op")
}

// BenchmarkPrompt100KB: a 100 KB prompt put in, by each way of putting it.
func BenchmarkPrompt100KB(b *testing.B) {
	prompt := bigPrompt(100_000)
	for _, c := range []struct{ name, editor, method string }{
		{"textarea-value", "", ""},
		{"textarea-insert", "", "insert"},
		{"editable-insert", "contenteditable", ""},
		{"editable-paste", "contenteditable", "paste"},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := browsertest.NewPage(b, browsertest.Options{Editor: c.editor, Reply: func(string) browsertest.Reply { return browsertest.Reply{Text: "ok"} }})
			site, _ := ParseSite(p.Site("testchat"))
			site.InputMethod = c.method
			m := New(site, browserAt(b), WithLoadTimeout(60*time.Second))
			for b.Loop() {
				if _, err := m.Generate(context.Background(), ask(prompt)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRead: one reading of a page whose answer holds n bytes of
// paragraphs and code: what each poll costs while an answer is written.
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var body strings.Builder
			for i := 0; body.Len() < n; i++ {
				fmt.Fprintf(&body, "<p>Paragraph %d with <b>bold</b> text<br>and a second line.</p><pre><div class=h>go<button>Copy</button></div><code>x := %d\n</code></pre>", i, i)
			}
			page := "<!doctype html><textarea id=prompt></textarea><div class=answer>" + body.String() + "</div>"
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, page) }))
			defer srv.Close()
			site := &Site{Name: "bench", URL: srv.URL + "/", Selectors: Selectors{Input: "#prompt", Answer: ".answer", Exclude: ".h", Busy: "#busy"}}
			m := New(site, browserAt(b), WithLoadTimeout(30*time.Second))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &call{m: m, ctx: ctx}
			defer c.close()
			if err := c.connect(); err != nil {
				b.Fatal(err)
			}
			if err := c.open(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				st, err := c.state()
				if err != nil || st.Count != 1 || len(st.Text) < n/4 {
					b.Fatalf("%v: %d answers, %d bytes: %.200q", err, st.Count, len(st.Text), st.Text)
				}
			}
		})
	}
}

// BenchmarkFollower: the streaming of an answer of 100 KB read 1,000
// times as it grows: the Go side of following a long answer.
func BenchmarkFollower(b *testing.B) {
	answer := strings.Repeat("a line of the answer, as the page shows it\n", 2400)
	for b.Loop() {
		var f follower
		for i := 1; i <= 1000; i++ {
			f.see(answer[:len(answer)*i/1000])
		}
		f.end(answer)
	}
}
