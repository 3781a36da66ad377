package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/protocol"
)

// turnState turns one prompt's events into session/update notifications.
// Only the prompt's goroutine touches it.
type turnState struct {
	s *session
	// turn numbers the session's prompts, iteration the model calls of
	// this one: with the call's index they make its id, unique in the
	// session.
	turn, iteration int
	// calls are this model call's tool calls by their index in the reply;
	// byCall by the call's id, for the approver.
	calls  map[int]*callState
	byCall map[string]*callState
	all    []*callState // every call of the turn, to close the open ones
	// text and thought wait to be sent in batches: kind is what they
	// hold, since when.
	pending strings.Builder
	kind    agent.EventKind
	since   time.Time
}

// callState is one tool call as the editor knows it.
type callState struct {
	id     sdk.ToolCallId
	call   ptk.Call
	status sdk.ToolCallStatus
}

// sendEvery and sendAt bound how long streamed text waits to be sent: a
// batch goes when it is that old or that long.
const (
	sendEvery = 30 * time.Millisecond
	sendAt    = 4 << 10
)

func (t *turnState) event(e agent.Event) {
	if e.Kind != agent.EventText && e.Kind != agent.EventReasoning {
		t.flush()
	}
	switch e.Kind {
	case agent.EventIteration:
		t.iteration = e.Iteration
		clear(t.calls)
		clear(t.byCall)
	case agent.EventText, agent.EventReasoning:
		if e.Text == "" {
			return
		}
		if t.kind != e.Kind {
			t.flush()
			t.kind = e.Kind
		}
		if t.pending.Len() == 0 {
			t.since = time.Now()
		}
		t.pending.WriteString(e.Text)
		if t.pending.Len() >= sendAt || time.Since(t.since) >= sendEvery {
			t.flush()
		}
	case agent.EventCallStart:
		// The call is announced when it is complete: the parser may still
		// hold the end of the text written before a native call, which must
		// reach the editor first.
	case agent.EventCallEnd:
		c := t.start(e.Index, e.Call)
		if e.Call != nil {
			c.call = *e.Call
			if c.call.ID != "" {
				t.byCall[c.call.ID] = c
			}
		}
		u := t.describe(c)
		if e.Err != nil {
			t.close(c, &u, sdk.ToolCallStatusFailed, e.Err.Message)
		}
		t.update(u)
	case agent.EventToolStart:
		c := t.calls[e.Index]
		if c == nil {
			return
		}
		if c.call.Tool == "bash" && t.s.terminal {
			t.s.mu.Lock()
			t.s.bash = append(t.s.bash, startedCall{id: c.id, command: commandOf(c.call)})
			t.s.mu.Unlock()
		}
		c.status = sdk.ToolCallStatusInProgress
		t.update(sdk.SessionToolCallUpdate{ToolCallId: c.id, Status: status(c.status)})
	case agent.EventToolResult:
		c := t.calls[e.Index]
		if c == nil || e.ToolResult == nil {
			return
		}
		t.result(c, *e.ToolResult)
	case agent.EventDenied, agent.EventDuplicate:
		if c := t.calls[e.Index]; c != nil {
			u := sdk.SessionToolCallUpdate{ToolCallId: c.id}
			why := e.Text
			if e.Kind == agent.EventDenied {
				why = "Denied: " + why
			}
			t.close(c, &u, sdk.ToolCallStatusFailed, why)
			t.update(u)
		}
	case agent.EventModeSwitch:
		t.s.a.notify(t.s.id, sdk.UpdateAgentThoughtText("(ptk switched to its text protocol: "+e.Text+")\n"))
	case agent.EventContext:
		// How full the model's context window is (ACP's unstable
		// usage_update), as counted after each model call.
		if f := e.Fill; f != nil && f.Measured {
			t.s.a.notify(t.s.id, sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{Size: f.Window, Used: f.Tokens}})
		}
	case agent.EventCompact:
		if c := e.Compaction; c != nil {
			t.s.a.notify(t.s.id, sdk.UpdateAgentThoughtText(fmt.Sprintf("(ptk compacted the conversation to fit the model's context window: %d earlier messages replaced by notes, about %d tokens down to %d)\n", c.Replaced, c.Before, c.After)))
		}
	case agent.EventFinal:
		// The answer was streamed as EventText.
	}
}

// flush sends the text or thought waiting.
func (t *turnState) flush() {
	if t.pending.Len() == 0 {
		return
	}
	text := strings.ToValidUTF8(t.pending.String(), "\uFFFD")
	t.pending.Reset()
	if t.kind == agent.EventReasoning {
		t.s.a.notify(t.s.id, sdk.UpdateAgentThoughtText(text))
	} else {
		t.s.a.notify(t.s.id, sdk.UpdateAgentMessageText(text))
	}
}

// start returns the call at index i of this model call, announcing it to
// the editor (a tool_call, pending) the first time.
func (t *turnState) start(i int, call *ptk.Call) *callState {
	if c := t.calls[i]; c != nil {
		return c
	}
	c := &callState{id: sdk.ToolCallId(fmt.Sprintf("ptk-%d-%d-%d", t.turn, t.iteration, i+1)), status: sdk.ToolCallStatusPending}
	if call != nil {
		c.call = *call
	}
	t.calls[i] = c
	t.all = append(t.all, c)
	title := c.call.Tool
	if title == "" {
		title = "A tool call"
	}
	t.s.a.notify(t.s.id, sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{
		ToolCallId: c.id, Title: oneLine(title), Kind: kindOf(c.call.Tool), Status: sdk.ToolCallStatusPending,
		Meta: map[string]any{"ptk": map[string]any{"iteration": t.iteration, "tool": c.call.Tool}},
	}})
	return c
}

