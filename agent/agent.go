package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/turn"
)

// Run runs the loop over a conversation: the model answers the last turn of
// history (usually the user's; see Prompt), calling tools until it gives a
// final answer or a limit is reached. It returns the Result, and an error (a
// *ptk.Error with the run's Code) when the run failed; the Result is filled
// in either way. A mistake in the run's setup (no model, two tools of one
// name, a schema that does not compile) fails with ptk.InvalidConfig before
// anything runs.
func Run(ctx context.Context, history []ptk.Message, opts Options) (*Result, error) {
	return run(ctx, history, opts, nil)
}

// Stream runs the loop like Run and reports every step as an Event: the one
// way to watch a run. The last event is EventDone, with the Result, paired
// with the run's error. Breaking out of the loop early cancels the run.
func Stream(ctx context.Context, history []ptk.Message, opts Options) iter.Seq2[Event, error] {
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
		res, err := run(ctx, history, opts, emit)
		if !stopped {
			yield(Event{Kind: EventDone, Run: res}, err)
		}
	}
}

// Prompt is the history of a run that answers one prompt: a single user
// message.
func Prompt(text string) []ptk.Message {
	return []ptk.Message{{Role: ptk.RoleUser, Content: text}}
}

// runner is the state of one run. Only the run's goroutine touches it; tools
// run on other goroutines but report back through channels.
type runner struct {
	opts   Options
	rt     Runtime
	emit   func(Event)
	tools  map[string]ptk.Tool
	infos  []ptk.ToolInfo
	parser *protocol.Parser
	mode   Mode
	res    *Result
	// history is the conversation without the system prompt, rendered for
	// the model as it grows.
	history *turn.History
	// turn numbers the assistant turns of the conversation, for call ids.
	turn int
	// recent holds the keys of the latest answered read-only calls, for
	// duplicates; lastChange the key of the latest call that may have
	// changed something, for repeats.
	recent     []string
	lastChange string
	// warned counts the duplicates and repeats the model was told of.
	warned int
	// denied holds the reasons of the calls the Approver denied, by key: the
	// same call again is not asked about again.
	denied map[string]string
	// cache holds results of cacheable calls by key.
	cache map[string]ptk.Result
	// lastPrompt is the prompt tokens of the last model call: the next
	// prompt is at least as long (unless the conversation is compacted).
	lastPrompt int

	// window is the model's context window (unknown: Tokens 0); ratio
	// corrects the token estimate by what the provider counted; sent is
	// the uncorrected estimate of the last request sent.
	window           llm.Window
	ratio            float64
	sent             int
	nativeToolTokens int
	// files are the files the conversation's calls named (true: changed),
	// in fileOrder; filesSeen counts the messages looked at for them.
	files     map[string]bool
	fileOrder []string
	filesSeen int
	// task and latest are the conversation's first and latest requests
	// seen by a compaction.
	task, latest *ptk.Message
	// keep, when set, is the tokens a compaction keeps as they were
	// (Compact without a window).
	keep int
	// loaded counts the history's messages that came from the Store.
	loaded int
}

func run(ctx context.Context, input []ptk.Message, opts Options, emit func(Event)) (res *Result, err error) {
	opts.defaults()
	r := &runner{opts: opts, emit: emit, res: &Result{}, rt: opts.Runtime}
	if r.rt == nil {
		r.rt = local{&r.opts}
	}
	start := r.rt.Now()
	defer func() {
		res.Duration = r.rt.Now().Sub(start)
		res.Mode = r.mode
		res.TotalToolCalls = len(res.ToolCalls)
		if r.history != nil {
			res.Messages = r.history.Messages()
		}
		if err != nil {
			var pe *ptk.Error
			if !errors.As(err, &pe) {
				pe = ptk.NewError(ptk.CodeOf(err), "", err)
			}
			res.Error, res.Success, err = pe, false, pe
		}
	}()
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	if err := r.configure(ctx); err != nil {
		return r.res, err
	}
	var earlier []ptk.Message
	if opts.ConversationID != "" {
		h, lerr := opts.Store.Load(ctx, opts.ConversationID)
		if lerr != nil {
			return r.res, ptk.NewError(ptk.LLMCallFailed, "loading conversation "+strconv.Quote(opts.ConversationID), lerr)
		}
		earlier = h
		defer func() {
			// The run's exchange goes after what it loaded, and after what
			// runs of the same conversation added meanwhile.
			if r.history == nil {
				return
			}
			added := r.history.Messages()[r.loaded:]
			if serr := opts.Store.Append(context.WithoutCancel(ctx), opts.ConversationID, earlier, added); serr != nil && err == nil {
				err = ptk.NewError(ptk.LLMCallFailed, "saving conversation "+strconv.Quote(opts.ConversationID)+": "+serr.Error(), serr)
			}
		}()
	}
	r.start(earlier, input)
	r.res.Window = r.window
	return r.res, r.loop(ctx)
}

// start makes the run's history: the earlier conversation, then the run's
// input.
func (r *runner) start(earlier, input []ptk.Message) {
	instructions := []string{r.opts.Instructions}
	for _, m := range input {
		if m.Role == ptk.RoleSystem {
			instructions = append(instructions, m.Content)
		}
	}
	r.mode = r.startMode()
	r.history = turn.NewHistory(r.turnMode(), r.opts.Formatter, joinText(instructions), r.infos)
	r.history.Append(earlier...)
	r.loaded = len(r.history.Messages())
	r.history.Append(input...)
	for _, m := range r.history.Messages() {
		if m.Role == ptk.RoleAssistant {
			r.turn++
		}
	}
}

