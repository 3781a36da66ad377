package agent

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"unicode"
	"unicode/utf8"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/turn"
)

// Why a conversation was compacted (Compaction.Reason).
const (
	// CompactThreshold: the next request would have passed CompactAt of
	// the window, or did not leave room for the answer.
	CompactThreshold = "threshold"
	// CompactContextError: the provider said the request does not fit.
	CompactContextError = "context_error"
	// CompactRequested: Compact was called (a chat's /compact).
	CompactRequested = "requested"
)

// ErrNothingToCompact is the error of Compact for a conversation that is
// all its latest turn.
var ErrNothingToCompact = errors.New("agent: nothing to compact: the conversation is its latest turn")

// Compaction is one compaction of a run's conversation: its older messages
// replaced, for the model, by notes the model wrote about them. The
// conversation keeps them (Result.Messages), followed by the notes as a
// user message whose Compacted counts them.
type Compaction struct {
	// Reason is CompactThreshold, CompactContextError or CompactRequested.
	Reason string `json:"reason"`
	// Replaced counts the messages from the start of the conversation the
	// notes stand for; Kept the messages after them the model is still
	// sent as they were.
	Replaced int `json:"replaced"`
	Kept     int `json:"kept"`
	// Before and After estimate the next request's tokens before and after.
	Before int `json:"tokens_before"`
	After  int `json:"tokens_after"`
	// Window is the context window, in tokens.
	Window int `json:"window"`
	// Calls counts the model calls that wrote the notes: one, or one per
	// part of a conversation too long to summarise at once.
	Calls int `json:"calls"`
	// Message is the message that replaces them: the task and latest
	// request as the user gave them, the files read and changed, and the
	// model's notes (Notes).
	Message string `json:"message"`
	Notes   string `json:"notes"`
	// Read and Changed are the files the calls of the conversation read
	// and changed, as the model named them.
	Read    []string `json:"read,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// Usage and Cost are those of the calls that wrote the notes (also in
	// the run's Usage and Cost).
	Usage ptk.Usage `json:"usage"`
	Cost  float64   `json:"cost"`
}

var (
	//go:embed prompts/compact_system.tmpl
	compactSystem string
	//go:embed prompts/compact_request.tmpl
	compactRequestText string
	//go:embed prompts/summary.tmpl
	summaryText string

	compactRequestTmpl = template.Must(template.New("compact_request").Parse(compactRequestText))
	summaryTmpl        = template.Must(template.New("summary").Funcs(template.FuncMap{"join": strings.Join}).Parse(summaryText))
)

// compactRequest is what the notes request's template is given.
type compactRequest struct {
	Earlier    string
	Transcript string
	Messages   int
	Cut        bool
	Words      int
}

// summary is what the notes message's template is given.
type summary struct {
	Replaced      int
	Task, Latest  string
	Read, Changed []string
	Notes         string
}

func render(t *template.Template, data any) string {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		panic("agent: the embedded template " + t.Name() + ": " + err.Error())
	}
	return strings.TrimSpace(b.String())
}

// Compact compacts a conversation now, as a run does when the context
// window fills (a chat's /compact): its older messages are replaced, for
// the model, by notes the model of opts writes about them, which keep the
// task and the latest request as the user gave them and the files read and
// changed; the latest turns stay as they were. It returns the conversation
// followed by the notes message (ptk.Message.Compacted), ready for the next
// run, and what was done. opts are a run's (Model, ModelName, Tools,
// Instructions, ContextWindow...): the window sizes the notes and what is
// kept (with none known, about the latest quarter of the conversation).
// A conversation that is all its latest turn is ErrNothingToCompact.
func Compact(ctx context.Context, history []ptk.Message, opts Options) ([]ptk.Message, *Compaction, error) {
	opts.defaults()
	r := &runner{opts: opts, res: &Result{}}
	if err := r.configure(ctx); err != nil {
		return nil, nil, err
	}
	r.start(nil, history)
	if !r.window.Known() {
		// Keep about the latest quarter of what the model is shown, and
		// ask for the notes of the rest at once.
		shown := r.estimate() - r.fixedTokens()
		r.keep = max(shown/4, 1)
		r.window = llm.Window{Tokens: int(float64(r.fixedTokens()+2*shown+8192) / r.opts.CompactAt), Source: "the conversation"}
	}
	c, err := r.compact(ctx, CompactRequested, false)
	if err != nil {
		return nil, nil, err
	}
	if c == nil {
		return nil, nil, ErrNothingToCompact
	}
	return r.history.Messages(), c, nil
}

// compact replaces the older messages the model is shown by notes the
// model writes: the latest turns stay as they were, up to about two fifths
// of the room the system prompt and the tools leave under the threshold
// (with hard, only the latest turn, and none when it alone is too long).
// It returns nil when there is nothing to replace.
func (r *runner) compact(ctx context.Context, reason string, hard bool) (*Compaction, error) {
	msgs := r.history.Messages()
	shown := r.history.Shown()
	room := r.threshold() - r.fixedTokens()
	if room < 256 {
		return nil, r.contextFull(nil)
	}
	keep := room * 2 / 5
	switch {
	case hard:
		keep = room / 5
	case r.keep > 0:
		keep = r.keep
	}
	cut := r.keepFrom(msgs, shown, keep, hard)
	if cut <= shown {
		return nil, nil
	}
	before := r.estimate()
	notesBudget := min(max(room/4, 128), 4096)
	if r.keep > 0 {
		notesBudget = min(max(keep, 128), 4096)
	}
	c := &Compaction{Reason: reason, Replaced: cut, Window: r.window.Tokens, Before: before}
	for _, m := range msgs[cut:] {
		if !isSummary(m) {
			c.Kept++
		}
	}
	earlier := ""
	if last, _ := turn.Compaction(msgs); last >= 0 {
		earlier = msgs[last].Content
	}
	notes, err := r.writeNotes(ctx, c, earlier, msgs[shown:cut], notesBudget)
	if err != nil {
		return nil, err
	}
	c.Notes = notes
	c.Read, c.Changed = r.filesTouched(msgs[:cut], notesBudget*2)
	task, latest := r.userRequests(msgs, shown, cut)
	c.Message = render(summaryTmpl, summary{Replaced: cut, Task: task, Latest: latest, Read: c.Read, Changed: c.Changed, Notes: notes})
	r.history.Append(ptk.Message{Role: ptk.RoleUser, Content: c.Message, Compacted: cut})
	c.After = r.estimate()
	r.lastPrompt = min(r.lastPrompt, c.After)
	r.res.Compactions = append(r.res.Compactions, *c)
	r.event(Event{Kind: EventCompact, Iteration: r.res.Iterations, Compaction: c, Usage: c.Usage, Cost: c.Cost})
	return c, nil
}

// isSummary reports whether m is a compaction's notes.
func isSummary(m ptk.Message) bool { return m.Compacted > 0 && m.Role == ptk.RoleUser }

// keepFrom chooses where the messages kept as they were begin: the
// earliest message that begins a turn (a user message, or an assistant's
// with its results after it) such that the messages from it on take at
// most keep tokens; at least the latest assistant turn, unless hard, when
// what does not fit is replaced too. A result is never kept without its
// call, nor a call without its results.
func (r *runner) keepFrom(msgs []ptk.Message, shown, keep int, hard bool) int {
	kept, best, lastTurn := 0, -1, -1
	for i := len(msgs) - 1; i > shown; i-- {
		m := msgs[i]
		if isSummary(m) {
			continue
		}
		kept += r.corrected(llm.EstimateMessage(m))
		if m.Role == ptk.RoleTool {
			continue
		}
		if lastTurn < 0 && m.Role == ptk.RoleAssistant {
			lastTurn = i
		}
		if kept > keep {
			break
		}
		best = i
	}
	switch {
	case best >= 0:
		return best
	case hard:
		return len(msgs)
	case lastTurn >= 0:
		return lastTurn
	}
	return -1
}

// writeNotes asks the model for notes on part of the conversation: at
// once, or, when it is longer than a request may be, part by part, each
// call given the notes of the parts before.
func (r *runner) writeNotes(ctx context.Context, c *Compaction, earlier string, part []ptk.Message, budget int) (string, error) {
	overhead := r.corrected(llm.EstimateTokens(compactSystem) + llm.EstimateTokens(compactRequestText) + 2*llm.MessageOverhead + 3)
	input := r.window.Tokens - budget - overhead - r.window.Tokens/16 - r.corrected(llm.EstimateTokens(earlier))
	input = max(input, 256)
	perMessage := max(input/2, 128)
	var entries []string
	var sizes []int
	cutAny := false
	for _, m := range part {
		if isSummary(m) {
			continue
		}
		e, cut := transcriptEntry(m, perMessage*3)
		cutAny = cutAny || cut
		entries = append(entries, e)
		sizes = append(sizes, r.corrected(llm.EstimateTokens(e)+1))
	}
	notes := earlier
	for len(entries) > 0 {
		n, size := 0, 0
		for n < len(entries) && (n == 0 || size+sizes[n] <= input) {
			size += sizes[n]
			n++
		}
		req := r.notesRequest(notes, entries[:n], cutAny, budget)
		entries, sizes = entries[n:], sizes[n:]
		rep, err := turn.Turn{Model: r.opts.Model, Parser: r.parser, Mode: turn.PTK, NoCalls: true}.Ask(ctx, req, nil)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctxError(ctx, "while the model wrote notes to compact the conversation")
			}
			if errors.Is(err, llm.ErrContextLength) {
				return "", r.contextFull(err)
			}
			return "", ptk.NewError(ptk.LLMCallFailed, "the model call that writes notes to compact the conversation failed: "+err.Error(), err)
		}
		c.Calls++
		r.learn(llm.EstimateRequest(req), rep.Usage)
		cost := rep.Cost
		if cost == 0 && r.opts.Price != nil {
			cost = r.opts.Price.Cost(rep.Usage)
		}
		c.Usage, c.Cost = c.Usage.Add(rep.Usage), c.Cost+cost
		r.res.Usage, r.res.Cost = r.res.Usage.Add(rep.Usage), r.res.Cost+cost
		notes = clipText(strings.TrimSpace(rep.Text), budget*4)
	}
	if notes == "" || notes == earlier && earlier != "" {
		notes = "(The model wrote no notes.)"
	}
	return notes, nil
}

// notesRequest is the request for notes on entries, after earlier notes.
func (r *runner) notesRequest(earlier string, entries []string, cut bool, budget int) llm.Request {
	text := render(compactRequestTmpl, compactRequest{Earlier: earlier, Transcript: strings.Join(entries, "\n\n"),
		Messages: len(entries), Cut: cut, Words: budget * 3 / 4})
	req := llm.Request{Model: r.opts.ModelName, Temperature: r.opts.Temperature, MaxTokens: budget,
		Messages: []ptk.Message{{Role: ptk.RoleSystem, Content: strings.TrimSpace(compactSystem)}, {Role: ptk.RoleUser, Content: text}}}
	if _, ok := llm.As[llm.TextCompleter](r.opts.Model); ok {
		req.Prompt = r.opts.Formatter.Transcript(req.Messages)
	}
	return req
}

// transcriptEntry writes one message for the notes request, its text cut
// in the middle past max bytes; the text is data, so protocol tags in it
// are made inert.
func transcriptEntry(m ptk.Message, max int) (string, bool) {
	var b strings.Builder
	cut := false
	text := func(s string) {
		s, c := clipMiddle(strings.TrimSpace(s), max)
		cut = cut || c
		b.WriteString(protocol.Neutralize(s))
	}
	switch m.Role {
	case ptk.RoleUser:
		b.WriteString("USER: ")
		text(m.Content)
	case ptk.RoleAssistant:
		b.WriteString("ASSISTANT: ")
		text(m.Content)
		for _, c := range m.Calls {
			b.WriteString("\nCALL " + c.Tool + " ")
			text(compactArgs(c.Args))
		}
	case ptk.RoleTool:
		b.WriteString("RESULT of " + m.Tool)
		if m.IsError {
			b.WriteString(" (an error)")
		}
		b.WriteString(": ")
		text(m.Content)
	}
	return b.String(), cut
}

func compactArgs(args json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, args) != nil {
		return string(args)
	}
	return buf.String()
}

// clipMiddle keeps the head and the tail of s, at most max bytes in all,
// on rune boundaries, and says how much was cut between them.
func clipMiddle(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	head, tail := runeCut(s, max*2/3), max/3
	j := len(s) - tail
	for j < len(s) && !utf8.RuneStart(s[j]) {
		j++
	}
	return s[:head] + "\n[… " + strconv.Itoa(j-head) + " bytes cut …]\n" + s[j:], true
}

// clipText keeps the head of s, at most max bytes, on a rune boundary.
func clipText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return s[:runeCut(s, max)] + " […]"
}

// runeCut is the largest rune boundary of s at most n.
func runeCut(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// userRequests returns the conversation's first request and its latest
// before cut, as the user gave them (the latest "" when it is the first):
// the first user message, and the latest that is not a compaction's notes.
// It looks at the messages the model is shown only, and remembers both,
// so a long run does not read its whole conversation at each compaction.
func (r *runner) userRequests(msgs []ptk.Message, shown, cut int) (task, latest string) {
	if r.task == nil {
		for i, m := range msgs[:cut] {
			if m.Role == ptk.RoleUser && !isSummary(m) {
				r.task = &msgs[i]
				break
			}
		}
	}
	for i := cut - 1; i >= shown; i-- {
		if m := msgs[i]; m.Role == ptk.RoleUser && !isSummary(m) {
			r.latest = &msgs[i]
			break
		}
	}
	if r.task == nil {
		// The first request was replaced before: the latest notes carry it.
		return "(given in the notes below)", ""
	}
	if r.latest == nil || r.latest == r.task {
		return r.task.Content, ""
	}
	return r.task.Content, r.latest.Content
}

// filesTouched lists the files the calls in msgs read and changed, as the
// model named them ("path", "file_path", "file" or "filename" arguments):
// changed when a tool that is not read-only succeeded on it, read
// otherwise. It reads msgs from where the last look stopped, so a long run
// reads each message once. The lists keep the latest files, about size
// bytes in all, and say how many more there were.
func (r *runner) filesTouched(msgs []ptk.Message, size int) (read, changed []string) {
	if r.files == nil {
		r.files = map[string]bool{}
	}
	pending := map[string]string{} // call id → path
	for i := min(r.filesSeen, len(msgs)); i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case ptk.RoleAssistant:
			for _, c := range m.Calls {
				if p := callPath(c.Args); p != "" {
					pending[c.ID] = p
					if _, ok := r.files[p]; !ok {
						r.files[p] = false
						r.fileOrder = append(r.fileOrder, p)
					}
				}
			}
		case ptk.RoleTool:
			p, ok := pending[m.CallID]
			if !ok || m.IsError {
				continue
			}
			if t, known := r.tools[m.Tool]; known && !t.Info().ReadOnly {
				r.files[p] = true
			}
		}
	}
	r.filesSeen = len(msgs)
	for _, p := range r.fileOrder {
		if r.files[p] {
			changed = append(changed, p)
		} else {
			read = append(read, p)
		}
	}
	return latest(read, size/2), latest(changed, size/2)
}

// latest keeps the last of names that fit in size bytes, and says how many
// earlier ones it left out.
func latest(names []string, size int) []string {
	i, n := len(names), 0
	for i > 0 && n+len(names[i-1])+2 <= size {
		n += len(names[i-1]) + 2
		i--
	}
	out := slices.Clone(names[i:])
	if i > 0 {
		out = append([]string{"(" + strconv.Itoa(i) + " earlier ones)"}, out...)
	}
	return out
}

// callPath is the file a call's arguments name, made safe to quote on a
// line: model output, so its control characters are dropped and it is
// bounded.
func callPath(args json.RawMessage) string {
	var v map[string]json.RawMessage
	if json.Unmarshal(args, &v) != nil {
		return ""
	}
	for _, k := range []string{"path", "file_path", "file", "filename"} {
		var p string
		if json.Unmarshal(v[k], &p) == nil && strings.TrimSpace(p) != "" {
			p = strings.Map(func(r rune) rune {
				if unicode.IsControl(r) {
					return -1
				}
				return r
			}, p)
			return clipText(strings.TrimSpace(p), 200)
		}
	}
	return ""
}
