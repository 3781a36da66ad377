package browser

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/browser/browsertest"
)

func TestParseSite(t *testing.T) {
	good := `{"name": "mine", "url": "https://chat.example.com/new", "selectors": {"input": "textarea", "answer": ".reply"}}`
	s, err := ParseSite([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.match() != "https://chat.example.com/" || s.quiet() != quietWithoutBusy {
		t.Errorf("match %q, quiet %v", s.match(), s.quiet())
	}
	for _, c := range []struct{ name, file, want string }{
		{"unknown field", `{"name": "x", "url": "https://a.b/", "selectors": {"input": "t", "answer": "a", "anwser": "b"}}`, "unknown field"},
		{"bad name", `{"name": "../etc", "url": "https://a.b/", "selectors": {"input": "t", "answer": "a"}}`, "name must be"},
		{"javascript url", `{"name": "x", "url": "javascript:alert(1)", "selectors": {"input": "t", "answer": "a"}}`, "not an http or https address"},
		{"no host", `{"name": "x", "url": "https:///x", "selectors": {"input": "t", "answer": "a"}}`, "has no host"},
		{"no input", `{"name": "x", "url": "https://a.b/", "selectors": {"answer": "a"}}`, "required"},
		{"input method", `{"name": "x", "url": "https://a.b/", "input_method": "type", "selectors": {"input": "t", "answer": "a"}}`, "input_method"},
		{"read", `{"name": "x", "url": "https://a.b/", "read": "html", "selectors": {"input": "t", "answer": "a"}}`, "read must be"},
		{"quiet", `{"name": "x", "url": "https://a.b/", "quiet_ms": 600000, "selectors": {"input": "t", "answer": "a"}}`, "quiet_ms"},
		{"two values", good + good, "more than one JSON value"},
		{"too big", `{"name": "x", "url": "https://a.b/", "title": "` + strings.Repeat("a", maxSiteFile) + `"}`, "the limit is"},
	} {
		if _, err := ParseSite([]byte(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error that says %q", c.name, err, c.want)
		}
	}
}

// TestBuiltinSites: every built-in site reads, says it is maintained by
// hand, and is found by name; a file is found by its path.
func TestBuiltinSites(t *testing.T) {
	names := Builtins()
	if len(names) < 3 {
		t.Fatalf("built-in sites: %v", names)
	}
	for _, name := range names {
		s, ok := Builtin(name)
		if !ok || s.Name != name || !strings.Contains(s.Maintained, "maintained by hand") || s.quiet() != time.Second {
			t.Errorf("%s: %+v", name, s)
		}
	}
	if _, ok := Builtin("../sites/chatgpt"); ok {
		t.Error("a path passes for a built-in name")
	}
	if _, err := FindSite("nosuch"); err == nil || !strings.Contains(err.Error(), "chatgpt") {
		t.Errorf("an unknown site: %v", err)
	}
	f := filepath.Join(t.TempDir(), "mine.json")
	os.WriteFile(f, []byte(`{"name": "mine", "url": "https://a.b/", "selectors": {"input": "t", "answer": "a"}}`), 0o644)
	if s, err := FindSite(f); err != nil || s.Name != "mine" {
		t.Errorf("FindSite(%s): %v", f, err)
	}
}

// TestSelectorsParse: the built-in sites' selectors are CSS the browser
// reads (on a page that is not theirs, they find no input: a layout
// change); a selector it cannot read is a broken site file.
func TestSelectorsParse(t *testing.T) {
	p := browsertest.NewPage(t, browsertest.Options{})
	b := browserAt(t)
	var wg sync.WaitGroup
	for _, name := range Builtins() {
		wg.Go(func() {
			s, _ := Builtin(name)
			s.URL = p.URL
			_, err := New(s, b, WithLoadTimeout(4*time.Second)).Generate(t.Context(), ask("hi"))
			if !errors.Is(err, ErrLayoutChanged) {
				t.Errorf("%s: %v, want a layout change", name, err)
			}
		})
	}
	wg.Wait()
	s, _ := ParseSite(p.Site("testchat"))
	s.Selectors.Busy = "button:has(("
	_, err := New(s, b).Generate(t.Context(), ask("hi"))
	wantErr(t, err, nil, llm.ErrBadRequest, "cannot read", "busy")
}
