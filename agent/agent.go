package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/tool"
)

// Run runs the loop: the model answers prompt, calling tools until it gives a
// final answer or a limit is reached. It returns the Result, and an error
// (a *ptk.Error with the run's Code) when the run failed; the Result is
// filled in either way.
func Run(ctx context.Context, prompt string, opts Options) (*Result, error) {
	return run(ctx, prompt, opts, nil)
}

// Stream runs the loop like Run and reports every step as an Event. The last
// event is EventDone, with the Result, paired with the run's error. Breaking
// out of the loop early cancels the run.
func Stream(ctx context.Context, prompt string, opts Options) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stopped := false
		emit := func(e Event) {
			if !stopped && !yield(e, nil) {
				stopped = true
				cancel()
			}
		}
		res, err := run(ctx, prompt, opts, emit)
		if !stopped {
			yield(Event{Kind: EventDone, Run: res}, err)
		}
	}
}

// runner is the state of one run. Only the run's goroutine touches it; tools
// run on other goroutines but report back through channels.
type runner struct {
	opts   Options
	emit   func(Event)
	tools  map[string]ptk.Tool
	infos  []ptk.ToolInfo
	parser *protocol.Parser
	mode   Mode
	res    *Result
	// history is the conversation without the system prompt.
	history []ptk.Message
	// turn numbers the assistant turns of the conversation, for call ids.
	turn int
	// recent holds the keys of the latest answered calls, for duplicates.
	recent []string
	// cache holds results of cacheable calls by key.
	cache map[string]ptk.Result
	// systemPTK is the system prompt of ModePTK, written once per run.
	systemPTK string
	// lastPrompt is the prompt tokens of the last model call: the next
	// prompt is at least as long.
	lastPrompt int
}

