package agent

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
)

// reply is one model answer as the loop reads it.
type reply struct {
	// msg is the assistant turn: prose, calls, and the raw text in ModePTK.
	msg      ptk.Message
	attempts []protocol.Attempt
}

// ptkModels remembers the models that rejected native tools, for ModeAuto.
var ptkModels sync.Map

type modelKey struct {
	model any
	name  string
}

// keyOf identifies a model for ModeAuto's memory: by its base URL when it
// has one, by its identity otherwise; ok is false when it cannot be
// remembered.
func keyOf(m llm.Model, name string) (k modelKey, ok bool) {
	if b, is := m.(interface{ BaseURL() string }); is && b.BaseURL() != "" {
		return modelKey{b.BaseURL(), name}, true
	}
	if t := reflect.TypeOf(m); t == nil || !t.Comparable() {
		return k, false
	}
	return modelKey{m, name}, true
}

func (r *runner) startMode() Mode {
	if r.opts.Mode != ModeAuto {
		return r.opts.Mode
	}
	if t, ok := r.opts.Model.(llm.ToolSupporter); ok && !t.SupportsNativeTools() {
		return ModePTK
	}
	if k, ok := keyOf(r.opts.Model, r.opts.ModelName); ok {
		if _, isPTK := ptkModels.Load(k); isPTK {
			return ModePTK
		}
	}
	return ModeNative
}

// ask makes one model call and reads its answer into an assistant turn,
// which it adds to the history. With final, the model is asked to answer
// without tools, and calls in its answer are not taken.
func (r *runner) ask(ctx context.Context, final bool) (*reply, error) {
	r.res.Iterations++
	it := r.res.Iterations
	r.turn++
	r.event(Event{Kind: EventIteration, Iteration: it})
	if r.opts.OnIteration != nil {
		r.opts.OnIteration(it)
	}
	for {
		rep, err := r.call(ctx, r.request(final), final)
		if err != nil && r.opts.Mode == ModeAuto && r.mode == ModeNative && len(r.infos) > 0 &&
			ctx.Err() == nil && errors.Is(err, llm.ErrToolsUnsupported) {
			if k, ok := keyOf(r.opts.Model, r.opts.ModelName); ok {
				ptkModels.Store(k, true)
			}
			r.mode = ModePTK
			r.event(Event{Kind: EventModeSwitch, Iteration: it, Text: "the provider rejected native tools (" + err.Error() + "); using the text protocol"})
			continue
		}
		if err != nil {
			return nil, modelError(ctx, err)
		}
		r.history = append(r.history, rep.msg)
		return rep, nil
	}
}

// callID names the i-th call (from 0) of the current turn.
func (r *runner) callID(i int) string {
	return "call_" + strconv.Itoa(r.turn) + "_" + strconv.Itoa(i+1)
}

// request builds the model request for the current mode and history.
func (r *runner) request(final bool) llm.Request {
	o := &r.opts
	req := llm.Request{Model: o.ModelName, Temperature: o.Temperature, MaxTokens: o.MaxOutputTokens}
	if r.mode == ModePTK && len(r.infos) > 0 {
		if r.systemPTK == "" {
			r.systemPTK = o.Formatter.SystemPrompt(o.Instructions, r.infos)
		}
		req.Messages = append(make([]ptk.Message, 0, len(r.history)+1), ptk.Message{Role: ptk.RoleSystem, Content: r.systemPTK})
		req.Messages = r.renderPTK(req.Messages)
		return req
	}
	req.Messages = make([]ptk.Message, 0, len(r.history)+1)
	if strings.TrimSpace(o.Instructions) != "" {
		req.Messages = append(req.Messages, ptk.Message{Role: ptk.RoleSystem, Content: o.Instructions})
	}
	req.Messages = renderNative(req.Messages, r.history)
	if len(r.infos) > 0 {
		req.Tools = r.infos
		if final {
			req.ToolChoice = "none"
		}
	}
	return req
}

// renderPTK appends the history as a chat model taught the text protocol
// reads it: assistant turns as written, the results of a turn's calls as one
// user message in the protocol's result format.
func (r *runner) renderPTK(out []ptk.Message) []ptk.Message {
	h := r.history
	for i := 0; i < len(h); i++ {
		m := h[i]
		switch m.Role {
		case ptk.RoleAssistant:
			content := m.Raw
			if content == "" {
				content = m.Content
				if len(m.Calls) > 0 {
					content = strings.TrimSpace(content + "\n\n" + r.renderCalls(m.Calls))
				}
			}
			out = append(out, ptk.Message{Role: ptk.RoleAssistant, Content: content})
		case ptk.RoleTool:
			var results []ptk.Result
			results, i = protocol.ToolTurn(h, i)
			out = append(out, ptk.Message{Role: ptk.RoleUser, Content: r.opts.Formatter.Results(results)})
		case ptk.RoleSystem:
			// The system prompt is the run's own.
		default:
			out = append(out, ptk.Message{Role: ptk.RoleUser, Content: m.Content})
		}
	}
	return out
}

func (r *runner) renderCalls(calls []ptk.Call) string {
	if f, ok := r.opts.Formatter.(interface{ Calls([]ptk.Call) string }); ok {
		return f.Calls(calls)
	}
	return protocol.PTK{}.Calls(calls)
}

