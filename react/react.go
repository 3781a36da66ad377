package react

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/turn"
	"github.com/ptkit/ptk/workflow"
)

// DefaultMaxSteps is the step limit when Options says 0.
const DefaultMaxSteps = 10

// ErrMaxSteps is returned by a run that reached its step limit without an
// answer; its Result holds what it did.
var ErrMaxSteps = errors.New("react: the step limit was reached without an answer")

// Options configure a run.
type Options struct {
	// Model thinks and acts.
	Model llm.Model
	// ModelName is sent as the request's model, for a model that serves
	// several.
	ModelName string
	// PTools are the ptools the model may call (as actions marked PTool);
	// Tools are other tools. Names must differ.
	PTools *ptool.Registry
	Tools  []ptk.Tool
	// MaxSteps counts model calls (DefaultMaxSteps when 0).
	MaxSteps int
	// Stream asks the model to stream its replies, when it can.
	Stream bool
	// Mode is where actions are read: turn.PTK (the default) in the text,
	// in whatever dialect the model writes; turn.Native in the provider's
	// native calls.
	Mode turn.Mode
	// Examples are solved trajectories shown to the model as PTP text
	// (few-shot demonstrations).
	Examples []*Trajectory
	// Instructions are added to the system prompt (domain knowledge).
	Instructions string
	// Echo, when set, is written each thought, action, observation and the
	// answer as they happen, a line each: "Thought 1: …", "Action 1:
	// name(k=v)", "Observation 1: …", "Answer: …".
	Echo io.Writer
	// Observer, when set, is given the finished trajectory (for a trace
	// store); the caller owns it.
	Observer func(*Trajectory)
	// OnStart and OnStep, when set, are told of a run as it goes, on the
	// run's goroutine (for a trace store that shows it live, as
	// trace/record does): OnStart when it begins, OnStep with each step
	// once it is done (its observation read). The trajectory is the run's
	// own: read it there, do not keep it.
	OnStart func(*Trajectory)
	OnStep  func(*Trajectory, Step)
	// Approver decides whether an action on a tool that is not read-only
	// (a shell command, a file edit) may run, as in agent.Options: a denied
	// action is a failed observation that says why, and the same action
	// again is not asked about again. Ptools and read-only tools run
	// without asking. With no Approver every action runs.
	Approver tool.Approver

	// ID is the trajectory's id; empty makes a random one. Now tells the
	// time; nil is the system clock. A durable-execution engine sets both,
	// so that a replayed run is the same run (package
	// github.com/ptkit/ptk/temporal).
	ID  string
	Now func() time.Time
}

// Result is what a run did.
type Result struct {
	Answer     string
	Success    bool
	Trajectory *Trajectory
	Usage      ptk.Usage
	Cost       float64
	Duration   time.Duration
}

//go:embed system.tmpl
var systemText string

var systemTemplate = template.Must(template.New("system").Parse(systemText))

// SystemPrompt returns the instructions a run gives the model before the
// protocol and the tools: the ReAct loop, the examples, the instructions.
func SystemPrompt(opts Options) (string, error) {
	data := struct {
		Examples     []string
		Instructions string
	}{Instructions: opts.Instructions}
	for _, ex := range opts.Examples {
		data.Examples = append(data.Examples, ex.PTP())
	}
	var b strings.Builder
	err := systemTemplate.Execute(&b, data)
	return b.String(), err
}

var answerRE = regexp.MustCompile(`(?is)<answer>(.*?)(?:</answer>|$)`)