func run(ctx context.Context, prompt string, opts Options, emit func(Event)) (res *Result, err error) {
	start := time.Now()
	opts.defaults()
	r := &runner{opts: opts, emit: emit, res: &Result{}}
	defer func() {
		res.Duration = time.Since(start)
		res.Mode = r.mode
		res.TotalToolCalls = len(res.ToolCalls)
		res.Messages = r.history
		if err != nil {
			var pe *ptk.Error
			if !errors.As(err, &pe) {
				pe = ptk.NewError(ptk.CodeOf(err), "", err)
			}
			res.Error, res.Success, err = pe, false, pe
			if opts.OnError != nil {
				opts.OnError(pe)
			}
		}
	}()
	if opts.Model == nil {
		return r.res, ptk.NewError(ptk.LLMCallFailed, "no model: set Options.Model", nil)
	}
	if err := r.setTools(); err != nil {
		return r.res, err
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	if opts.ConversationID != "" {
		h, err := opts.Store.Load(ctx, opts.ConversationID)
		if err != nil {
			return r.res, ptk.NewError(ptk.LLMCallFailed, "loading conversation "+strconv.Quote(opts.ConversationID), err)
		}
		r.history = h
		defer func() {
			if serr := opts.Store.Save(context.WithoutCancel(ctx), opts.ConversationID, r.history); serr != nil && err == nil {
				err = ptk.NewError(ptk.LLMCallFailed, "saving conversation "+strconv.Quote(opts.ConversationID), serr)
			}
		}()
	}
	for _, m := range r.history {
		if m.Role == ptk.RoleAssistant {
			r.turn++
		}
	}
	r.mode = r.startMode()
	r.history = append(r.history, ptk.Message{Role: ptk.RoleUser, Content: prompt})
	return r.res, r.loop(ctx)
}

func (r *runner) setTools() error {
	o := &r.opts
	all := o.Tools
	if len(o.ToolNames) > 0 {
		if o.Registry == nil {
			return ptk.NewError(ptk.ToolNotFound, "tools named without a registry: set Options.Registry", nil)
		}
		named, err := o.Registry.Select(o.ToolNames...)
		if err != nil {
			return ptk.NewError(ptk.ToolNotFound, err.Error(), err)
		}
		all = append(all[:len(all):len(all)], named...)
	}
	reg, err := tool.NewRegistry(all...)
	if err != nil {
		return ptk.NewError(ptk.InvalidToolCall, err.Error(), err)
	}
	r.tools = make(map[string]ptk.Tool, len(all))
	limit := tool.Limit(max(o.MaxResultBytes, 0), max(o.MaxResultLines, 0))
	for _, t := range reg.Tools() {
		info := t.Info()
		r.tools[info.Name] = tool.Wrap(t, limit)
		r.infos = append(r.infos, info)
	}
	p, err := protocol.NewParser(r.infos, o.ParserOptions...)
	if err != nil {
		return ptk.NewError(ptk.InvalidToolCall, err.Error(), err)
	}
	r.parser = p
	return nil
}

func (r *runner) event(e Event) {
	if r.emit != nil {
		r.emit(e)
	}
}

func (r *runner) onError(err error) {
	if r.opts.OnError != nil {
		r.opts.OnError(err)
	}
}

// loop runs model calls until a final answer, a limit or a failure.
func (r *runner) loop(ctx context.Context) error {
	o := &r.opts
	for {
		if r.res.Iterations >= o.MaxIterations {
			return r.atLimit(ctx, ptk.MaxIterationsReached,
				fmt.Sprintf("the model made %d model calls (MaxIterations) without a final answer", o.MaxIterations))
		}
		if err := r.checkBudget(true); err != nil {
			return err
		}
		rep, err := r.ask(ctx, false)
		if err != nil {
			return err
		}
		if len(rep.attempts) > 0 {
			if err := r.checkBudget(false); err != nil {
				results := make([]ptk.Result, len(rep.attempts))
				for i, a := range rep.attempts {
					results[i] = ptk.Result{CallID: a.Call.ID, Tool: a.Call.Tool, IsError: true}
				}
				r.closeTurn(results, "the run's budget is spent")
				return err
			}
		}
		if len(rep.attempts) == 0 {
			r.res.Success, r.res.Content = true, rep.msg.Content
			r.event(Event{Kind: EventFinal, Iteration: r.res.Iterations, Text: rep.msg.Content})
			return nil
		}
		if err := r.answer(ctx, rep); err != nil {
			return err
		}
	}
}

// atLimit ends the run at a limit, or, with AnswerAtLimit, asks the model
// for a final answer first.
func (r *runner) atLimit(ctx context.Context, code ptk.Code, msg string) error {
	if !r.opts.AnswerAtLimit {
		return ptk.NewError(code, msg, nil)
	}
	r.history = append(r.history, ptk.Message{Role: ptk.RoleUser, Content: "You have reached the limit of this task (" + msg +
		"). Do not call any more tools. Answer now with what you have found so far, and say what is still missing."})
	rep, err := r.ask(ctx, true)
	if err != nil {
		return err
	}
	r.res.Success, r.res.Content, r.res.Limit = true, rep.msg.Content, code
	r.event(Event{Kind: EventFinal, Iteration: r.res.Iterations, Text: rep.msg.Content})
	return nil
}

// checkBudget ends the run when its budget (Options.MaxCost, MaxTokens) is
// spent; with ahead, also when the next model call cannot fit, since its
// prompt is at least as long as the last one.
func (r *runner) checkBudget(ahead bool) error {
	o := &r.opts
	used := r.res.Usage.TotalTokens()
	next := 0
	if ahead {
		next = r.lastPrompt
	}
	if o.MaxTokens > 0 {
		switch {
		case used >= o.MaxTokens:
			return ptk.NewError(ptk.BudgetExceeded, fmt.Sprintf("the run used %d tokens, its budget is %d (MaxTokens)", used, o.MaxTokens), nil)
		case used+next > o.MaxTokens:
			return ptk.NewError(ptk.BudgetExceeded, fmt.Sprintf("the next model call needs at least %d tokens (the last prompt's), and the run has %d left of its budget of %d (MaxTokens)", next, o.MaxTokens-used, o.MaxTokens), nil)
		}
	}
	if o.MaxCost > 0 {
		spent := r.res.Cost
		if spent >= o.MaxCost {
			return ptk.NewError(ptk.BudgetExceeded, fmt.Sprintf("the run cost $%.4f, its budget is $%.4f (MaxCost)", spent, o.MaxCost), nil)
		}
		if p, ok := r.price(); ok && next > 0 {
			if est := p.Cost(ptk.Usage{PromptTokens: next}); spent+est > o.MaxCost {
				return ptk.NewError(ptk.BudgetExceeded, fmt.Sprintf("the next model call costs at least $%.4f (the last prompt's %d tokens), and the run has $%.4f left of its budget of $%.4f (MaxCost)", est, next, o.MaxCost-spent, o.MaxCost), nil)
			}
		}
	}
	return nil
}

// price is the model's price, when it is known.
func (r *runner) price() (llm.Price, bool) {
	if p, ok := llm.PriceOf(r.opts.Model); ok {
		return p, true
	}
	if r.opts.Price != nil {
		return *r.opts.Price, true
	}
	return llm.Price{}, false
}

// ctxError turns a canceled or expired context into the run's error.
func ctxError(ctx context.Context, what string) error {
	err := context.Cause(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return ptk.NewError(ptk.Timeout, "the run timed out "+what, err)
	}
	return ptk.NewError(ptk.Canceled, "the run was canceled "+what, err)
}

// modelError classifies a failed model call.
func modelError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctxError(ctx, "while the model was answering")
	}
	return ptk.NewError(ptk.LLMCallFailed, "the model call failed: "+err.Error(), err)
}
