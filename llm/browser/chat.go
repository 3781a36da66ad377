package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/ptkit/ptk/llm"
)

//go:embed page.js
var pageJS string

var (
	// errCallTimeout is the cause of the end of a call that took longer
	// than its timeout.
	errCallTimeout = errors.New("the call's timeout")
	// errStepTimeout is the cause of the end of a step the page did not
	// answer in time.
	errStepTimeout = errors.New("the step's timeout")
)

// sendWait bounds the wait for the send button to be enabled once the
// prompt is in.
const sendWait = 10 * time.Second

// call is one chat: a tab, the prompt, the answer.
type call struct {
	m   *Model
	ctx context.Context // the call's: its end ends the chat

	// The browser, the tab and the world page.js runs in. They are made
	// from a context of their own, ended by close, so that a tab is closed
	// (or let go) however the call ends.
	stopAlloc, stopRoot, stopTab context.CancelFunc
	root, tab                    context.Context
	detached                     <-chan struct{}
	world                        runtime.ExecutionContextID
	reused                       bool

	// step says what the call is doing, for an error's message.
	step string
}

// pageState is what page.js's "state" reads.
type pageState struct {
	Ready     string `json:"ready"`
	Input     bool   `json:"input"`
	LoggedOut bool   `json:"loggedOut"`
	Busy      bool   `json:"busy"`
	BusySeen  bool   `json:"busySeen"` // shown at any time since "arm"
	Count     int    `json:"count"`
	Text      string `json:"text"`
	Error     string `json:"error"`
}

// chat asks the page: prompt in, the answer out, through yield as it is
// written (when yield is not nil) or through done at the end.
func (m *Model) chat(ctx context.Context, prompt string, yield func(string) bool, done func(string)) error {
	prompt = chatPrompt(prompt)
	if prompt == "" {
		return &llm.Error{Kind: llm.ErrBadRequest, Message: m.site.Name + ": an empty prompt"}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, m.set.timeout, errCallTimeout)
	defer cancel()
	if m.turn != nil {
		// Calls that take over the site's tab take turns.
		select {
		case m.turn <- struct{}{}:
			defer func() { <-m.turn }()
		case <-ctx.Done():
			return (&call{m: m, ctx: ctx, step: "waiting for the tab"}).classify(ctx.Err())
		}
	}
	c := &call{m: m, ctx: ctx}
	defer c.close()
	return c.classify(c.run(prompt, yield, done))
}

func (c *call) run(prompt string, yield func(string) bool, done func(string)) error {
	if err := c.connect(); err != nil {
		return err
	}
	if err := c.open(); err != nil {
		return err
	}
	before, err := c.state()
	if err != nil {
		return err
	}
	if err := c.put(prompt); err != nil {
		return err
	}
	if _, err := eval[bool](c, "arm", nil); err != nil {
		return err
	}
	if c.reused || c.m.set.keep {
		// The tab stays: leave nothing running in it.
		defer eval[bool](c, "disarm", nil)
	}
	if err := c.send(); err != nil {
		return err
	}
	return c.follow(before, yield, done)
}

