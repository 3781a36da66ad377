// Package browser makes a chat web page a model: a text-only llm.Model
// that drives a chat page (ChatGPT, Claude, Gemini, Google AI Studio, or
// any page a site file describes) in the user's own browser over the
// Chrome DevTools Protocol, the first provider of ptk's design and the
// reason for a text protocol of tool calls: the page takes text and gives
// text, and the PTK protocol carries the tool calls in it.
//
// A call opens a tab of its own, goes to the site's new-chat page, puts the
// whole prompt (the conversation flattened into one transcript, as
// llm/completion's models read it) in the page's input at once, sends it,
// and follows the answer as the page writes it, streamed a line at a time,
// until the site's busy indicator is gone and the text has stood still for
// a quiet period; then it closes the tab. A site is data ([Site], a small
// JSON file of CSS selectors), so a site's redesign is a change to its
// file; the built-in sites ([Builtin]) are maintained by hand and break
// when a site changes its page, with [ErrLayoutChanged].
//
// Where the browser is: [Attach] to one the user started with
// --remote-debugging-port, or [Launch] one with a profile directory, which
// ptk leaves running, signed in, for the next run. Either way the user
// signs in to the sites in that browser; ptk never handles a password or a
// cookie. A site's terms may forbid automated use: the user is responsible
// for how they use it (docs/browser.md).
//
// The page is not trusted: ptk's script runs in a world of its own that
// the page's scripts cannot reach, the page's dialogs are dismissed, its
// text reaches an error message only quoted, and an answer is bounded.
// Each way a call fails is a classified error ([ErrTimeout],
// [ErrTabClosed], [ErrLoggedOut], [ErrRateLimited], [ErrLayoutChanged],
// [ErrNoBrowser]), an *llm.Error whose Kind says what to do about it.
//
// In the model catalog, a provider with the API "browser" serves the sites:
// its api_base is the browser's debugging address or a profile directory,
// and a model's id is a site's name or the path of a site file. ptk ships
// browser:chatgpt, browser:claude, browser:gemini and browser:aistudio.
package browser
