package browser

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Site is a chat page described as data: where it is, and the CSS
// selectors that find its parts. A site's redesign is a change to its file,
// not to ptk's code. A Site does not change after it is read.
type Site struct {
	// Name is the site's short name: browser:NAME in the model catalog.
	Name string `json:"name"`
	// Title is the site's name as people know it ("ChatGPT").
	Title string `json:"title,omitempty"`
	// URL is the page that starts a new chat.
	URL string `json:"url"`
	// Match is the start of the address of the site's chat pages, for a
	// tab to reuse (WithReuseTab); the URL's scheme and host when empty.
	Match string `json:"match,omitempty"`
	// Maintained says who keeps the selectors up to date, and when they
	// were last checked: the built-in sites are maintained by hand, and a
	// site that changes its page breaks them.
	Maintained string `json:"maintained,omitempty"`
	// Selectors find the parts of the page.
	Selectors Selectors `json:"selectors"`
	// InputMethod is how the prompt gets into the input, all at once, never
	// typed key by key: "insert" (the browser inserts the whole text as an
	// input method does, which every editor takes, though slowly for long
	// texts: seconds for 100 KB), "value" (a textarea's or an input's value
	// is set and an input event sent, as frameworks expect), "paste" (a
	// paste event carrying the text, for an editor that reads only pastes)
	// or "" (value for a textarea or an input, insert for an editable
	// element).
	InputMethod string `json:"input_method,omitempty"`
	// Read is how the answer's text is read: "innerText" (the default: the
	// text as the page shows it, paragraphs and line breaks included) or
	// "textContent" (every text node as it is in the document).
	Read string `json:"read,omitempty"`
	// RateLimit are phrases (any letter case) that, in an error banner
	// (Selectors.Error), say the account is rate limited. Another banner is
	// a failure of the site.
	RateLimit []string `json:"rate_limit,omitempty"`
	// QuietMS is how long, in milliseconds, the answer must stay unchanged
	// with the busy indicator gone before it counts as finished: 1000
	// unless set, or 3000 for a site with no busy indicator.
	QuietMS int `json:"quiet_ms,omitempty"`
}

// Selectors are the CSS selectors of a chat page's parts. A selector may be
// a list ("a, b"): the first element that any of them matches counts.
type Selectors struct {
	// Input is the box the prompt goes in: a textarea, an input or an
	// element with contenteditable. Required.
	Input string `json:"input"`
	// Send is the button that sends the prompt; without one, Enter is
	// pressed in the input.
	Send string `json:"send,omitempty"`
	// Answer matches the assistant's answers; the last one is the reply.
	// Required.
	Answer string `json:"answer"`
	// Exclude matches the parts inside an answer that are not its text
	// (a code block's "Copy" button, its language label).
	Exclude string `json:"exclude,omitempty"`
	// Busy matches an element that is on the page, and visible, while the
	// site is writing an answer (a stop button, a spinner).
	Busy string `json:"busy,omitempty"`
	// NewChat is the button that starts a new chat in a reused tab; without
	// one, the tab goes to URL.
	NewChat string `json:"new_chat,omitempty"`
	// LoggedOut matches an element that is shown only to someone signed
	// out (a "Log in" button).
	LoggedOut string `json:"logged_out,omitempty"`
	// Error matches the banner or message in which the site reports a
	// failure or a rate limit.
	Error string `json:"error,omitempty"`
}

// The limits of a site file.
const (
	maxSiteFile  = 64 << 10
	maxSelector  = 2000
	maxPhrases   = 64
	maxQuiet     = 60 * time.Second
	defaultQuiet = time.Second
	// quietWithoutBusy is the quiet period of a site with no busy
	// indicator: only the text's standing still says the answer is done.
	quietWithoutBusy = 3 * time.Second
)

var siteName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ParseSite reads a site file and checks it: a name of lower-case letters,
// digits, '.', '_' and '-'; an http or https URL; the input and answer
// selectors; known input and read methods; no unknown field (a misspelt
// field is an error, not a selector silently missing).
func ParseSite(data []byte) (*Site, error) {
	if len(data) > maxSiteFile {
		return nil, fmt.Errorf("site file of %d bytes: the limit is %d", len(data), maxSiteFile)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Site
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("site file: %w", err)
	}
	if dec.More() {
		return nil, errors.New("site file: more than one JSON value")
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("site %q: %w", s.Name, err)
	}
	return &s, nil
}

