package turn

import (
	"context"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
)

// Turn is how one model call is made and read. Its zero value is not
// usable: Model is required. A Turn is a value: copy it to change a field.
type Turn struct {
	// Model answers the call.
	Model llm.Model
	// Parser reads the reply: calls written as text, reasoning, prose, and
	// it checks native calls against the tools' schemas. Nil passes the text
	// through as it is and native calls unchecked.
	Parser *protocol.Parser
	// Mode says where the calls are: in PTK mode in the text, reported as
	// the model writes them; in Native mode in the provider's native calls,
	// or, when there are none, in the text (a server without a tool parser
	// passes a model's calls through as text), reported when the reply ends.
	Mode Mode
	// Stream asks the model to stream its answer when it can (llm.Streamer).
	Stream bool
	// NoCalls reads no calls: the model was asked to answer without tools.
	NoCalls bool
	// CallID names the i-th call of the reply (from 0): every call read
	// from the text, and a native call the model gave no id of its own (or
	// the id of an earlier call). Nil leaves calls read from the text with
	// the parser's ids, and native calls without one empty.
	CallID func(i int) string
	// Pause, when set, is called each time the turn has reported all it
	// has read of a streamed answer, before it waits for more: a program
	// that buffers what it reports (the gateway, the events it writes to
	// its client) sends it then. Chunks that arrived together (llm.Chunk's
	// More) are one pause: what one read from the network brought goes out
	// in one write, never held back for the next.
	Pause func()
}

// EventKind says what an Event reports.
type EventKind uint8

// The kinds of events of a turn, in the order the model's answer gives them.
const (
	// EventText: the next piece of the prose for the user (Text).
	EventText EventKind = iota + 1
	// EventReasoning: the next piece of the model's reasoning (Text).
	EventReasoning
	// EventCallStart: the model begins a call (Index; Call with its id and
	// tool name when they are known; Text the first piece of its
	// arguments, if it came with them; Native).
	EventCallStart
	// EventCallDelta: the next piece of a call's arguments as the model
	// writes them (Index, Text, Native).
	EventCallDelta
	// EventCallEnd: a call is complete and checked (Index, Call as ptk read
	// it, Err when it cannot run, Native).
	EventCallEnd
)

// Event is one step of a model's answer.
type Event struct {
	Kind EventKind
	// Index is the call's position in the reply, from 0.
	Index int
	Text  string
	Call  *ptk.Call
	// Err is the error of a call that cannot run.
	Err *ptk.Error
	// Native reports a call made through the provider's native tool calling.
	Native bool
}

// Reply is a model's answer as a turn reads it.
type Reply struct {
	// Text is the prose for the user: without calls, protocol tokens or
	// reasoning (the text as written when the turn has no parser).
	Text string
	// Raw is the text exactly as the model wrote it.
	Raw string
	// Reasoning is the reasoning the provider returned apart from the text.
	Reasoning string
	// Attempts are the calls the model made, in order, each checked against
	// its tool's schema (Err set when it cannot run); none with NoCalls.
	Attempts []protocol.Attempt
	// Native reports that the calls were the provider's native calls, and
	// Made holds them as the model made them, in the order of Attempts.
	Native bool
	Made   []ptk.Call
	// Usage and Cost are the provider's count and the model's own price of
	// the call (0 when it has none); FinishReason and Model as the provider
	// said.
	Usage        ptk.Usage
	Cost         float64
	FinishReason string
	Model        string
	// Streamed reports that the answer was streamed, so every native call
	// was reported piece by piece (EventCallStart, EventCallDelta).
	Streamed bool

	// fromText: the calls were to be read from the text (PTK mode), so the
	// text as written is the turn to replay.
	fromText bool
}

// Calls returns the calls of the reply, valid or not, in order.
func (r *Reply) Calls() []ptk.Call {
	calls := make([]ptk.Call, len(r.Attempts))
	for i, a := range r.Attempts {
		calls[i] = a.Call
	}
	return calls
}

// Message returns the reply as the assistant turn of a conversation: its
// prose and calls, and, when the calls were read from its text, the text as
// written, so that a model taught the protocol sees its own words.
func (r *Reply) Message() ptk.Message {
	m := ptk.Message{Role: ptk.RoleAssistant, Content: r.Text}
	if len(r.Attempts) > 0 {
		m.Calls = r.Calls()
	}
	if r.fromText {
		m.Raw = r.Raw
	}
	return m
}

