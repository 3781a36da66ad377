package browser

import (
	"context"
	"encoding/json"
	"iter"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/completion"
)

// Model is a chat page as a text-only model: each call opens a tab of its
// own in the browser, starts a new chat, puts the whole prompt in the
// page's input at once, sends it and follows the answer as the page writes
// it, until the busy indicator is gone and the text has stood still for a
// quiet period; then it closes the tab. The prompt is the conversation
// flattened into one transcript ([llm.TextCompleter]), as llm/completion's
// models read it, so a model taught the PTK text protocol calls tools
// through it like any other.
//
// A Model does not change after [New] and is safe for concurrent use:
// concurrent calls are chats in tabs of their own.
type Model struct {
	site  *Site
	where *Browser
	cfg   []byte // the site's selectors and limits, for page.js
	set   settings

	whole  llm.Model
	stream llm.Streamer
	// turn, with WithReuseTab, lets one call at a time use the site's tab.
	turn chan struct{}
}

var (
	_ llm.Streamer      = (*Model)(nil)
	_ llm.TextCompleter = (*Model)(nil)
	_ llm.ToolSupporter = (*Model)(nil)
)

// settings are what the options set.
type settings struct {
	timeout, load, start, quiet, poll time.Duration
	maxAnswer                         int
	reuse, keep                       bool
}

// An Option configures a [Model].
type Option func(*settings)

// WithTimeout bounds a whole call, from opening the tab to the end of the
// answer: 10 minutes unless set (a model that reasons at length is slow).
func WithTimeout(d time.Duration) Option { return func(s *settings) { s.timeout = d } }

// WithLoadTimeout bounds the wait for the page to show its input: 30
// seconds unless set.
func WithLoadTimeout(d time.Duration) Option { return func(s *settings) { s.load = d } }

// WithStartTimeout bounds the wait, after sending, for the answer to start
// (an answer or the busy indicator on the page): 60 seconds unless set.
func WithStartTimeout(d time.Duration) Option { return func(s *settings) { s.start = d } }

// WithQuiet sets how long the answer must stand still, with the busy
// indicator gone, before it counts as finished, instead of the site's
// quiet period.
func WithQuiet(d time.Duration) Option { return func(s *settings) { s.quiet = d } }

// WithPollInterval sets how often the page is read while an answer is
// written: every 100 ms unless set.
func WithPollInterval(d time.Duration) Option { return func(s *settings) { s.poll = d } }

// WithMaxAnswer bounds the answer, in characters: 1,000,000 unless set. A
// longer one is an error.
func WithMaxAnswer(n int) Option { return func(s *settings) { s.maxAnswer = n } }

// WithReuseTab takes over a tab that is open on the site already (its
// address starts with the site's match) instead of opening one, starts a
// new chat in it (the site's new-chat button, or going to its URL) and
// leaves it open afterwards. Without such a tab, one is opened. The calls
// of the model take turns.
func WithReuseTab() Option { return func(s *settings) { s.reuse = true } }

// WithKeepTab leaves the tab of each call open after the answer, to look
// at; by default it is closed.
func WithKeepTab() Option { return func(s *settings) { s.keep = true } }

// New returns site, in the browser where, as a model.
func New(site *Site, where *Browser, opts ...Option) *Model {
	s := settings{timeout: 10 * time.Minute, load: 30 * time.Second, start: 60 * time.Second, quiet: site.quiet(),
		poll: 100 * time.Millisecond, maxAnswer: 1_000_000}
	for _, o := range opts {
		o(&s)
	}
	cfg, err := json.Marshal(struct {
		Selectors Selectors `json:"selectors"`
		Read      string    `json:"read"`
		Max       int       `json:"max"`
	}{site.Selectors, site.Read, s.maxAnswer})
	if err != nil {
		panic("browser: " + err.Error()) // strings and an int always marshal
	}
	m := &Model{site: site, where: where, cfg: cfg, set: s}
	if s.reuse {
		m.turn = make(chan struct{}, 1)
	}
	m.whole = completion.Func(func(ctx context.Context, prompt string) (string, error) {
		var out string
		err := m.chat(ctx, prompt, nil, func(final string) { out = final })
		return out, err
	})
	m.stream = completion.FuncStream(func(ctx context.Context, prompt string, yield func(string) bool) error {
		return m.chat(ctx, prompt, yield, nil)
	})
	return m
}

// Site returns the model's site.
func (m *Model) Site() *Site { return m.site }

// Browser returns where the model's pages open.
func (m *Model) Browser() *Browser { return m.where }

// CompletesText marks m as a model that reads one flattened prompt.
func (*Model) CompletesText() {}

// SupportsNativeTools reports false: a chat page takes text only.
func (*Model) SupportsNativeTools() bool { return false }

// Generate asks the page and returns its whole answer. It never sends a
// prompt twice: a failed call is not made again.
func (m *Model) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	resp, err := m.whole.Generate(ctx, req)
	if resp != nil {
		resp.Model = m.site.Name
	}
	return resp, err
}

// Stream asks the page and passes its answer on as the page writes it,
// a line at a time (the line being written may still change as the page
// renders it). Breaking out of the loop, or canceling ctx, closes the tab.
func (m *Model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		first := true
		for ch, err := range m.stream.Stream(ctx, req) {
			if first && err == nil {
				ch.Model, first = m.site.Name, false
			}
			if !yield(ch, err) {
				return
			}
		}
	}
}