func (s *Site) check() error {
	if !siteName.MatchString(s.Name) {
		return errors.New("name must be 1 to 64 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if err := httpURL(s.URL); err != nil {
		return fmt.Errorf("url: %w", err)
	}
	if s.Match != "" {
		if err := httpURL(s.Match); err != nil {
			return fmt.Errorf("match: %w", err)
		}
	}
	sel := s.Selectors
	if strings.TrimSpace(sel.Input) == "" || strings.TrimSpace(sel.Answer) == "" {
		return errors.New("selectors.input and selectors.answer are required")
	}
	for _, x := range []string{sel.Input, sel.Send, sel.Answer, sel.Exclude, sel.Busy, sel.NewChat, sel.LoggedOut, sel.Error} {
		if len(x) > maxSelector {
			return fmt.Errorf("a selector of %d bytes: the limit is %d", len(x), maxSelector)
		}
	}
	if !slices.Contains([]string{"", "insert", "paste", "value"}, s.InputMethod) {
		return fmt.Errorf("input_method must be insert, value or paste, not %q", s.InputMethod)
	}
	if !slices.Contains([]string{"", "innerText", "textContent"}, s.Read) {
		return fmt.Errorf("read must be innerText or textContent, not %q", s.Read)
	}
	if len(s.RateLimit) > maxPhrases {
		return fmt.Errorf("%d rate_limit phrases: the limit is %d", len(s.RateLimit), maxPhrases)
	}
	for _, p := range s.RateLimit {
		if strings.TrimSpace(p) == "" || len(p) > maxSelector {
			return errors.New("a rate_limit phrase is empty or too long")
		}
	}
	if s.QuietMS < 0 || time.Duration(s.QuietMS)*time.Millisecond > maxQuiet {
		return fmt.Errorf("quiet_ms must be between 0 and %d", maxQuiet.Milliseconds())
	}
	return nil
}

// httpURL checks that u is an absolute http or https URL.
func httpURL(u string) error {
	p, err := url.Parse(u)
	switch {
	case err != nil:
		return err
	case p.Scheme != "http" && p.Scheme != "https":
		return fmt.Errorf("%q is not an http or https address", u)
	case p.Host == "":
		return fmt.Errorf("%q has no host", u)
	}
	return nil
}

// match is the start of the address of the site's pages.
func (s *Site) match() string {
	if s.Match != "" {
		return s.Match
	}
	p, _ := url.Parse(s.URL)
	return p.Scheme + "://" + p.Host + "/"
}

// quiet is how long the answer stands still before it counts as finished.
func (s *Site) quiet() time.Duration {
	switch {
	case s.QuietMS > 0:
		return time.Duration(s.QuietMS) * time.Millisecond
	case s.Selectors.Busy == "":
		return quietWithoutBusy
	}
	return defaultQuiet
}

// LoadSite reads the site file at file.
func LoadSite(file string) (*Site, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSiteFile+1))
	if err != nil {
		return nil, err
	}
	s, err := ParseSite(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

//go:embed sites/*.json
var builtin embed.FS

// Builtin returns the site ptk ships under name, or false. The built-in
// sites are maintained by hand (see Site.Maintained): a redesign of a site
// breaks its selectors until its file is updated.
func Builtin(name string) (*Site, bool) {
	if !siteName.MatchString(name) {
		return nil, false
	}
	data, err := builtin.ReadFile(path.Join("sites", name+".json"))
	if err != nil {
		return nil, false
	}
	s, err := ParseSite(data)
	if err != nil {
		panic("browser: the built-in site " + name + " is invalid: " + err.Error())
	}
	return s, true
}

// Builtins returns the names of the built-in sites, sorted.
func Builtins() []string {
	entries, _ := builtin.ReadDir("sites")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	slices.Sort(names)
	return names
}

// FindSite returns the site that nameOrFile names: a built-in site's name,
// or the path of a site file (a name that holds a path separator or ends in
// ".json").
func FindSite(nameOrFile string) (*Site, error) {
	if strings.HasSuffix(nameOrFile, ".json") || strings.ContainsRune(nameOrFile, os.PathSeparator) || strings.ContainsRune(nameOrFile, '/') {
		return LoadSite(nameOrFile)
	}
	if s, ok := Builtin(nameOrFile); ok {
		return s, nil
	}
	return nil, fmt.Errorf("no site %q: the built-in sites are %s; or give the path of a site file", nameOrFile, strings.Join(Builtins(), ", "))
}
