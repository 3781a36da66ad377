package dialect

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/dialect/result"
)

// Repetition loops. A model that falls into a degenerate loop writes the
// same call, or call after call, until the token limit cuts it off in the
// middle of one; an agent runtime treats that as the model's failure, not as
// calls to run (Gemini CLI stops on repeated identical calls; forty copies
// of a call that changes something are never what a user asked for). The
// thresholds come from the dev corpus of 25,175 real replies of 19 models
// (docs/bfcl-replay.md): every reply cut off after three or more complete
// calls was a loop, on every category, and no reply read right had three
// identical calls in a row.
const (
	// loopCutCalls complete calls before a call cut off at the end: the
	// model wrote calls until the token limit.
	loopCutCalls = 8
	// loopCutRun identical calls in a row before a call cut off at the end.
	loopCutRun = 3
	// loopRun identical calls in a row that end a reply, cut off or not.
	loopRun = 10
)

// loopState is what the machine keeps to judge a reply a loop.
type loopState struct {
	// cutID is the id of the last call cut off at the end of the output.
	cutID string
	// held are the ends of calls that repeat the call just before them,
	// and of a call cut off after them, not reported yet: a stream does
	// not report a repeat as runnable before the reply's end says whether
	// it is a loop. A different call reports them.
	held   []result.Event
	judged bool
	// limit: the provider said the token limit cut the reply off.
	limit bool
	// last is one more than the index in attempts of the last call read
	// that was not cut off or malformed; 0 for none.
	last int
}

// noteAttempts records the last complete call among the attempts from
// index from on, just added.
func (m *machine) noteAttempts(from int) {
	for i := from; i < len(m.attempts); i++ {
		if !unreadable(&m.attempts[i]) {
			m.loop.last = i + 1
		}
	}
}

// reportEnd reports a call's end, or holds it when it repeats the complete
// call just before it (or is cut off after such repeats).
func (m *machine) reportEnd(e result.Event, cut bool) {
	if m.fence == nil {
		prev := m.lastComplete()
		if cut && len(m.loop.held) > 0 || prev != nil && e.Attempt.Err == nil && sameCall(prev, e.Attempt) {
			m.loop.held = append(m.loop.held, e)
			return
		}
		m.releaseHeld()
	}
	m.event(e)
}

// releaseHeld reports the held call ends.
func (m *machine) releaseHeld() {
	for _, h := range m.loop.held {
		m.event(h)
	}
	m.loop.held = m.loop.held[:0]
}

// lastComplete is the last call read that was not cut off or malformed.
func (m *machine) lastComplete() *result.Attempt {
	if m.loop.last == 0 || m.loop.last > len(m.attempts) {
		return nil
	}
	return &m.attempts[m.loop.last-1]
}

// unreadable reports a call that could not be read (cut off, malformed).
func unreadable(a *result.Attempt) bool { return a.Err != nil && a.Err.Code == ptk.ParseError }

// sameCall reports whether two calls name the same tool with the same
// arguments, whatever white space the arguments are written with.
func sameCall(a, b *result.Attempt) bool {
	if a.Call.Tool != b.Call.Tool {
		return false
	}
	x, y := a.Call.Args, b.Call.Args
	if bytes.Equal(x, y) {
		return true
	}
	var cx, cy bytes.Buffer
	if json.Compact(&cx, x) != nil || json.Compact(&cy, y) != nil {
		return false
	}
	return bytes.Equal(cx.Bytes(), cy.Bytes())
}

// judgeLoop decides, at the end of the reply, whether it is a repetition
// loop; if it is, none of its calls runs, each says why, and a diagnostic
// reports it. The calls held back are reported then. Parse and a stream's
// Finish both call it on the whole reply, so they reach the same verdict.
func (m *machine) judgeLoop() {
	if m.loop.judged {
		return
	}
	m.loop.judged = true
	complete, run := 0, 0
	var prev *result.Attempt
	for i := range m.attempts {
		a := &m.attempts[i]
		if unreadable(a) {
			continue
		}
		complete++
		if prev != nil && sameCall(prev, a) {
			run++
		} else {
			run = 1
		}
		prev = a
	}
	n := len(m.attempts)
	cut := m.loop.limit || n > 0 && m.loop.cutID != "" && m.attempts[n-1].Call.ID == m.loop.cutID
	var why string
	switch {
	case cut && run >= loopCutRun:
		why = "it repeats the same call (" + prev.Call.Tool + ", " + strconv.Itoa(run) + " times in a row) until the output was cut off at the token limit"
	case cut && complete >= loopCutCalls && prev != nil:
		why = "it writes call after call (" + strconv.Itoa(complete) + ") until the output was cut off at the token limit"
	case run >= loopRun:
		why = "it repeats the same call (" + prev.Call.Tool + ", " + strconv.Itoa(run) + " times in a row)"
	default:
		m.releaseHeld()
		return
	}
	msg := "Not run: your reply is a repetition loop: " + why + ", so none of its calls was run. Make each call once, then stop and wait for the results."
	m.diags = append(m.diags, result.Diagnostic{Kind: result.DiagRepetitionLoop, Message: msg, Offset: m.attempts[0].Offset})
	for i := range m.attempts {
		a := &m.attempts[i]
		e := ptk.NewError(ptk.DuplicateToolCall, msg, nil)
		e.Tool = a.Call.Tool
		a.Err = e // a new error: an event already reported keeps its own
	}
	for i := range m.loop.held {
		h := &m.loop.held[i]
		ac := *h.Attempt
		if h.Index < len(m.attempts) {
			ac.Err = m.attempts[h.Index].Err
		}
		h.Attempt = &ac
	}
	m.releaseHeld()
}
