package tool

import (
	"context"
	"encoding/json"
)

// Previewer is a tool that can say what a call would change before it
// runs, for the question that asks the user: an edit's diff against the
// file as it is now. Preview changes nothing.
type Previewer interface {
	// Preview returns what a call with args would change, as a unified
	// diff. An error says why it cannot: the call would fail (no such
	// file, the text to replace is not there), and then the error's text
	// is what the call would answer.
	Preview(ctx context.Context, args json.RawMessage) (string, error)
}
