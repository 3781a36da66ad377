package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ptkit/ptk"
)

// Middleware wraps a tool the way HTTP middleware wraps a handler: the
// result is a tool that does something around the call (a deadline, a cap
// on the output) and calls the tool it wraps.
type Middleware func(ptk.Tool) ptk.Tool

// Wrap applies middleware to t; the first one given is the outermost.
func Wrap(t ptk.Tool, mws ...Middleware) ptk.Tool {
	for i := len(mws) - 1; i >= 0; i-- {
		t = mws[i](t)
	}
	return t
}

// wrapped is a tool whose Run is replaced; its Info is the inner tool's.
type wrapped struct {
	inner ptk.Tool
	run   func(ctx context.Context, args json.RawMessage) (ptk.Result, error)
}

func (w wrapped) Info() ptk.ToolInfo { return w.inner.Info() }
func (w wrapped) Unwrap() ptk.Tool   { return w.inner }
func (w wrapped) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	return w.run(ctx, args)
}

// Timeout bounds each call of a tool. A call that runs out of time becomes
// an error result that says so (the run goes on); a call canceled from
// outside still returns the context's error.
func Timeout(d time.Duration) Middleware {
	return func(t ptk.Tool) ptk.Tool {
		if d <= 0 {
			return t
		}
		return wrapped{inner: t, run: func(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
			tctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			res, err := t.Run(tctx, args)
			if ctx.Err() == nil && tctx.Err() != nil && (err == nil || errors.Is(err, context.DeadlineExceeded)) {
				msg := fmt.Sprintf("%s timed out after %s", t.Info().Name, d)
				if res.Content != "" {
					msg += "; its output so far:\n" + res.Content
				}
				return ptk.Result{CallID: res.CallID, Tool: res.Tool, Content: msg, IsError: true}, nil
			}
			return res, err
		}}
	}
}

// Limit caps what a tool returns at maxLines lines and maxBytes bytes (0 for
// no cap on either): the rest is cut, and a note tells the model how much
// was left out and how to get it. Tools that page their own output (the
// built-in file tools) stay under the cap and say more precisely how to read
// on; Limit is the backstop for every tool.
func Limit(maxBytes, maxLines int) Middleware {
	return func(t ptk.Tool) ptk.Tool {
		return wrapped{inner: t, run: func(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
			res, err := t.Run(ctx, args)
			res.Content = Truncate(res.Content, maxBytes, maxLines)
			return res, err
		}}
	}
}

// Truncate returns s cut to at most maxLines lines and maxBytes bytes (0 for
// no cap), on a line boundary where it can and never inside a UTF-8
// sequence, followed by a note that says what was cut. s comes back as it is
// when it fits.
func Truncate(s string, maxBytes, maxLines int) string {
	cut := len(s)
	if maxLines > 0 {
		n, i := 0, 0
		for i < len(s) {
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				break
			}
			n++
			i += j + 1
			if n == maxLines && i < len(s) {
				cut = i
				break
			}
		}
	}
	if maxBytes > 0 && cut > maxBytes {
		cut = maxBytes
		if nl := strings.LastIndexByte(s[:cut], '\n'); nl > maxBytes/2 {
			cut = nl + 1
		}
		for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
			cut--
		}
	}
	if cut >= len(s) {
		return s
	}
	rest := s[cut:]
	lines := strings.Count(rest, "\n")
	if !strings.HasSuffix(rest, "\n") {
		lines++
	}
	unit := "lines"
	if lines == 1 {
		unit = "line"
	}
	return s[:cut] + fmt.Sprintf("\n[output cut: %d more %s (%d bytes) not shown. Ask for less: read a file in parts with offset and limit, narrow a grep pattern or path, or make a command print less.]", lines, unit, len(rest))
}