// renderNative appends the history for a provider's native tool calling.
// Calls that could not be read (no tool name) are left out with their
// results: providers reject them. An error result says it is one.
func renderNative(out, h []ptk.Message) []ptk.Message {
	dropped := map[string]bool{}
	for _, m := range h {
		switch m.Role {
		case ptk.RoleSystem:
			continue
		case ptk.RoleAssistant:
			calls := m.Calls[:0:0]
			for _, c := range m.Calls {
				if c.Tool == "" {
					dropped[c.ID] = true
					continue
				}
				calls = append(calls, c)
			}
			m.Calls, m.Raw = calls, ""
		case ptk.RoleTool:
			if dropped[m.CallID] {
				continue
			}
			if m.IsError && !strings.HasPrefix(strings.ToLower(m.Content), "error") {
				m.Content = "Error: " + m.Content
			}
		}
		out = append(out, m)
	}
	return out
}

// call makes one model call, streamed when asked and possible, reporting
// what the model writes as events, and reads the answer.
func (r *runner) call(ctx context.Context, req llm.Request, final bool) (*reply, error) {
	final = final || len(r.infos) == 0 // with no tools, nothing is a call
	ptkCalls := r.mode == ModePTK && !final
	var parsedEnds []Event
	ps := r.parser.NewStream(func(e protocol.Event) {
		switch e.Kind {
		case protocol.EventText:
			r.event(Event{Kind: EventText, Iteration: r.res.Iterations, Text: e.Text})
		case protocol.EventReasoning:
			r.event(Event{Kind: EventReasoning, Iteration: r.res.Iterations, Text: e.Text})
		case protocol.EventCallStart:
			if ptkCalls {
				r.event(Event{Kind: EventCallStart, Iteration: r.res.Iterations, Index: e.Index, Call: &ptk.Call{ID: r.callID(e.Index), Tool: e.Tool}})
			}
		case protocol.EventCallDelta:
			if ptkCalls {
				r.event(Event{Kind: EventCallDelta, Iteration: r.res.Iterations, Index: e.Index, Text: e.Text})
			}
		case protocol.EventCallEnd:
			a := *e.Attempt
			a.Call.ID = r.callID(e.Index)
			ev := Event{Kind: EventCallEnd, Iteration: r.res.Iterations, Index: e.Index, Call: &a.Call, Err: a.Err}
			if ptkCalls {
				r.event(ev)
			} else {
				parsedEnds = append(parsedEnds, ev)
			}
		}
	})
	var resp *llm.Response
	if s, ok := r.opts.Model.(llm.Streamer); ok && r.opts.StreamModel {
		var col llm.Collector
		started := map[int]bool{}
		for ch, err := range s.Stream(ctx, req) {
			if err != nil {
				return nil, err
			}
			col.Add(ch)
			if ch.Reasoning != "" {
				r.event(Event{Kind: EventReasoning, Iteration: r.res.Iterations, Text: ch.Reasoning})
			}
			if ch.Text != "" {
				ps.WriteString(ch.Text)
			}
			if d := ch.Call; d != nil && !final {
				if !started[d.Index] {
					started[d.Index] = true
					r.event(Event{Kind: EventCallStart, Iteration: r.res.Iterations, Index: d.Index, Call: &ptk.Call{ID: d.ID, Tool: d.Tool}})
				}
				if d.ArgsDelta != "" {
					r.event(Event{Kind: EventCallDelta, Iteration: r.res.Iterations, Index: d.Index, Text: d.ArgsDelta})
				}
			}
		}
		resp = col.Response()
	} else {
		var err error
		if resp, err = r.opts.Model.Generate(ctx, req); err != nil {
			return nil, err
		}
		if resp == nil {
			return nil, &llm.Error{Kind: llm.ErrBadResponse, Message: "the model returned no response"}
		}
		if resp.Reasoning != "" {
			r.event(Event{Kind: EventReasoning, Iteration: r.res.Iterations, Text: resp.Reasoning})
		}
		ps.WriteString(resp.Content)
	}
	pr := ps.Finish()
	r.res.Usage = r.res.Usage.Add(resp.Usage)
	r.lastPrompt = resp.Usage.PromptTokens
	switch {
	case resp.Cost > 0:
		r.res.Cost += resp.Cost
	case r.opts.Price != nil:
		r.res.Cost += r.opts.Price.Cost(resp.Usage)
	}
	r.event(Event{Kind: EventModelDone, Iteration: r.res.Iterations, Usage: resp.Usage})

	rep := &reply{msg: ptk.Message{Role: ptk.RoleAssistant, Content: pr.Text}}
	switch {
	case final:
	case len(resp.Calls) > 0:
		// Native calls, checked like parsed ones. Ids must be unique in a
		// turn for the results to find their calls.
		seen := map[string]bool{}
		for i, c := range resp.Calls {
			if c.ID == "" || seen[c.ID] {
				c.ID = r.callID(i)
			}
			seen[c.ID] = true
			a, _ := r.parser.Check(c)
			rep.attempts = append(rep.attempts, a)
			r.event(Event{Kind: EventCallEnd, Iteration: r.res.Iterations, Index: i, Call: &a.Call, Err: a.Err})
		}
	default:
		// Calls in the text: the protocol, or, in native mode, a model
		// that wrote its calls as text (a server without a tool parser).
		for i, a := range pr.Attempts {
			a.Call.ID = r.callID(i)
			rep.attempts = append(rep.attempts, a)
		}
		for _, ev := range parsedEnds {
			r.event(ev)
		}
		if r.mode == ModePTK {
			rep.msg.Raw = resp.Content
		}
	}
	for _, a := range rep.attempts {
		rep.msg.Calls = append(rep.msg.Calls, a.Call)
	}
	return rep, nil
}
