package browser

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/browser/browsertest"
)

// openTab opens a tab on u in the shared browser, as a user would.
func openTab(t *testing.T, u string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, shared.URL+"/json/new?"+url.QueryEscape(u), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("opening a tab: %s", resp.Status)
	}
}

// TestReuseTab: WithReuseTab takes over the tab open on the site, starts
// a new chat in it with the site's button, and leaves it open.
func TestReuseTab(t *testing.T) {
	p := browsertest.NewPage(t, browsertest.Options{})
	browserAt(t)
	openTab(t, p.URL)
	t.Cleanup(func() {
		for _, x := range tabs(t, p.URL) {
			closeTab(t, x.ID)
		}
	})
	m := model(t, p, WithReuseTab())
	for _, q := range []string{"first", "second"} {
		resp, err := m.Generate(t.Context(), ask(q))
		if err != nil || resp.Content != "You said: "+q {
			t.Fatalf("%s: %v, %+v", q, err, resp)
		}
		if open := tabs(t, p.URL); len(open) != 1 {
			t.Fatalf("after %s, %d tabs on the page, want the one there was", q, len(open))
		}
	}
	// Two at once take turns in the one tab.
	var wg sync.WaitGroup
	for _, q := range []string{"third", "fourth"} {
		wg.Go(func() {
			resp, err := m.Generate(t.Context(), ask(q))
			if err != nil || resp.Content != "You said: "+q {
				t.Errorf("%s: %v, %+v", q, err, resp)
			}
		})
	}
	wg.Wait()
	if open := tabs(t, p.URL); len(open) != 1 {
		t.Errorf("after two calls at once, %d tabs on the page", len(open))
	}
	msgs := p.Messages()
	chats := map[string]bool{}
	for _, m := range msgs {
		chats[m.Chat] = true
	}
	if len(msgs) != 4 || len(chats) != 4 {
		t.Errorf("each call is not a chat of its own: %+v", msgs)
	}
}

// TestLaunch: a browser started with a profile directory, detached, is
// found running by the next model and not started again.
func TestLaunch(t *testing.T) {
	browserAt(t) // skips without Chromium
	if runtime.GOOS != "linux" {
		t.Skip("counts the browser's processes in /proc")
	}
	exe, _ := browsertest.ChromiumPath()
	dir := filepath.Join(t.TempDir(), "profile")
	t.Cleanup(func() { browsertest.KillProfile(dir) })
	p := browsertest.NewPage(t, browsertest.Options{})
	site, _ := ParseSite(p.Site("testchat"))
	for i := range 2 {
		b, err := Launch(LaunchOptions{ProfileDir: dir, Exec: exe, Flags: browsertest.Flags, StartTimeout: 60 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := New(site, b, WithLoadTimeout(20*time.Second)).Generate(t.Context(), ask("hi"))
		if err != nil || resp.Content != "You said: hi" {
			t.Fatalf("call %d: %v, %+v", i, err, resp)
		}
		if n := browsers(dir); n != 1 {
			t.Fatalf("after call %d, %d browsers run with the profile, want 1", i, n)
		}
	}

	_, err := Launch(LaunchOptions{})
	if err == nil {
		t.Error("Launch without a profile directory")
	}
	b, _ := Launch(LaunchOptions{ProfileDir: t.TempDir(), Exec: "/bin/true"})
	_, err = New(site, b).Generate(context.Background(), ask("hi"))
	wantErr(t, err, ErrNoBrowser, llm.ErrConnection, "exited at once")
}

// browsers counts the browsers (main processes) running with the profile
// directory dir.
func browsers(dir string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		own, child := false, false
		for _, a := range args {
			own = own || a == "--user-data-dir="+dir
			child = child || strings.HasPrefix(a, "--type=")
		}
		if own && !child {
			n++
		}
	}
	return n
}
