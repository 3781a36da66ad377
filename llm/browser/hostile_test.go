package browser

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/browser/browsertest"
)

// TestHostilePage: a page's scripts are not trusted. One that replaces the
// DOM methods a driver calls is read right all the same (ptk's code runs
// in a world of its own); one that opens an alert does not block the call;
// one whose script loops for ever is an error, not a hang, and its tab is
// closed; one that writes without end is cut off with an error.
func TestHostilePage(t *testing.T) {
	answer := "The real answer.\nOn two lines."
	reply := func(string) browsertest.Reply { return browsertest.Reply{Text: answer} }

	p := browsertest.NewPage(t, browsertest.Options{Tamper: true, Reply: reply})
	resp, err := model(t, p).Generate(t.Context(), ask("Hello"))
	if err != nil || resp.Content != answer {
		t.Errorf("a page that replaces the DOM methods: %v, %+v", err, resp)
	}

	p = browsertest.NewPage(t, browsertest.Options{AlertAt: "two", Reply: reply})
	start := time.Now()
	resp, err = model(t, p).Generate(t.Context(), ask("Hello"))
	if err != nil || resp.Content != answer || time.Since(start) > 20*time.Second {
		t.Errorf("a page that opens an alert: %v, %+v after %v", err, resp, time.Since(start))
	}

	p = browsertest.NewPage(t, browsertest.Options{FreezeAt: "two", Reply: reply})
	err = within(t, 15*time.Second, func() error {
		_, err := model(t, p, WithLoadTimeout(2*time.Second)).Generate(t.Context(), ask("Hello"))
		return err
	})
	wantErr(t, err, ErrTimeout, llm.ErrServer, "did not respond for 2s")
	if left := tabs(t, p.URL); len(left) != 0 {
		t.Errorf("the frozen tab was left open: %+v", left)
	}

	p = browsertest.NewPage(t, browsertest.Options{Delay: time.Millisecond,
		Reply: func(string) browsertest.Reply { return browsertest.Reply{Text: strings.Repeat("spam ", 2000)} }})
	_, err = model(t, p, WithMaxAnswer(1000)).Generate(t.Context(), ask("Hello"))
	wantErr(t, err, nil, llm.ErrBadResponse, "longer than 1000 characters")
}

// TestConcurrentCalls: calls at the same time are chats in tabs of their
// own, each with its own answer.
func TestConcurrentCalls(t *testing.T) {
	p := browsertest.NewPage(t, browsertest.Options{Delay: 20 * time.Millisecond})
	m := model(t, p)
	var wg sync.WaitGroup
	answers := make([]string, 3)
	for i := range answers {
		wg.Go(func() {
			prompt := strings.Repeat("xyz"[i:i+1], 5) + " please"
			resp, err := m.Generate(t.Context(), ask(prompt))
			if err != nil {
				t.Error(err)
				return
			}
			if want := "You said: " + prompt; resp.Content != want {
				t.Errorf("call %d: %q, want %q", i, resp.Content, want)
			}
		})
	}
	wg.Wait()
	if n := len(p.Messages()); n != 3 {
		t.Errorf("%d messages, want 3", n)
	}
}
