// Package browsertest serves a chat page that behaves like the real ones
// (an input, a send button, an answer streamed in word by word under a busy
// indicator, a new-chat button, an error banner), and starts a headless
// Chromium to drive it, for the tests of llm/browser and of what uses it.
//
// The page's "model" is a function of the message it is sent, so that a
// test scripts the answers as it would a fake provider's.
package browsertest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed chat.html
var chatHTML string

// Options shape the chat page.
type Options struct {
	// Layout is "" (the page the site file describes), "renamed-input" (the
	// input and send button have other ids: a redesign) or "renamed-answer"
	// (the answers have another class).
	Layout string
	// Editor is "" (a textarea) or "contenteditable" (a rich editor that
	// inserts pasted text itself).
	Editor string
	// LoggedOut shows a "Log in" button and no input.
	LoggedOut bool
	// MaxLength, when above zero, is the textarea's maxlength.
	MaxLength int
	// Tamper makes the page's own scripts replace the DOM methods a driver
	// would call (querySelector, querySelectorAll, innerText, click,
	// checkVisibility) with ones that lie, as a hostile page can.
	Tamper bool
	// AlertAt, when set, makes the page open an alert once the answer holds
	// this text; FreezeAt makes its script loop for ever then, which
	// blocks the page.
	AlertAt, FreezeAt string
	// Delay is the pause between two words of an answer: 10 ms unless set.
	// FirstDelay is the pause before the first one.
	Delay, FirstDelay time.Duration
	// Reply answers a message; nil echoes it.
	Reply func(message string) Reply
}

// Reply is the page's answer to a message.
type Reply struct {
	// Text is the answer, streamed a word at a time.
	Text string
	// Status, when not zero, makes the answer an error with this HTTP
	// status, which the page shows as Error in its banner.
	Status int
	Error  string
	// Hang streams nothing and never ends: the page stays busy.
	Hang bool
}

// Message is a message the page sent to its server.
type Message struct {
	Chat, Text string
	// Received is when it arrived; Finished when its answer was sent whole
	// (zero while it is being sent, or when it was cut off).
	Received, Finished time.Time
}

// Page is a chat page served by httptest.
type Page struct {
	// URL is the page's address.
	URL  string
	opts Options

	mu   sync.Mutex
	msgs []Message
}

// NewPage serves a chat page until the test ends.
func NewPage(t testing.TB, o Options) *Page {
	if o.Delay == 0 {
		o.Delay = 10 * time.Millisecond
	}
	if o.Reply == nil {
		o.Reply = func(m string) Reply { return Reply{Text: "You said: " + m} }
	}
	p := &Page{opts: o}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", p.page)
	mux.HandleFunc("POST /api/chat", p.chat)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL + "/"
	return p
}

// Messages returns the messages the page has sent so far.
func (p *Page) Messages() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Message(nil), p.msgs...)
}

// Site returns the site file that describes the page (its default layout),
// named name, with a quiet period of 300 ms.
func (p *Page) Site(name string) []byte {
	site := map[string]any{
		"name":       name,
		"title":      "Test Chat",
		"url":        p.URL,
		"maintained": "browsertest",
		"selectors": map[string]string{
			"input":      "#prompt",
			"send":       "#send",
			"answer":     ".msg.assistant .content",
			"exclude":    ".code-header",
			"busy":       "#stop",
			"new_chat":   "#new-chat",
			"logged_out": "#login",
			"error":      "#banner",
		},
		"rate_limit": []string{"message limit", "too many requests"},
		"quiet_ms":   300,
	}
	data, _ := json.MarshalIndent(site, "", "  ")
	return data
}

// SiteFile writes Site(name) to a file in dir and returns its path.
func (p *Page) SiteFile(t testing.TB, dir, name string) string {
	f := filepath.Join(dir, name+".json")
	if err := os.WriteFile(f, p.Site(name), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func (p *Page) page(w http.ResponseWriter, _ *http.Request) {
	settings, _ := json.Marshal(map[string]any{
		"layout": p.opts.Layout, "editor": p.opts.Editor, "loggedOut": p.opts.LoggedOut,
		"maxLength": p.opts.MaxLength, "alertAt": p.opts.AlertAt, "freezeAt": p.opts.FreezeAt,
	})
	html := strings.Replace(chatHTML, "/*SETTINGS*/{}", string(settings), 1)
	if p.opts.Tamper {
		html = strings.Replace(html, "<head>", "<head>\n<script>"+tamperJS+"</script>", 1)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, html)
}

// tamperJS replaces, in the page's own world, what a driver would call.
const tamperJS = `
Document.prototype.querySelectorAll = function () { return []; };
Document.prototype.querySelector = function () { return null; };
Object.defineProperty(HTMLElement.prototype, "innerText", { get() { return "FORGED"; }, configurable: true });
HTMLElement.prototype.click = function () {};
Element.prototype.checkVisibility = function () { return false; };
`

var words = regexp.MustCompile(`\s*\S+\s*`)

func (p *Page) chat(w http.ResponseWriter, r *http.Request) {
	var req struct{ Chat, Message string }
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	i := len(p.msgs)
	p.msgs = append(p.msgs, Message{Chat: req.Chat, Text: req.Message, Received: time.Now()})
	p.mu.Unlock()
	rep := p.opts.Reply(req.Message)
	if rep.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		json.NewEncoder(w).Encode(map[string]string{"error": rep.Error})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if rep.Hang {
		<-r.Context().Done()
		return
	}
	pause := func(d time.Duration) bool {
		select {
		case <-r.Context().Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	if !pause(p.opts.FirstDelay) {
		return
	}
	for _, word := range words.FindAllString(rep.Text, -1) {
		if _, err := io.WriteString(w, word); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		if !pause(p.opts.Delay) {
			return
		}
	}
	p.mu.Lock()
	p.msgs[i].Finished = time.Now()
	p.mu.Unlock()
}

// Chromium's flags for a test on a machine without a display, a GPU or a
// network: headless, no sandbox (tests run as root in containers), no
// QUIC, no first-run page, no background traffic.
var Flags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--no-default-browser-check", "--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-dev-shm-usage", "--window-size=1280,900"}

// ChromiumPath returns the browser of the tests: $PTK_TEST_CHROMIUM, else
// chromium on the PATH.
func ChromiumPath() (string, error) {
	if p := os.Getenv("PTK_TEST_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := lookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium: install Debian's chromium (as .ci/run does) or set PTK_TEST_CHROMIUM")
}
