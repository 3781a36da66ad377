package browser

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/browser/browsertest"
)

// within fails the test when f takes longer than d: a failure must come
// as an error, never as a hang.
func within[T any](t *testing.T, d time.Duration, f func() T) T {
	t.Helper()
	start := time.Now()
	v := f()
	if took := time.Since(start); took > d {
		t.Errorf("took %v, more than %v", took.Round(time.Millisecond), d)
	}
	return v
}

// wantErr checks that err is the classified error: the browser sentinel
// and the llm kind.
func wantErr(t *testing.T, err, sentinel, kind error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", sentinel)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("error %q is not %q", err, sentinel)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error %q is not of the kind %q", err, kind)
	}
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Errorf("error %q is not an *llm.Error", err)
	}
	t.Log(err)
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

// TestLayoutChanged: a page whose input, or whose answers, no longer
// match the site file gives ErrLayoutChanged, quickly, naming the selector.
func TestLayoutChanged(t *testing.T) {
	for _, c := range []struct {
		layout string
		words  []string
	}{
		{"renamed-input", []string{"input selector", `"#prompt"`}},
		{"renamed-answer", []string{"answer selector", `".msg.assistant .content"`}},
	} {
		t.Run(c.layout, func(t *testing.T) {
			p := browsertest.NewPage(t, browsertest.Options{Layout: c.layout})
			m := model(t, p, WithLoadTimeout(2*time.Second))
			err := within(t, 15*time.Second, func() error { _, err := m.Generate(t.Context(), ask("Hello")); return err })
			wantErr(t, err, ErrLayoutChanged, llm.ErrBadResponse, c.words...)
			t.Log(err)
		})
	}
}

// TestTabClosedMidAnswer: the tab closed while the page writes gives
// ErrTabClosed at once, not a hang; the next call opens a tab again.
func TestTabClosedMidAnswer(t *testing.T) {
	long := strings.Repeat("a slow answer that goes on\n", 200)
	p := browsertest.NewPage(t, browsertest.Options{Delay: 30 * time.Millisecond,
		Reply: func(m string) browsertest.Reply {
			if m == "again" {
				return browsertest.Reply{Text: "Back."}
			}
			return browsertest.Reply{Text: long}
		}})
	m := model(t, p)
	var err error
	closed := time.Time{}
	for ch, e := range m.Stream(t.Context(), ask("Write at length.")) {
		if e != nil {
			err = e
			break
		}
		if ch.Text != "" && closed.IsZero() {
			open := tabs(t, p.URL)
			if len(open) != 1 {
				t.Fatalf("tabs on the page: %+v", open)
			}
			closeTab(t, open[0].ID)
			closed = time.Now()
		}
	}
	if closed.IsZero() {
		t.Fatal("no text streamed before the end")
	}
	wantErr(t, err, ErrTabClosed, llm.ErrConnection, "tab closed while following the answer")
	if took := time.Since(closed); took > 5*time.Second {
		t.Errorf("the error came %v after the tab closed", took)
	}
	t.Log(err)
	resp, err := m.Generate(t.Context(), ask("again"))
	if err != nil || resp.Content != "Back." {
		t.Fatalf("the next call: %v, %+v", err, resp)
	}
}

// TestSignedOutAndLimited: a signed-out page, a rate-limit banner and
// another error banner, each classified.
func TestSignedOutAndLimited(t *testing.T) {
	p := browsertest.NewPage(t, browsertest.Options{LoggedOut: true})
	_, err := model(t, p).Generate(t.Context(), ask("Hello"))
	wantErr(t, err, ErrLoggedOut, llm.ErrAuth, "sign in", "never handles your password")

	p = browsertest.NewPage(t, browsertest.Options{Reply: func(m string) browsertest.Reply {
		if m == "limit" {
			return browsertest.Reply{Status: 429, Error: "You have reached your message limit. Try again in 3 hours."}
		}
		return browsertest.Reply{Status: 500, Error: "Something went wrong\x1b[2J while generating."}
	}})
	_, err = model(t, p).Generate(t.Context(), ask("limit"))
	wantErr(t, err, ErrRateLimited, llm.ErrRateLimited, "reached your message limit")
	if !llm.Retryable(err) {
		t.Errorf("a rate limit is not retryable: %v", err)
	}
	_, err = model(t, p).Generate(t.Context(), ask("fail"))
	wantErr(t, err, nil, llm.ErrServer, "Something went wrong")
	if strings.Contains(err.Error(), "\x1b") {
		t.Errorf("the page's text reaches the error unquoted: %q", err)
	}
}

// TestTimeouts: a page that stays busy forever ends at the call's timeout;
// a caller's cancellation ends the call with its own error; neither leaves
// a tab open.
func TestTimeouts(t *testing.T) {
	p := browsertest.NewPage(t, browsertest.Options{Reply: func(string) browsertest.Reply { return browsertest.Reply{Hang: true} }})
	m := model(t, p, WithTimeout(3*time.Second))
	err := within(t, 10*time.Second, func() error { _, err := m.Generate(t.Context(), ask("Hello")); return err })
	wantErr(t, err, ErrTimeout, llm.ErrServer, "no answer within 3s", "following the answer")

	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(1500*time.Millisecond, cancel)
	err = within(t, 6*time.Second, func() error { _, err := model(t, p).Generate(ctx, ask("Hello")); return err })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	if left := tabs(t, p.URL); len(left) != 0 {
		t.Errorf("tabs left open: %+v", left)
	}
}

// TestNoBrowser: nothing listening at the address is ErrNoBrowser, with
// what to do about it.
func TestNoBrowser(t *testing.T) {
	b, err := Attach("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	site, _ := Builtin("chatgpt")
	err = within(t, 15*time.Second, func() error { _, err := New(site, b).Generate(t.Context(), ask("Hello")); return err })
	wantErr(t, err, ErrNoBrowser, llm.ErrConnection, "--remote-debugging-port=9222")
	for _, bad := range []string{"", "127.0.0.1:9222", "file:///tmp", "http://"} {
		if _, err := Attach(bad); err == nil {
			t.Errorf("Attach(%q) took a bad address", bad)
		}
	}
}
