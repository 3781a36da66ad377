package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/internal/durable"
	"github.com/ptkit/ptk/internal/term"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/tool"
)

// A durable turn is an agent run on ptk's Temporal workers, which ptk
// drives through ptk-temporal's line protocol ('ptk-temporal run
// --machine', internal/durable): the run's events come back as the
// agent.Events a local run reports, a call that waits for approval is
// asked of the turn's own approver (ptk chat's screen, ACP's
// session/request_permission, --yes) and the answer goes to the run as its
// signal, and canceling the turn's context cancels the run. So ptk chat,
// ptk acp and ptk run's JSON output show a durable run with the code that
// shows a local one, and ptk never links the Temporal SDK.
type durableRunner struct {
	// args are ptk-temporal's arguments before --machine: "run", the
	// server, the run's flags.
	args []string
	// cancelWait bounds the wait for a canceled run's result.
	cancelWait time.Duration
	// sendPreset sends the approval mode of the turn's Approver (a
	// presetApprover: ptk chat's, which shift+tab changes, an ACP
	// session's) with each turn, in place of the workers' --approval: what
	// runs, what is denied, and what waits for approval.
	sendPreset bool
	// started, when set, is told each run's id when it starts.
	started func(id string)
	// follow makes a canceled turn stop following the run, which goes on
	// (ptk run: Ctrl-C stops following), instead of canceling it.
	follow bool
}

// newDurableRunner is the runner of turns with ptk-temporal's run flags
// (--temporal=HOST:PORT and the run's).
func newDurableRunner(flags []string) *durableRunner {
	return &durableRunner{args: append([]string{"run"}, flags...), cancelWait: 30 * time.Second}
}

// errDurable marks a durable turn that could not be started or followed.
var errDurable = errors.New("durable run")