// Run solves goal: the model thinks, acts and observes until it answers or
// MaxSteps model calls are made. It returns the Result, filled in as far as
// the run got, and an error when it did not end with an answer (ErrMaxSteps,
// the model's error, ctx's error) or could not start.
func Run(ctx context.Context, goal string, opts Options) (*Result, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	id := opts.ID
	if id == "" {
		id = workflow.NewID()
	}
	start := now()
	traj := &Trajectory{ID: id, Goal: goal, Steps: []Step{}, Start: start}
	res := &Result{Trajectory: traj}
	if opts.OnStart != nil {
		opts.OnStart(traj)
	}
	addStep := func(st Step) {
		traj.Steps = append(traj.Steps, st)
		if opts.OnStep != nil {
			opts.OnStep(traj, st)
		}
	}
	finish := func(err error) (*Result, error) {
		traj.Duration = now().Sub(start)
		res.Duration, res.Usage, res.Cost = traj.Duration, traj.Usage, traj.Cost
		res.Answer, res.Success = traj.FinalAnswer, traj.Success
		if err != nil && traj.Stopped == "" {
			switch {
			case errors.Is(err, ErrMaxSteps):
				traj.Stopped = "max_steps"
			case ctx.Err() != nil:
				traj.Stopped = "canceled"
			default:
				traj.Stopped = "error: " + err.Error()
			}
		}
		if err != nil && traj.Code == "" {
			traj.Code = stopCode(ctx, err)
		}
		if opts.Observer != nil {
			opts.Observer(traj)
		}
		return res, err
	}
	if opts.Model == nil {
		return finish(errors.New("react: no model"))
	}
	tools := map[string]ptk.Tool{}
	ptools := map[string]bool{}
	var infos []ptk.ToolInfo
	add := func(t ptk.Tool, isPTool bool) error {
		info := t.Info()
		if _, dup := tools[info.Name]; dup {
			return fmt.Errorf("react: two tools are called %q", info.Name)
		}
		tools[info.Name], ptools[info.Name] = t, isPTool
		infos = append(infos, info)
		return nil
	}
	if opts.PTools != nil {
		for _, t := range opts.PTools.Tools() {
			if err := add(t, true); err != nil {
				return finish(err)
			}
		}
	}
	for _, t := range opts.Tools {
		if err := add(t, false); err != nil {
			return finish(err)
		}
	}
	parser, err := protocol.NewParser(infos)
	if err != nil {
		return finish(fmt.Errorf("react: %w", err))
	}
	system, err := SystemPrompt(opts)
	if err != nil {
		return finish(fmt.Errorf("react: %w", err))
	}
	mode := opts.Mode
	if mode == "" {
		mode = turn.PTK
	}
	h := turn.NewHistory(mode, nil, system, infos)
	h.Append(ptk.Message{Role: ptk.RoleUser, Content: goal})
	max := opts.MaxSteps
	if max <= 0 {
		max = DefaultMaxSteps
	}
	echo := newEcho(opts.Echo)
	denied := map[string]string{} // reasons of denied actions, by tool and arguments
	for n := 1; n <= max; n++ {
		req := llm.Request{Model: opts.ModelName, Messages: h.Rendered()}
		if mode == turn.Native {
			req.Tools = infos
		}
		t := turn.Turn{Model: opts.Model, Parser: parser, Mode: mode, NoCalls: len(infos) == 0, Stream: opts.Stream,
			CallID: func(i int) string { return "call_" + strconv.Itoa(n) + "_" + strconv.Itoa(i+1) }}
		asked := time.Now()
		rep, err := t.Ask(ctx, req, nil)
		if rep != nil {
			traj.Usage = traj.Usage.Add(rep.Usage)
			traj.Cost += rep.Cost
			if rep.Model != "" {
				traj.Model = rep.Model
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				traj.Code = ptk.LLMCallFailed
			}
			return finish(err)
		}
		h.Append(rep.Message())
		// the parser keeps an answer's text in the prose, without its tags:
		// the answer is read from the reply as written
		text := rep.Text
		answer, hasAnswer := "", false
		if m := answerRE.FindStringSubmatch(rep.Raw); m != nil {
			answer, hasAnswer = strings.TrimSpace(m[1]), true
			if i := strings.LastIndex(text, answer); i >= 0 && answer != "" {
				text = text[:i] + text[i+len(answer):]
			}
		}
		thought := Thought{Content: strings.TrimSpace(text), Step: n}
		call := &ModelCall{Usage: rep.Usage, Cost: rep.Cost, Start: asked, Latency: time.Since(asked)}
		if thought.Content == "" {
			thought.Content = strings.TrimSpace(rep.Reasoning)
		}
		echo.thought(thought)
		if len(rep.Attempts) == 0 {
			addStep(Step{Thought: thought, Call: call})
			if !hasAnswer {
				// Neither an action nor an answer: not an answer. The
				// model is asked for one; a run that never gives one ends
				// at MaxSteps without success.
				h.Append(ptk.Message{Role: ptk.RoleUser, Content: noAnswer})
				echo.line("No action and no answer %d: asked for one", n)
				continue
			}
			traj.FinalAnswer, traj.Success = answer, true
			echo.answer(answer)
			return finish(nil)
		}
		for i, a := range rep.Attempts {
			st := Step{Thought: Thought{Step: n}}
			if i == 0 {
				st.Thought, st.Call = thought, call
			}
			st.Action = &Action{Name: a.Call.Tool, Args: a.Call.Args, PTool: ptools[a.Call.Tool]}
			echo.action(n, st.Action)
			var r ptk.Result
			var code ptk.Code
			switch {
			case a.Err != nil:
				r, code = ptk.Result{Content: a.Err.Message, IsError: true}, a.Err.Code
			default:
				var why string
				if why, err = approve(ctx, opts.Approver, tools[a.Call.Tool], ptools[a.Call.Tool], a.Call, denied); err != nil {
					addStep(st)
					return finish(err)
				}
				if why != "" {
					r, code = ptk.Result{Content: why, IsError: true}, ptk.ToolCallDenied
					break
				}
				r, st.Record, err = runTool(ctx, tools[a.Call.Tool], a.Call)
				if st.Record != nil {
					traj.Usage = traj.Usage.Add(st.Record.Usage)
					traj.Cost += st.Record.Cost
				}
				if err != nil {
					addStep(st)
					return finish(err)
				}
			}
			if r.IsError && code == "" {
				code = ptk.ToolExecutionFailed
			}
			st.Observation = &Observation{Result: r.Content, Success: !r.IsError, Code: code}
			echo.observation(n, st.Observation)
			addStep(st)
			h.Append(ptk.Message{Role: ptk.RoleTool, CallID: a.Call.ID, Tool: a.Call.Tool, Content: r.Content, IsError: r.IsError})
		}
	}
	echo.stopped(max)
	return finish(ErrMaxSteps)
}

