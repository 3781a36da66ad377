package browser

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ptkit/ptk/llm"
)

// What can go wrong with a chat page, each a sentinel that errors.Is finds
// in what the model returns. The error itself is an *llm.Error whose Kind
// says what a caller does about it, whatever the model ([llm.Retryable],
// llm.Fallback):
//
//   - ErrTimeout: the page did not load, did not start an answer or did not
//     finish it in time (llm.ErrServer).
//   - ErrTabClosed: the tab was closed, or the browser quit, before the
//     answer was complete (llm.ErrConnection).
//   - ErrLoggedOut: the page shows that nobody is signed in (llm.ErrAuth).
//   - ErrRateLimited: the site's error banner says the account is rate
//     limited (llm.ErrRateLimited).
//   - ErrLayoutChanged: the page no longer matches the site's selectors: no
//     input, no send button, an answer nothing matches (llm.ErrBadResponse).
//   - ErrNoBrowser: no browser answers at the address, or one could not be
//     started (llm.ErrConnection).
var (
	ErrTimeout       = errors.New("the chat page did not answer in time")
	ErrTabClosed     = errors.New("the chat page's tab closed")
	ErrLoggedOut     = errors.New("the chat page is signed out")
	ErrRateLimited   = errors.New("the chat page says the account is rate limited")
	ErrLayoutChanged = errors.New("the chat page no longer matches its site's selectors")
	ErrNoBrowser     = errors.New("no browser to drive")
)

// kinds are the llm error kinds of the sentinels.
var kinds = map[error]error{
	ErrTimeout:       llm.ErrServer,
	ErrTabClosed:     llm.ErrConnection,
	ErrLoggedOut:     llm.ErrAuth,
	ErrRateLimited:   llm.ErrRateLimited,
	ErrLayoutChanged: llm.ErrBadResponse,
	ErrNoBrowser:     llm.ErrConnection,
}

// failure returns the classified error of the site: what went wrong
// (a sentinel above), in the words of format.
func failure(site string, what error, format string, args ...any) *llm.Error {
	detail, sep := fmt.Sprintf(format, args...), ": "
	if strings.HasPrefix(detail, "while ") {
		sep = " "
	}
	return &llm.Error{Kind: kinds[what], Message: site + ": " + what.Error() + sep + detail, Err: what}
}