// Stream runs history's last turn on the workers, as agent.Stream runs it
// here: opts' Approver answers the calls that wait for approval, and its
// Tools (when the workers' have the same names) say what a call acts on;
// the model, the tools and the limits are the workers'.
func (d *durableRunner) Stream(ctx context.Context, history []ptk.Message, opts agent.Options) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		fail := func(err error) {
			res := &agent.Result{Messages: history, Error: ptk.NewError(ptk.CodeOf(err), err.Error(), err)}
			if res.Error.Code == "" {
				res.Error.Code = ptk.InvalidConfig
			}
			yield(agent.Event{Kind: agent.EventDone, Run: res}, res.Error)
		}
		bin, err := temporalBinary()
		if err != nil {
			fail(err)
			return
		}
		start, err := json.Marshal(durable.Start{Messages: history})
		if err != nil {
			fail(err)
			return
		}
		// not CommandContext: a canceled turn cancels the run, and its
		// result still comes
		args := append(append([]string{}, d.args...), "--machine")
		if p, ok := opts.Approver.(presetApprover); ok && d.sendPreset {
			args = append(args, "--approval="+string(p.ApprovalPreset()))
		}
		c := exec.Command(bin, args...)
		stdin, err := c.StdinPipe()
		if err != nil {
			fail(err)
			return
		}
		stdout, err := c.StdoutPipe()
		if err != nil {
			fail(err)
			return
		}
		var stderr tailBuffer
		c.Stderr = &stderr
		if err := c.Start(); err != nil {
			fail(fmt.Errorf("ptk-temporal: %w", err))
			return
		}
		w := &commandWriter{w: stdin}
		w.write(start)
		defer func() {
			stdin.Close()
			done := make(chan struct{})
			go func() { c.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				c.Process.Kill()
				<-done
			}
		}()
		// a canceled turn cancels the run; when its result does not come in
		// time, ptk stops waiting
		stopWatch := make(chan struct{})
		defer close(stopWatch)
		go func() {
			select {
			case <-ctx.Done():
				if d.follow {
					stdin.Close() // ptk-temporal stops following
					return
				}
				w.command(durable.Command{Cancel: true})
			case <-stopWatch:
				return
			}
			select {
			case <-time.After(d.cancelWait):
				stdin.Close() // ptk-temporal stops following
			case <-stopWatch:
			}
		}()

		conv := &eventConverter{}
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), durable.MaxLine)
		for sc.Scan() {
			var l durable.Line
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				fail(fmt.Errorf("%w: ptk-temporal wrote a line that is not the protocol's: %v", errDurable, err))
				return
			}
			switch l.Type {
			case durable.LineRun:
				conv.id = l.ID
				if d.started != nil {
					d.started(l.ID)
				}
			case durable.LineEvent:
				if l.Event == nil {
					continue
				}
				for _, e := range conv.events(*l.Event) {
					if !yield(e, nil) {
						return
					}
				}
				if l.Event.Kind == durable.KindWaiting && l.Event.Call != nil {
					w.command(d.decide(ctx, opts, *l.Event.Call))
				}
			case durable.LineResult:
				if l.Output == nil {
					fail(fmt.Errorf("%w: ptk-temporal's result has no output", errDurable))
					return
				}
				res := l.Output.Result()
				var err error
				if res.Error != nil {
					err = res.Error
				}
				yield(agent.Event{Kind: agent.EventDone, Run: res}, err)
				return
			case durable.LineError:
				err := fmt.Errorf("%w: %s", errDurable, l.Error)
				if l.Code != "" {
					err = ptk.NewError(l.Code, l.Error, errDurable)
				}
				fail(err)
				return
			}
		}
		if ctx.Err() != nil && d.follow {
			// Ctrl-C stopped following; the run goes on
			err := ptk.NewError(ptk.Canceled, "stopped following the durable run "+conv.id+", which goes on: ptk runs status "+conv.id, ctx.Err())
			yield(agent.Event{Kind: agent.EventDone, Run: &agent.Result{Messages: history, Error: err}}, err)
			return
		}
		msg := strings.TrimSpace(stderr.String())
		if err := sc.Err(); err != nil {
			msg = err.Error()
		}
		if msg == "" {
			msg = "it ended without the run's result"
		}
		id := ""
		if conv.id != "" {
			id = " (the run " + conv.id + " may go on: ptk runs status " + conv.id + ")"
		}
		fail(fmt.Errorf("%w: ptk-temporal: %s%s", errDurable, msg, id))
	}
}

// presetApprover is an Approver that says its approval mode.
type presetApprover interface {
	ApprovalPreset() tool.Preset
}

var _ presetApprover = (*cliApprover)(nil)

// ApprovalPreset is the approval preset now (ptk chat's shift+tab changes
// it).
func (a *cliApprover) ApprovalPreset() tool.Preset { return a.getPreset() }

// decide asks the turn's approver about a call the run waits for.
func (d *durableRunner) decide(ctx context.Context, opts agent.Options, call ptk.Call) durable.Command {
	if opts.Approver == nil {
		return durable.Command{CallID: call.ID, Reason: "no one was there to approve the call"}
	}
	info := ptk.ToolInfo{Name: call.Tool}
	for _, t := range opts.Tools {
		if t.Info().Name == call.Tool {
			info = t.Info()
		}
	}
	v, err := opts.Approver.Approve(ctx, call, info)
	if err != nil {
		if ctx.Err() != nil {
			// the turn was canceled: the run is, and the call waits no more
			return durable.Command{}
		}
		return durable.Command{CallID: call.ID, Reason: "the approval failed: " + err.Error()}
	}
	return durable.Command{CallID: call.ID, Allow: v.Allow, Reason: v.Reason}
}

// eventConverter turns a durable run's events into the agent.Events a
// local run reports: each call is announced (EventCallEnd, with its place
// in the model's reply) once, before it waits, runs or is denied.
type eventConverter struct {
	id        string
	iteration int
	index     map[string]int
}