// joinText joins the texts that are not blank, with blank lines.
func joinText(texts []string) string {
	var out []string
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n\n")
}

// configure checks the run's setup, finds the model's context window and
// prepares its tools: a mistake there is ptk.InvalidConfig, found before
// anything runs.
func (r *runner) configure(ctx context.Context) error {
	o := &r.opts
	invalid := func(msg string, err error) error { return ptk.NewError(ptk.InvalidConfig, msg, err) }
	if o.Model == nil {
		return invalid("no model: set Options.Model", nil)
	}
	if o.CompactAt <= 0 || o.CompactAt > 1 {
		return invalid(fmt.Sprintf("CompactAt %g is not a fill of the window between 0 and 1 (default %g)", o.CompactAt, DefaultCompactAt), nil)
	}
	r.setupWindow(ctx)
	if o.MaxResultBytes == 0 {
		o.MaxResultBytes = resultCap(r.window.Tokens)
	}
	if o.ConversationID != "" && o.Store == nil {
		return invalid("a ConversationID needs a Store to keep the conversation in: set Options.Store (agent.MemoryStore keeps it in memory)", nil)
	}
	switch o.Mode {
	case ModeAuto, ModePTK, ModeNative:
	default:
		return invalid(fmt.Sprintf("unknown mode %q: use %q, %q or %q", o.Mode, ModeAuto, ModePTK, ModeNative), nil)
	}
	reg, err := tool.NewRegistry(o.Tools...)
	if err != nil {
		return invalid(err.Error(), err)
	}
	r.tools = make(map[string]ptk.Tool, len(o.Tools))
	limit := tool.Limit(max(o.MaxResultBytes, 0), max(o.MaxResultLines, 0))
	for _, t := range reg.Tools() {
		info := t.Info()
		r.tools[info.Name] = tool.Wrap(t, limit)
		r.infos = append(r.infos, info)
	}
	p, err := protocol.NewParser(r.infos, o.ParserOptions...)
	if err != nil {
		return invalid(err.Error(), err)
	}
	r.parser = p
	return nil
}

func (r *runner) event(e Event) {
	if r.emit != nil {
		r.emit(e)
	}
}

// loop runs model calls until a final answer, a limit or a failure.
func (r *runner) loop(ctx context.Context) error {
	o := &r.opts
	refused := 0 // final answers Answer refused
	looped := 0  // repetition loops in a row
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
		if len(rep.Attempts) > 0 {
			if err := r.checkBudget(false); err != nil {
				results := make([]ptk.Result, len(rep.Attempts))
				for i, a := range rep.Attempts {
					results[i] = ptk.Result{CallID: a.Call.ID, Tool: a.Call.Tool, IsError: true}
				}
				r.closeTurn(results, "the run's budget is spent")
				return err
			}
		}
		if len(rep.Attempts) == 0 {
			text := rep.Text
			if o.Answer != nil {
				var err error
				if text, err = o.Answer(rep.Text); err != nil {
					if refused++; refused > o.MaxAnswerRetries {
						return ptk.NewError(ptk.ParseError, fmt.Sprintf("the model's final answer could not be used after %d tries: %v", refused, err), err)
					}
					r.history.Append(ptk.Message{Role: ptk.RoleUser, Content: "Your answer cannot be used as it is: " + err.Error() + "\nGive your final answer again, in the form asked for."})
					continue
				}
			}
			r.res.Success, r.res.Content = true, text
			r.event(Event{Kind: EventFinal, Iteration: r.res.Iterations, Text: rep.Text})
			return nil
		}
		if loop := repetitionLoop(rep); loop != nil {
			// The model's mistake: none of the reply's calls runs. It is
			// told why and asked again, once; a second loop in a row ends
			// the run.
			if looped++; looped > 1 {
				results := make([]ptk.Result, len(rep.Attempts))
				for i, a := range rep.Attempts {
					results[i] = ptk.Result{CallID: a.Call.ID, Tool: a.Call.Tool, IsError: true}
				}
				r.closeTurn(results, "the run ended: the model's reply was a repetition loop again")
				perr := ptk.NewError(ptk.DuplicateToolCall, fmt.Sprintf("the model's replies were repetition loops %d times in a row, and none of their calls was run: %s", looped, strings.TrimPrefix(loop.Message, "Not run: ")), loop)
				perr.Tool = loop.Tool
				return perr
			}
		} else {
			looped = 0
		}
		if err := r.answer(ctx, rep); err != nil {
			return err
		}
	}
}

// repetitionLoop is the error of a reply the parser judged a repetition
// loop (protocol.DiagRepetitionLoop: it wrote calls until the token limit,
// or one call over and over), or nil.
func repetitionLoop(rep *turn.Reply) *ptk.Error {
	if rep.Native || len(rep.Attempts) == 0 {
		return nil
	}
	if e := rep.Attempts[0].Err; e != nil && e.Code == ptk.DuplicateToolCall {
		return e
	}
	return nil
}

// atLimit ends the run at a limit, or, with AnswerAtLimit, asks the model
// for a final answer first.
func (r *runner) atLimit(ctx context.Context, code ptk.Code, msg string) error {
	if !r.opts.AnswerAtLimit {
		return ptk.NewError(code, msg, nil)
	}
	r.history.Append(ptk.Message{Role: ptk.RoleUser, Content: "You have reached the limit of this task (" + msg +
		"). Do not call any more tools. Answer now with what you have found so far, and say what is still missing."})
	rep, err := r.ask(ctx, true)
	if err != nil {
		return err
	}
	r.res.Success, r.res.Content, r.res.Limit = true, rep.Text, code
	r.event(Event{Kind: EventFinal, Iteration: r.res.Iterations, Text: rep.Text})
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