// connect reaches the browser and opens the tab (or takes over the site's).
func (c *call) connect() error {
	site, where := c.m.site, c.m.where
	c.step = "reaching " + where.String()
	addr, err := where.endpoint(c.ctx)
	if err != nil {
		if c.ctx.Err() != nil {
			return c.ctx.Err()
		}
		return failure(site.Name, ErrNoBrowser, "%v", err)
	}
	if strings.HasPrefix(addr, "http") {
		if err := probe(c.ctx, addr); err != nil {
			if c.ctx.Err() != nil {
				return c.ctx.Err()
			}
			return failure(site.Name, ErrNoBrowser, "nothing answers at %s (%v): start Chrome or Chromium with --remote-debugging-port=9222 and a profile "+
				"directory of its own (--user-data-dir), or give a profile directory for ptk to start one with (docs/browser.md)", addr, innermost(err))
		}
	}
	base := context.WithoutCancel(c.ctx)
	actx, stopAlloc := remote.NewAllocator(base, addr)
	c.stopAlloc = stopAlloc
	c.root, c.stopRoot = chromedp.NewContext(actx)
	var targets []*target.Info
	err = c.bounded(c.m.set.load, func() (err error) {
		targets, err = chromedp.Targets(c.root)
		return err
	})
	if err != nil {
		if c.ctx.Err() != nil {
			return err
		}
		return failure(site.Name, ErrNoBrowser, "the browser at %s does not take a DevTools connection: %v", addr, err)
	}

	var opts []chromedp.ContextOption
	if c.m.set.reuse {
		for _, t := range targets {
			if t.Type == "page" && strings.HasPrefix(t.URL, site.match()) {
				opts, c.reused = append(opts, chromedp.WithTargetID(t.TargetID)), true
				break
			}
		}
	}
	if c.reused || c.m.set.keep {
		opts = append(opts, chromedp.WithDetachOnCancel())
	}
	c.tab, c.stopTab = chromedp.NewContext(c.root, opts...)
	c.step = "opening a tab in " + where.String()
	if err := c.bounded(c.m.set.load, func() error { return chromedp.Do(c.tab) }); err != nil {
		return err
	}
	if c.detached, err = chromedp.Detached(c.tab); err != nil {
		return err
	}
	// Subscribed here, before the page loads, read on another goroutine.
	go c.dismissDialogs(chromedp.Events(c.tab, page.JavascriptDialogOpening))
	return nil
}

// dismissDialogs answers the page's alerts, confirmations and prompts, so
// that none blocks the page: "leave the page" and "OK" yes, everything else
// no. It returns when the tab's context ends.
func (c *call) dismissDialogs(dialogs iter.Seq2[page.EventJavascriptDialogOpening, error]) {
	for ev, err := range dialogs {
		if err != nil {
			return
		}
		accept := ev.Type == page.DialogTypeBeforeunload || ev.Type == page.DialogTypeAlert
		chromedp.Call(c.tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept})
	}
}

// open starts a new chat: the site's new-chat button in a tab taken over,
// else the site's URL; then waits for the page's input.
func (c *call) open() error {
	site := c.m.site
	c.step = "loading " + site.URL
	navigate := true
	if c.reused && site.Selectors.NewChat != "" {
		if err := c.checkSelectors(); err != nil {
			return err
		}
		clicked, err := eval[bool](c, "newChat", nil)
		if err != nil {
			return err
		}
		if clicked {
			// The new chat is open when the old answers are gone.
			until := time.Now().Add(min(c.m.set.load, 5*time.Second))
			for time.Now().Before(until) {
				if err := c.sleep(c.m.set.poll); err != nil {
					return err
				}
				st, err := c.state()
				if err != nil {
					return err
				}
				if st.Count == 0 && st.Input {
					navigate = false
					break
				}
			}
		}
	}
	if navigate {
		ctx, cancel := c.op(c.m.set.load)
		r, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: site.URL})
		cancel()
		if err != nil {
			return c.stepError(ctx, err)
		}
		if r.ErrorText != "" {
			return &llm.Error{Kind: llm.ErrConnection, Message: fmt.Sprintf("%s: could not load %s: %s", site.Name, site.URL, r.ErrorText)}
		}
		c.world = 0
	}
	until := time.Now().Add(c.m.set.load)
	checked := false
	for {
		st, err := c.state()
		if err != nil && !checked {
			// A selector the browser cannot parse fails every state: say so.
			if cerr := c.checkSelectors(); cerr != nil {
				return cerr
			}
		}
		if err != nil {
			return err
		}
		checked = true
		switch {
		case st.LoggedOut:
			return failure(site.Name, ErrLoggedOut, "the page at %s shows that nobody is signed in: sign in in %s (ptk never handles your password)", site.URL, c.m.where)
		case st.Input && st.Ready != "loading":
			return nil
		case time.Now().After(until):
			return failure(site.Name, ErrLayoutChanged, "nothing on %s matches the input selector %q after %v (the site may have changed its page: update its site file, docs/browser.md)",
				site.URL, site.Selectors.Input, c.m.set.load)
		}
		if err := c.sleep(c.m.set.poll); err != nil {
			return err
		}
	}
}