func (c *eventConverter) events(e durable.Event) []agent.Event {
	var out []agent.Event
	ev := agent.Event{Iteration: e.Iteration}
	if ev.Iteration == 0 {
		ev.Iteration = c.iteration
	}
	if c.index == nil {
		c.index = map[string]int{}
	}
	if e.Call != nil && e.Kind != durable.KindModel {
		call := *e.Call
		ev.Call = &call
		i, ok := c.index[call.ID]
		if !ok {
			i = len(c.index)
			c.index[call.ID] = i
			end := agent.Event{Kind: agent.EventCallEnd, Iteration: ev.Iteration, Index: i, Call: ev.Call}
			if e.Kind == durable.KindResult && e.IsError && e.Code != "" {
				// a call that could not run as written: it ends here
				end.Err = ptk.NewError(e.Code, e.Text, nil)
				return append(out, end)
			}
			out = append(out, end)
		}
		ev.Index = i
	}
	switch e.Kind {
	case durable.KindModel:
		c.iteration, c.index = e.Iteration, map[string]int{}
		ev.Kind = agent.EventIteration
	case durable.KindModelDone:
		ev.Kind, ev.Cost = agent.EventModelDone, e.Cost
		if e.Usage != nil {
			ev.Usage = *e.Usage
		}
	case durable.KindTool:
		ev.Kind = agent.EventToolStart
	case durable.KindResult:
		if ev.Call == nil {
			return out
		}
		ev.Kind = agent.EventToolResult
		ev.ToolResult = &ptk.Result{CallID: ev.Call.ID, Content: e.Text, IsError: e.IsError}
	case durable.KindDenied:
		ev.Kind, ev.Text = agent.EventDenied, e.Text
	case durable.KindDuplicate:
		ev.Kind, ev.Text = agent.EventDuplicate, e.Text
	case durable.KindSwitch:
		ev.Kind, ev.Text = agent.EventModeSwitch, e.Text
	case durable.KindText:
		ev.Kind, ev.Text = agent.EventText, e.Text
	case durable.KindAnswer:
		ev.Kind, ev.Text = agent.EventFinal, e.Text
	default: // call and waiting (the call was announced), and kinds to come
		return out
	}
	return append(out, ev)
}

// commandWriter writes the protocol's lines to ptk-temporal, one at a time.
type commandWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *commandWriter) write(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w.Write(append(b, '\n'))
}

func (w *commandWriter) command(c durable.Command) {
	if c == (durable.Command{}) {
		return
	}
	b, _ := json.Marshal(c)
	w.write(b)
}

// tailBuffer keeps the last few KB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