// stopCode is the class of the error that stopped a run (Trajectory.Code).
func stopCode(ctx context.Context, err error) ptk.Code {
	if errors.Is(err, ErrMaxSteps) {
		return ptk.MaxIterationsReached
	}
	if c := ptk.CodeOf(err); c != "" {
		return c
	}
	if ctx.Err() != nil {
		return ptk.CodeOf(ctx.Err())
	}
	return ptk.InvalidConfig // it could not start: no model, two tools of one name
}

// noAnswer is what a model is told when its reply had neither an action
// nor an answer.
const noAnswer = "Your reply has no action and no answer. Call a tool, or, if you know the answer, write it between <answer> and </answer>."

// approve asks approver whether an action on t may run; it returns why not
// ("" when it may), or the error of an approver whose context ended. Ptools
// and read-only tools are not asked about; an action denied before (same
// tool, same arguments) is not asked about again.
func approve(ctx context.Context, approver tool.Approver, t ptk.Tool, isPTool bool, c ptk.Call, denied map[string]string) (string, error) {
	if approver == nil || t == nil || isPTool || t.Info().ReadOnly {
		return "", nil
	}
	var args bytes.Buffer
	if json.Compact(&args, c.Args) != nil {
		args.Write(c.Args)
	}
	key := c.Tool + "\x00" + args.String()
	if reason, ok := denied[key]; ok {
		return "Not run: this action was denied already, and asking again will not change that (" + reason + "). Do something else, or answer with what you have.", nil
	}
	v, err := approver.Approve(ctx, c, t.Info())
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		v = tool.Verdict{Reason: "the approval failed: " + err.Error()}
	}
	if v.Allow {
		return "", nil
	}
	if v.Reason == "" {
		v.Reason = "the action was not approved"
	}
	denied[key] = v.Reason
	return "Denied: " + v.Reason, nil
}

// runTool runs one action, with the record of a ptool's call: a panic is a
// failed observation; an error ends the run only when ctx is done, and is
// otherwise an observation too.
func runTool(ctx context.Context, t ptk.Tool, c ptk.Call) (r ptk.Result, rec *ptool.Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = ptk.Result{Content: fmt.Sprintf("the tool failed: %v", p), IsError: true}, nil
		}
	}()
	if t == nil {
		return ptk.Result{Content: "no tool " + strconv.Quote(c.Tool), IsError: true}, nil, nil
	}
	if f, ok := t.(ptool.Func); ok {
		r, rec, err = ptool.RunRecord(ctx, f, c.Args)
	} else {
		r, err = t.Run(ctx, c.Args)
	}
	if err != nil {
		if ctx.Err() != nil {
			return r, rec, ctx.Err()
		}
		return ptk.Result{Content: err.Error(), IsError: true}, rec, nil
	}
	return r, rec, nil
}

// echo writes the steps of a run as they happen.
type echo struct{ w io.Writer }

// newEcho returns what a run writes its steps to (Options.Echo), as
// "Thought 1: …", "Action 1: name(k=v)", "Observation 1: …" and "Answer: …"
// lines; a nil writer writes nothing.
func newEcho(w io.Writer) echo { return echo{w} }

func (e echo) line(format string, a ...any) {
	if e.w != nil {
		fmt.Fprintf(e.w, format+"\n", a...)
	}
}

func (e echo) thought(t Thought) {
	if t.Content != "" {
		e.line("Thought %d: %s", t.Step, oneLine(t.Content))
	}
}

func (e echo) action(n int, a *Action) {
	e.line("Action %d: %s(%s)", n, a.Name, callArgs(a.Args))
}

func (e echo) observation(n int, o *Observation) {
	if o.Success {
		e.line("Observation %d: %s", n, clip(oneLine(o.Result), 300))
	} else {
		e.line("Observation %d (failed): %s", n, clip(oneLine(o.Result), 300))
	}
}

func (e echo) answer(a string) { e.line("Answer: %s", oneLine(a)) }

func (e echo) stopped(max int) { e.line("Stopped: %d steps and no answer", max) }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