// Ask makes the model call req and reads the answer, reporting each step to
// emit (which may be nil) as it comes. A failed call returns the model's
// error as it is, and what was read so far.
func (t Turn) Ask(ctx context.Context, req llm.Request, emit func(Event)) (*Reply, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	// One value holds the whole reading (and the reply), so that a turn
	// costs few allocations beside the model's.
	rd := &reading{t: t, emit: emit, textCalls: !t.NoCalls && t.Mode == PTK}
	rep := &rd.rep
	if t.Parser != nil {
		rd.ps = t.Parser.NewStream(rd.parsed)
	}
	var resp *llm.Response
	if s, ok := t.Model.(llm.Streamer); ok && t.Stream {
		rep.Streamed = true
		var col llm.Collector    // keeps the reply's text: no second copy of it here
		var started map[int]bool // the native calls begun, made at the first
		for ch, err := range s.Stream(ctx, req) {
			if err != nil {
				rd.ps.Flush() // what came before the break is shown
				rep.Raw = col.Response().Content
				return rep, err
			}
			col.Add(ch)
			if ch.Reasoning != "" {
				emit(Event{Kind: EventReasoning, Text: ch.Reasoning})
			}
			rd.text(ch.Text)
			if !ch.More {
				// The parser takes small pieces in without reading them;
				// what one read from the network brought is read now,
				// before the turn waits for the next, so that its events
				// go out while the model writes (a slow model's text as
				// it comes, a fast one's without a tail of work after its
				// last byte). Pieces that came together are read together.
				rd.ps.Flush()
			}
			if d := ch.Call; d != nil && !t.NoCalls {
				if !started[d.Index] {
					if started == nil {
						started = map[int]bool{}
					}
					started[d.Index] = true
					emit(Event{Kind: EventCallStart, Index: d.Index, Call: &ptk.Call{ID: d.ID, Tool: d.Tool}, Text: d.ArgsDelta, Native: true})
				} else if d.ArgsDelta != "" || d.ID != "" || d.Tool != "" {
					emit(Event{Kind: EventCallDelta, Index: d.Index, Text: d.ArgsDelta, Call: idOnly(d), Native: true})
				}
			}
			if t.Pause != nil && !ch.More {
				t.Pause()
			}
		}
		resp = col.Response()
		rep.Raw = resp.Content
	} else {
		var err error
		if resp, err = t.Model.Generate(ctx, req); err != nil {
			return rep, err
		}
		if resp == nil {
			return rep, &llm.Error{Kind: llm.ErrBadResponse, Message: "the model returned no response"}
		}
		if resp.Reasoning != "" {
			emit(Event{Kind: EventReasoning, Text: resp.Reasoning})
		}
		rep.Raw = resp.Content
		rd.text(resp.Content)
	}
	rep.Text, rep.Reasoning = rep.Raw, resp.Reasoning
	rep.Usage, rep.Cost, rep.FinishReason, rep.Model = resp.Usage, resp.Cost, resp.FinishReason, resp.Model
	var parsed protocol.Parsed
	if rd.ps != nil {
		if CutOff(resp.FinishReason) {
			rd.ps.Cut()
		}
		parsed = rd.ps.Finish()
		rep.Text = parsed.Text
	}
	switch {
	case t.NoCalls:
	case len(resp.Calls) > 0:
		// Native calls, checked like calls read from text. Ids must be
		// unique in a turn for the results to find their calls.
		rep.Native = true
		rep.Made = resp.Calls
		rep.Attempts = make([]protocol.Attempt, 0, len(resp.Calls))
		seen := make(map[string]bool, len(resp.Calls))
		for i, c := range resp.Calls {
			if c.ID == "" || seen[c.ID] {
				c.ID = t.id(i)
			}
			seen[c.ID] = true
			a := protocol.Attempt{Call: c}
			if t.Parser != nil {
				a, _ = t.Parser.Check(c)
			}
			rep.Attempts = append(rep.Attempts, a)
			emit(Event{Kind: EventCallEnd, Index: i, Call: &rep.Attempts[i].Call, Err: a.Err, Native: true})
		}
	default:
		rep.fromText = rd.textCalls
		rep.Attempts = parsed.Attempts
		for i := range rep.Attempts {
			t.name(&rep.Attempts[i].Call, i)
		}
		for _, ev := range rd.held {
			emit(ev)
		}
	}
	return rep, nil
}

// CutOff reports a finish reason that says the model's token limit cut
// its answer off, as OpenAI ("length"), Anthropic ("max_tokens") and
// Gemini ("MAX_TOKENS") write it.
func CutOff(reason string) bool {
	return reason == "length" || reason == "max_tokens" || reason == "MAX_TOKENS"
}

// reading is one turn's reading of the model's answer.
type reading struct {
	t         Turn
	emit      func(Event)
	textCalls bool // calls in the text are the turn's, reported as written
	held      []Event
	ps        *protocol.Stream
	rep       Reply
}

// text feeds the next piece of the model's text to the parser, or, with
// none, reports it as it is.
func (rd *reading) text(s string) {
	switch {
	case s == "":
	case rd.ps != nil:
		rd.ps.WriteString(s)
	default:
		rd.emit(Event{Kind: EventText, Text: s})
	}
}

// parsed reports what the parser read.
func (rd *reading) parsed(e protocol.Event) {
	t := &rd.t
	switch e.Kind {
	case protocol.EventText:
		rd.emit(Event{Kind: EventText, Text: e.Text})
	case protocol.EventReasoning:
		rd.emit(Event{Kind: EventReasoning, Text: e.Text})
	case protocol.EventCallStart:
		if rd.textCalls {
			c := &ptk.Call{Tool: e.Tool}
			t.name(c, e.Index)
			rd.emit(Event{Kind: EventCallStart, Index: e.Index, Call: c})
		}
	case protocol.EventCallDelta:
		if rd.textCalls {
			rd.emit(Event{Kind: EventCallDelta, Index: e.Index, Text: e.Text})
		}
	case protocol.EventCallEnd:
		if !rd.textCalls && rd.t.NoCalls {
			return
		}
		a := *e.Attempt
		t.name(&a.Call, e.Index)
		ev := Event{Kind: EventCallEnd, Index: e.Index, Call: &a.Call, Err: a.Err}
		if rd.textCalls {
			rd.emit(ev)
		} else {
			rd.held = append(rd.held, ev)
		}
	}
}

// idOnly is the call id and tool a later piece of a native call carries,
// if any.
func idOnly(d *llm.CallDelta) *ptk.Call {
	if d.ID == "" && d.Tool == "" {
		return nil
	}
	return &ptk.Call{ID: d.ID, Tool: d.Tool}
}

// name names a call read from the text, the i-th of the reply, with
// CallID; without it the call keeps the parser's name for it.
func (t Turn) name(c *ptk.Call, i int) {
	if t.CallID != nil {
		c.ID = t.CallID(i)
	}
}

// id names the i-th call of the reply.
func (t Turn) id(i int) string {
	if t.CallID == nil {
		return ""
	}
	return t.CallID(i)
}
