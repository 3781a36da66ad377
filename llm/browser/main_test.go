package browser

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/browser/browsertest"
)

// shared is the headless Chromium the package's tests drive, started once
// by TestMain; nil without one (chromiumErr says why).
var (
	shared      *browsertest.Chromium
	chromiumErr error
)

func TestMain(m *testing.M) {
	exe, err := browsertest.ChromiumPath()
	if err == nil {
		dir, derr := os.MkdirTemp("", "ptk-browser-test-")
		if derr != nil {
			fmt.Fprintln(os.Stderr, derr)
			os.Exit(1)
		}
		shared, err = browsertest.StartChromium(exe, dir)
		defer os.RemoveAll(dir)
	}
	chromiumErr = err
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	if code == 0 {
		code = leaks()
	}
	os.RemoveAll(os.Getenv("PTK_BROWSER_TEST_DIR"))
	os.Exit(code)
}

// browserAt returns the shared browser, skipping the test without one
// (failing it under CI).
func browserAt(t testing.TB) *Browser {
	t.Helper()
	if shared == nil {
		if os.Getenv("CI") != "" || os.Getenv("PTK_TEST_CHROMIUM") != "" {
			t.Fatal(chromiumErr)
		}
		t.Skip(chromiumErr)
	}
	b, err := Attach(shared.URL)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// model returns the page as a model in the shared browser, with short
// timeouts.
func model(t testing.TB, p *browsertest.Page, opts ...Option) *Model {
	t.Helper()
	site, err := ParseSite(p.Site("testchat"))
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]Option{WithLoadTimeout(10 * time.Second), WithStartTimeout(10 * time.Second), WithTimeout(60 * time.Second)}, opts...)
	return New(site, browserAt(t), opts...)
}

// ask is a request with prompt as the flattened conversation.
func ask(prompt string) llm.Request {
	return llm.Request{Prompt: prompt, Messages: []ptk.Message{{Role: ptk.RoleUser, Content: prompt}}}
}

// tab is a tab of the shared browser, as its /json/list lists it.
type tab struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// tabs lists the shared browser's tabs whose address starts with prefix.
func tabs(t *testing.T, prefix string) []tab {
	t.Helper()
	resp, err := http.Get(shared.URL + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all, out []tab
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		t.Fatal(err)
	}
	for _, x := range all {
		if x.Type == "page" && strings.HasPrefix(x.URL, prefix) {
			out = append(out, x)
		}
	}
	return out
}

// closeTab closes a tab of the shared browser, as a user would.
func closeTab(t *testing.T, id string) {
	t.Helper()
	resp, err := http.Get(shared.URL + "/json/close/" + id)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