const tailSize = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.Write(p)
	if t.b.Len() > 2*tailSize {
		rest := t.b.Bytes()[t.b.Len()-tailSize:]
		t.b = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

// runDurable is ptk run --temporal with --output-format json or
// stream-json: the run on the workers, driven through ptk-temporal's line
// protocol, its events and result written as ptk run writes a local run's
// (the same writers), and the calls it waits for answered as ptk run
// answers them (--yes, --approval, the policy file, a terminal's
// question; else denied, and in the result's denied list). Ctrl-C stops
// following the run, not the run.
func runDurable(cmd *cobra.Command, f runFlags, args []string) error {
	format, err := outputFormat(cmd, f)
	if err != nil {
		return err
	}
	if f.outputSchema != "" {
		return usagef("--output-schema is not taken with --temporal")
	}
	flags, err := f.temporal.runArgs(cmd, []string{"model", "mode", "tools", "max-iterations", "max-tool-calls", "max-cost", "max-tokens", "timeout"},
		[]string{"json", "output-format", "yes", "approval", "policy"})
	if err != nil {
		return err
	}
	prompt, err := promptFrom(cmd.InOrStdin(), args, "run needs a prompt", `ptk run --temporal localhost:7233 --output-format json "What does this repository do?"`)
	if err != nil {
		return err
	}
	preset, err := approvalPreset(cmd, f.approval, f.yes)
	if err != nil {
		return err
	}
	policy, policyFile, err := loadPolicy(cmd, f.policy)
	if err != nil {
		return usageError{err}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	stdin, stderr, out := cmd.InOrStdin(), cmd.ErrOrStderr(), cmd.OutOrStdout()
	approver := &cliApprover{policy: policy, policyFile: policyFile, preset: preset,
		ask: isTerminal(stdin) && isTerminal(stderr), in: bufio.NewReader(stdin), out: stderr}
	opts := agent.Options{ModelName: f.model, Mode: agent.Mode(f.mode), Approver: approver}
	var sw *streamWriter
	iteration := 0
	if format == formatStreamJSON {
		sw = newStreamWriter(out)
		// the workspace and the tools are the workers' (their names when
		// --tools names them)
		sw.write(streamInit{Type: "init", Version: streamVersion, Model: f.model, Mode: f.mode, Tools: append([]string{}, splitList(f.tools)...)})
		approver.asked = func(c ptk.Call) { sw.approval("asked", iteration, -1, &c, "") }
	}
	r := newDurableRunner(flags)
	r.follow = true
	r.started = func(id string) { fmt.Fprintf(stderr, "ptk: run %s\n", term.Text(id)) }
	var res *agent.Result
	var runErr error
	for e, err := range r.Stream(ctx, agent.Prompt(prompt), opts) {
		iteration = e.Iteration
		if sw != nil {
			sw.event(e)
		}
		if e.Kind == agent.EventDone {
			res, runErr = e.Run, err
		}
	}
	exit := runExitCode(runErr)
	if err := writeResult(out, sw, format, res, nil, exit, runErr); err != nil {
		return err
	}
	switch {
	case runErr == nil:
		return nil
	case exit != exitRunFailed:
		return exitError{exit, runErr}
	}
	return runErr
}

// prepareDurableChat is ptk chat --temporal's setup: the turns run on the
// workers, with their model, tools and workspace; here are the approval
// (preset, policy), the limits of each turn, and the workspace the
// conversations are kept with and @mentions read from.
func prepareDurableChat(cmd *cobra.Command, f runFlags) (*runSetup, error) {
	flags, err := f.temporal.runArgs(cmd, []string{"model", "mode", "tools", "max-iterations", "max-tool-calls", "max-cost", "max-tokens", "timeout"},
		[]string{"yes", "approval", "policy", "workspace", "continue", "conversation", "trace-db", "no-trace", "no-checkpoint"})
	if err != nil {
		return nil, err
	}
	mode, err := checkRunFlags(f)
	if err != nil {
		return nil, err
	}
	preset, err := approvalPreset(cmd, f.approval, f.yes)
	if err != nil {
		return nil, err
	}
	policy, policyFile, err := loadPolicy(cmd, f.policy)
	if err != nil {
		return nil, usageError{err}
	}
	root, err := filepath.Abs(f.workspace)
	if err != nil {
		return nil, usagef("--workspace %s: %v", f.workspace, err)
	}
	opts := agent.Options{Model: workersModel{}, ModelName: f.model, Mode: mode,
		MaxIterations: f.maxIterations, MaxToolCalls: f.maxToolCalls, MaxCost: f.maxCost, MaxTokens: f.maxTokens, Timeout: f.timeout}
	return &runSetup{opts: opts, policy: policy, policyFile: policyFile, preset: preset, workspace: root, model: f.model,
		checkpointErr: errors.New("the turns change the workers' workspace, where ptk chat takes no checkpoints: /undo goes back in the conversation only"),
		close:         func() {}, runner: newDurableRunner(flags)}, nil
}

// workersModel stands for the model of a durable chat, which is the
// workers': what would call it here (/compact) is told so.
type workersModel struct{}

var _ llm.Model = workersModel{}

func (workersModel) Generate(context.Context, llm.Request) (*llm.Response, error) {
	return nil, ptk.NewError(ptk.InvalidConfig, "the model of a durable chat (--temporal) is the workers': it is not called from here", nil)
}