// describe is the update that says what a complete call will do: its
// title, kind, locations and arguments.
func (t *turnState) describe(c *callState) sdk.SessionToolCallUpdate {
	title := titleOf(c.call)
	kind := kindOf(c.call.Tool)
	u := sdk.SessionToolCallUpdate{ToolCallId: c.id, Title: &title, Kind: &kind, Locations: t.s.locations(c.call),
		Meta: map[string]any{"ptk": map[string]any{"iteration": t.iteration, "tool": c.call.Tool}}}
	if len(c.call.Args) > 0 && json.Valid(c.call.Args) {
		u.RawInput = json.RawMessage(c.call.Args)
	}
	return u
}

// result reports a call's result: its text, a diff for an edit, the
// terminal it ran in, the plan it wrote.
func (t *turnState) result(c *callState, r ptk.Result) {
	u := sdk.SessionToolCallUpdate{ToolCallId: c.id, RawOutput: map[string]any{"content": r.Content, "isError": r.IsError}}
	st := sdk.ToolCallStatusCompleted
	if r.IsError {
		st = sdk.ToolCallStatusFailed
	}
	var content []sdk.ToolCallContent
	if d, ok := t.s.takeDiff(c.call); ok && !r.IsError {
		content = append(content, d.content())
	}
	if id, ok := t.s.terminalOf(c.id); ok {
		content = append(content, sdk.ToolTerminalRef(id))
	}
	content = append(content, sdk.ToolContent(sdk.TextBlock(fenced(r.Content))))
	if c.call.Tool == planToolName && !r.IsError {
		if entries, ok := planEntries(c.call.Args); ok {
			t.s.a.notify(t.s.id, sdk.UpdatePlan(entries...))
		}
	}
	c.status = st
	u.Status = status(st)
	u.Content = content
	t.update(u)
}

// close ends a call with a status and a note.
func (t *turnState) close(c *callState, u *sdk.SessionToolCallUpdate, st sdk.ToolCallStatus, note string) {
	c.status = st
	u.Status = status(st)
	u.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(fenced(note)))}
}

// finish closes the calls the run left open: cancelled, or never run.
func (t *turnState) finish(cancelled bool) {
	note := "Not run: the run ended first."
	if cancelled {
		note = "Cancelled."
	}
	for _, c := range t.all {
		if c.status == sdk.ToolCallStatusPending || c.status == sdk.ToolCallStatusInProgress {
			u := sdk.SessionToolCallUpdate{ToolCallId: c.id}
			t.close(c, &u, sdk.ToolCallStatusFailed, note)
			t.update(u)
		}
	}
}

func (t *turnState) update(u sdk.SessionToolCallUpdate) {
	t.s.a.notify(t.s.id, sdk.SessionUpdate{ToolCallUpdate: &u})
}

func status(s sdk.ToolCallStatus) *sdk.ToolCallStatus { return &s }

// fenced puts a tool's output in a Markdown code fence longer than any run
// of backticks in it, so that the editor shows it as it is.
func fenced(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "\n" + strings.TrimRight(s, "\n") + "\n" + fence
}

// kindOf is the ACP kind of a tool: what the editor draws it as.
func kindOf(name string) sdk.ToolKind {
	switch name {
	case "read_file":
		return sdk.ToolKindRead
	case "list_dir", "glob", "grep":
		return sdk.ToolKindSearch
	case "write_file", "edit_file":
		return sdk.ToolKindEdit
	case "bash":
		return sdk.ToolKindExecute
	case planToolName:
		return sdk.ToolKindThink
	}
	return sdk.ToolKindOther
}

// callArgs are the arguments of the built-in tools that titles and
// locations show.
type callArgs struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
	Command string `json:"command"`
	Offset  int    `json:"offset"`
}

func argsOf(c ptk.Call) callArgs {
	var a callArgs
	json.Unmarshal(c.Args, &a)
	return a
}

func commandOf(c ptk.Call) string { return argsOf(c).Command }

// titleOf says in a line what a call does: "Read go.mod", "Run go test".
func titleOf(c ptk.Call) string {
	a := argsOf(c)
	var t string
	switch c.Tool {
	case "read_file":
		t = "Read " + a.Path
	case "list_dir":
		t = "List " + orDot(a.Path)
	case "glob":
		t = "Find " + a.Pattern
	case "grep":
		t = "Search for " + a.Pattern
		if a.Path != "" {
			t += " in " + a.Path
		}
	case "write_file":
		t = "Write " + a.Path
	case "edit_file":
		t = "Edit " + a.Path
	case "bash":
		t = "Run " + a.Command
	case planToolName:
		t = "Update the plan"
	default:
		t = c.Tool
	}
	if t == "" {
		t = "A tool call"
	}
	return clip(oneLine(t), 200)
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// locations are the files a call reads or changes, as absolute paths in
// the session's folder; none for a path that leaves it.
func (s *session) locations(c ptk.Call) []sdk.ToolCallLocation {
	a := argsOf(c)
	if a.Path == "" {
		return nil
	}
	p := a.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cwd, p)
	}
	p = filepath.Clean(p)
	if rel, err := filepath.Rel(s.cwd, p); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return nil
	}
	loc := sdk.ToolCallLocation{Path: p}
	if c.Tool == "read_file" && a.Offset > 0 {
		line := a.Offset
		loc.Line = &line
	}
	return []sdk.ToolCallLocation{loc}
}

// neutralize makes protocol tags in data inert, as in tool results.
func neutralize(s string) string { return protocol.Neutralize(s) }