// checkSelectors reports selectors the browser cannot parse.
func (c *call) checkSelectors() error {
	bad, err := eval[[]string](c, "check", nil)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return &llm.Error{Kind: llm.ErrBadRequest, Message: fmt.Sprintf("%s: the site file has selectors the browser cannot read: %s", c.m.site.Name, strings.Join(bad, "; "))}
	}
	return nil
}

// put puts the prompt in the input, whole, and checks that it is there.
func (c *call) put(prompt string) error {
	site := c.m.site
	c.step = "putting the prompt in"
	kind, err := eval[string](c, "focus", nil)
	if err != nil {
		return err
	}
	switch kind {
	case "none":
		return failure(site.Name, ErrLayoutChanged, "the input %q went away", site.Selectors.Input)
	case "other":
		return failure(site.Name, ErrLayoutChanged, "the input selector %q matches an element that takes no text (not a textarea, an input or an editable element)", site.Selectors.Input)
	}
	method := site.InputMethod
	if method == "" {
		// A field takes its value at once; an editor's own code must see
		// the text come in, as an input method's.
		method = map[string]string{"field": "value", "editable": "insert"}[kind]
	}
	if method == "insert" {
		ctx, cancel := c.op(c.m.set.load)
		_, err = chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: prompt})
		cancel()
		if err != nil {
			return c.stepError(ctx, err)
		}
	} else if _, err := eval[bool](c, method, prompt); err != nil {
		return err
	}
	got, err := eval[*string](c, "read", nil)
	if err != nil {
		return err
	}
	if got == nil {
		return failure(site.Name, ErrLayoutChanged, "the input %q went away", site.Selectors.Input)
	}
	have, want := squash(*got), squash(prompt)
	switch {
	case have == want:
		return nil
	case have == "":
		return failure(site.Name, ErrLayoutChanged, "the input %q took none of the prompt (try the site's input_method paste or value)", site.Selectors.Input)
	case len(have) < len(want) && strings.HasPrefix(want, have):
		return &llm.Error{Kind: llm.ErrBadRequest, Message: fmt.Sprintf("%s: the page took %d of the prompt's %d characters: it limits a message's length",
			site.Name, runes(*got), runes(prompt))}
	}
	return &llm.Error{Kind: llm.ErrBadRequest, Message: fmt.Sprintf("%s: the input holds other text than the prompt (%d characters for %d)", site.Name, runes(*got), runes(prompt))}
}

// send clicks the send button once it is enabled, or presses Enter.
func (c *call) send() error {
	site := c.m.site
	c.step = "sending the prompt"
	if site.Selectors.Send == "" {
		ctx, cancel := c.op(c.m.set.load)
		defer cancel()
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
			if typ == input.DispatchKeyEventTypeKeyDown {
				p.Text = "\r"
			}
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, p); err != nil {
				return c.stepError(ctx, err)
			}
		}
		return nil
	}
	until := time.Now().Add(sendWait)
	for {
		r, err := eval[string](c, "send", nil)
		if err != nil {
			return err
		}
		if r == "clicked" {
			return nil
		}
		if time.Now().After(until) {
			return failure(site.Name, ErrLayoutChanged, "no enabled button matches the send selector %q (it was %s)", site.Selectors.Send, map[string]string{"none": "missing", "disabled": "disabled"}[r])
		}
		if err := c.sleep(c.m.set.poll); err != nil {
			return err
		}
	}
}

