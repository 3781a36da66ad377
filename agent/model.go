package agent

import (
	"context"
	"errors"
	"strconv"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/turn"
)

// turnMode is the mode the run's model turns are made in: with no tools,
// there is no protocol to teach.
func (r *runner) turnMode() turn.Mode {
	if r.mode == ModePTK && len(r.infos) > 0 {
		return turn.PTK
	}
	return turn.Native
}

func (r *runner) startMode() Mode {
	if r.opts.Mode != ModeAuto {
		return r.opts.Mode
	}
	if r.opts.NativeTools.Rejected(r.opts.Model, r.opts.ModelName) {
		return ModePTK
	}
	return ModeNative
}

// ask makes one model call and reads its answer into an assistant turn,
// which it adds to the history. With final, the model is asked to answer
// without tools, and calls in its answer are not taken.
func (r *runner) ask(ctx context.Context, final bool) (*turn.Reply, error) {
	r.res.Iterations++
	it := r.res.Iterations
	r.turn++
	r.event(Event{Kind: EventIteration, Iteration: it})
	retried := false
	for {
		if err := r.fit(ctx); err != nil {
			return nil, err
		}
		rep, msg, err := r.call(ctx, final)
		if err != nil && r.opts.Mode == ModeAuto && r.mode == ModeNative && len(r.infos) > 0 &&
			ctx.Err() == nil && errors.Is(err, llm.ErrToolsUnsupported) {
			r.opts.NativeTools.Reject(r.opts.Model, r.opts.ModelName)
			r.mode = ModePTK
			r.history.SetMode(r.turnMode())
			r.event(Event{Kind: EventModeSwitch, Iteration: it, Text: "the provider rejected native tools (" + err.Error() + "); using the text protocol"})
			continue
		}
		if err != nil && ctx.Err() == nil && errors.Is(err, llm.ErrContextLength) {
			// The provider counts more than the estimate: compact once
			// and try again, else the conversation cannot fit.
			if retried || r.opts.NoCompact {
				return nil, r.contextFull(err)
			}
			retried = true
			r.tooLong(err)
			c, cerr := r.compact(ctx, CompactContextError, false)
			if cerr != nil {
				return nil, cerr
			}
			if c == nil {
				return nil, r.contextFull(err)
			}
			continue
		}
		if err != nil {
			return nil, modelError(ctx, err)
		}
		r.history.Append(*msg)
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
	req := llm.Request{Model: o.ModelName, Temperature: o.Temperature, MaxTokens: o.MaxOutputTokens,
		Messages: r.history.Rendered()}
	if r.mode != ModePTK && len(r.infos) > 0 {
		req.Tools = r.infos
		if final {
			req.ToolChoice = "none"
		}
	}
	if _, ok := llm.As[llm.TextCompleter](o.Model); ok {
		// A text-only model continues one prompt: the run's formatter
		// flattens the conversation, not one the model picks.
		req.Prompt = r.history.Transcript()
	}
	return req
}

// call makes one model call, streamed when asked and possible, reporting
// what the model writes as events, and reads the answer and the turn it
// adds to the history.
func (r *runner) call(ctx context.Context, final bool) (*turn.Reply, *ptk.Message, error) {
	it := r.res.Iterations
	t := turn.Turn{
		Model:   r.opts.Model,
		Parser:  r.parser,
		Mode:    r.turnMode(),
		Stream:  r.opts.StreamModel,
		NoCalls: final || len(r.infos) == 0, // with no tools, nothing is a call
		CallID:  r.callID,
	}
	rep, err := t.Ask(ctx, r.request(final), func(e turn.Event) {
		ev := Event{Iteration: it, Index: e.Index, Text: e.Text, Call: e.Call, Err: e.Err}
		switch e.Kind {
		case turn.EventText:
			ev.Kind = EventText
		case turn.EventReasoning:
			ev.Kind = EventReasoning
		case turn.EventCallStart:
			ev.Kind, ev.Text = EventCallStart, ""
			r.event(ev)
			if e.Text == "" {
				return
			}
			ev.Kind, ev.Call, ev.Text = EventCallDelta, nil, e.Text
		case turn.EventCallDelta:
			if e.Text == "" {
				return
			}
			ev.Kind, ev.Call = EventCallDelta, nil
		case turn.EventCallEnd:
			ev.Kind = EventCallEnd
		}
		r.event(ev)
	})
	if err != nil {
		return nil, nil, err
	}
	r.res.Usage = r.res.Usage.Add(rep.Usage)
	r.lastPrompt = rep.Usage.PromptTokens
	cost := rep.Cost
	if cost == 0 && r.opts.Price != nil {
		cost = r.opts.Price.Cost(rep.Usage)
	}
	r.res.Cost += cost
	msg := rep.Message()
	r.event(Event{Kind: EventModelDone, Iteration: it, Usage: rep.Usage, Cost: cost, Request: r.history.Messages(), Reply: &msg})
	r.measured(rep.Usage)
	return rep, &msg, nil
}