// follow reads the page until the answer is finished: it has started (a
// new answer, or the busy indicator), the busy indicator is gone and the
// text has stood still for the quiet period.
func (c *call) follow(before pageState, yield func(string) bool, done func(string)) error {
	site, set := c.m.site, c.m.set
	c.step = "waiting for the answer to start"
	var f follower
	started, busySeen := false, false
	last, changed := "", time.Now()
	startBy := time.Now().Add(set.start)
	interval := set.poll
	for {
		if err := c.sleep(interval); err != nil {
			return err
		}
		read := time.Now()
		st, err := c.state()
		if err != nil {
			return err
		}
		// Reading a long answer takes the page's time: read it at most a
		// quarter of the time.
		interval = max(set.poll, 3*time.Since(read))
		if st.LoggedOut {
			return failure(site.Name, ErrLoggedOut, "the page shows that nobody is signed in: sign in in %s (ptk never handles your password)", c.m.where)
		}
		if st.Error != "" && st.Error != before.Error {
			return c.siteError(st.Error)
		}
		fresh := st.Count > before.Count
		busySeen = busySeen || st.Busy || st.BusySeen
		if !started {
			if !fresh && !busySeen {
				if time.Now().After(startBy) {
					return c.noStart()
				}
				continue
			}
			started, changed = true, time.Now()
			c.step = "following the answer"
		}
		text := ""
		if fresh {
			text = clean(st.Text)
		}
		if runes(text) > set.maxAnswer {
			return &llm.Error{Kind: llm.ErrBadResponse, Message: fmt.Sprintf("%s: the answer is longer than %d characters", site.Name, set.maxAnswer)}
		}
		if text != last {
			last, changed = text, time.Now()
			if yield != nil {
				if d := f.see(text); d != "" && !yield(d) {
					return nil
				}
			}
		}
		if st.Busy || time.Since(changed) < set.quiet {
			continue
		}
		switch {
		case !fresh && busySeen:
			return failure(site.Name, ErrLayoutChanged, "the page wrote an answer, but nothing matches the answer selector %q", site.Selectors.Answer)
		case !fresh:
			continue
		case strings.TrimSpace(text) == "":
			return failure(site.Name, ErrLayoutChanged, "the answer that %q matches holds no text", site.Selectors.Answer)
		}
		if yield == nil {
			done(text)
			return nil
		}
		rest, ok := f.end(text)
		if !ok {
			return &llm.Error{Kind: llm.ErrBadResponse, Message: site.Name + ": the page changed text of the answer that had been streamed already; ask again without streaming"}
		}
		if rest != "" {
			yield(rest)
		}
		return nil
	}
}

// noStart is the error of an answer that did not start.
func (c *call) noStart() error {
	site := c.m.site
	if site.Selectors.Busy == "" {
		return failure(site.Name, ErrTimeout, "no answer matching %q appeared within %v of sending", site.Selectors.Answer, c.m.set.start)
	}
	if held, err := eval[*string](c, "read", nil); err == nil && held != nil && strings.TrimSpace(*held) != "" {
		return failure(site.Name, ErrLayoutChanged, "the prompt is still in the input %v after clicking %q: the send button did not send it", c.m.set.start, site.Selectors.Send)
	}
	return failure(site.Name, ErrLayoutChanged, "no answer (%q) and no busy indicator (%q) appeared within %v of sending", site.Selectors.Answer, site.Selectors.Busy, c.m.set.start)
}

// siteError is the error of a banner the page shows.
func (c *call) siteError(text string) error {
	site := c.m.site
	lower := strings.ToLower(text)
	for _, p := range site.RateLimit {
		if strings.Contains(lower, strings.ToLower(p)) {
			return failure(site.Name, ErrRateLimited, "the page says %q", clip(text, 300))
		}
	}
	return &llm.Error{Kind: llm.ErrServer, Message: fmt.Sprintf("%s: the page shows an error: %q", site.Name, clip(text, 300))}
}

// state reads the page.
func (c *call) state() (pageState, error) {
	return eval[pageState](c, "state", nil)
}

// eval runs page.js's operation op with arg in the call's world, and
// decodes what it returns. A world lost to a navigation is made again.
func eval[T any](c *call, op string, arg any) (T, error) {
	var zero T
	a, err := json.Marshal(arg)
	if err != nil {
		return zero, err
	}
	o, _ := json.Marshal(op)
	expr := pageJS + "(" + string(o) + "," + string(c.m.cfg) + "," + string(a) + ")"
	for attempt := 0; ; attempt++ {
		if c.world == 0 {
			if err := c.newWorld(); err != nil {
				return zero, err
			}
		}
		ctx, cancel := c.op(c.m.set.load)
		r, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ContextID: c.world, ReturnByValue: new(true)})
		cancel()
		lost := err != nil && strings.Contains(err.Error(), "Cannot find context")
		if err == nil && r.ExceptionDetails != nil {
			err = &chromedp.ExceptionError{ExceptionDetails: r.ExceptionDetails}
			lost = strings.Contains(r.ExceptionDetails.Text+exceptionText(r.ExceptionDetails), "context was destroyed")
		}
		if lost && attempt < 3 {
			c.world = 0
			continue
		}
		if err != nil {
			return zero, c.stepError(ctx, err)
		}
		var v T
		if r.Result == nil || len(r.Result.Value) == 0 {
			return zero, fmt.Errorf("page.js %s returned nothing", op)
		}
		if err := json.Unmarshal(r.Result.Value, &v); err != nil {
			return zero, fmt.Errorf("page.js %s: %w", op, err)
		}
		return v, nil
	}
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

// newWorld makes the isolated world page.js runs in, in the tab's main
// frame: the page's scripts cannot reach it, nor replace the DOM methods
// it calls.
func (c *call) newWorld() error {
	ctx, cancel := c.op(c.m.set.load)
	defer cancel()
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return c.stepError(ctx, err)
	}
	w, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: tree.FrameTree.Frame.ID, WorldName: "ptk"})
	if err != nil {
		return c.stepError(ctx, err)
	}
	c.world = w.ExecutionContextID
	return nil
}

// op returns the context of one step on the tab: it ends with the call, or
// after d (errStepTimeout).
func (c *call) op(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeoutCause(c.tab, d, errStepTimeout)
	stop := context.AfterFunc(c.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// stepError is the error of a step that failed in ctx (from op).
func (c *call) stepError(ctx context.Context, err error) error {
	if c.ctx.Err() == nil && context.Cause(ctx) == errStepTimeout {
		return failure(c.m.site.Name, ErrTimeout, "the page did not respond for %v while %s (a script may be blocking it)", c.m.set.load, c.step)
	}
	return err
}

// bounded runs f, which uses the browser's or the tab's own context, and
// stops it when the call ends or d passes.
func (c *call) bounded(d time.Duration, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-c.ctx.Done():
		c.stopRoot()
		<-done
		return c.ctx.Err()
	case <-t.C:
		c.stopRoot()
		<-done
		return failure(c.m.site.Name, ErrTimeout, "%s took longer than %v", c.step, d)
	}
}

// sleep waits for d, or until the call ends or the tab goes away.
func (c *call) sleep(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	case <-c.detached:
		return chromedp.ErrTargetDetached
	case <-c.root.Done():
		return errBrowserGone
	}
}

// errBrowserGone: the connection to the browser ended.
var errBrowserGone = errors.New("the connection to the browser ended")

// classify turns what ended the call into a classified error.
func (c *call) classify(err error) error {
	if err == nil {
		return nil
	}
	var le *llm.Error
	if errors.As(err, &le) {
		return err
	}
	name := c.m.site.Name
	tabGone := false
	select {
	case <-c.detached:
		tabGone = c.detached != nil
	default:
	}
	switch {
	case c.ctx.Err() != nil && context.Cause(c.ctx) == errCallTimeout:
		return failure(name, ErrTimeout, "no answer within %v: the call was %s", c.m.set.timeout, c.step)
	case c.ctx.Err() != nil:
		return c.ctx.Err() // the caller's cancellation or deadline, as it is
	case tabGone || errors.Is(err, chromedp.ErrTargetDetached):
		return failure(name, ErrTabClosed, "while %s", c.step)
	case errors.Is(err, errBrowserGone) || (c.root != nil && c.root.Err() != nil):
		return failure(name, ErrTabClosed, "the browser went away while %s", c.step)
	}
	return &llm.Error{Kind: llm.ErrConnection, Message: fmt.Sprintf("%s: %s: %v", name, c.step, err), Err: err}
}

// close closes the tab (or lets a taken-over or kept one go) and the
// connection to the browser.
func (c *call) close() {
	if c.stopTab != nil {
		c.stopTab()
	}
	if c.stopRoot != nil {
		c.stopRoot()
	}
	if c.stopAlloc != nil {
		c.stopAlloc()
	}
}

// innermost is the last error err wraps: "connection refused" rather than
// the request that met it.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func clip(s string, n int) string {
	if runes(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
