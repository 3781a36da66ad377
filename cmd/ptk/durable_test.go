package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/internal/durable"
	"github.com/ptkit/ptk/tool"
)

// TestDurableEvents: a durable run's events become the agent.Events a
// local run reports, each call announced once (EventCallEnd) with its
// place in the model's reply before it waits, runs or is denied; events a
// worker should not send (a result without a call, a kind this ptk does
// not know) are left out, never a panic.
func TestDurableEvents(t *testing.T) {
	w := &ptk.Call{ID: "call_1", Tool: "write_file", Args: json.RawMessage(`{"path":"a"}`)}
	r := &ptk.Call{ID: "call_2", Tool: "read_file", Args: json.RawMessage(`{"path":"b"}`)}
	u := ptk.Usage{PromptTokens: 3, CompletionTokens: 2}
	in := []durable.Event{
		{Kind: "model", Iteration: 1},
		{Kind: "text", Iteration: 1, Text: "let me"},
		{Kind: "call", Iteration: 1, Call: w},
		{Kind: "call", Iteration: 1, Call: r},
		{Kind: "model_done", Iteration: 1, Usage: &u, Cost: 0.5},
		{Kind: "waiting", Call: w},
		{Kind: "tool", Iteration: 1, Call: w},
		{Kind: "result", Iteration: 1, Call: w, Text: "done"},
		{Kind: "tool", Iteration: 1, Call: r},
		{Kind: "result", Iteration: 1, Call: r, Text: "no such file", IsError: true},
		{Kind: "result", Iteration: 1, Text: "a result of no call"},
		{Kind: "result", Iteration: 1, Call: &ptk.Call{ID: "call_9", Tool: "nope"}, Text: "no tool nope", IsError: true, Code: ptk.ToolNotFound},
		{Kind: "from-the-future", Iteration: 1},
		{Kind: "model", Iteration: 2},
		{Kind: "denied", Iteration: 2, Call: &ptk.Call{ID: "call_3", Tool: "bash"}, Text: "no"},
		{Kind: "answer", Iteration: 2, Text: "ok"},
	}
	c := &eventConverter{}
	var got []string
	for _, e := range in {
		for _, ev := range c.events(e) {
			s := fmt.Sprintf("%d/%d", ev.Kind, ev.Iteration)
			if ev.Call != nil {
				s += fmt.Sprintf(" %s#%d", ev.Call.ID, ev.Index)
			}
			if ev.ToolResult != nil {
				s += fmt.Sprintf(" %q err=%v", ev.ToolResult.Content, ev.ToolResult.IsError)
			}
			if ev.Text != "" {
				s += " " + ev.Text
			}
			if ev.Err != nil {
				s += " err=" + string(ev.Err.Code)
			}
			if ev.Kind == agent.EventModelDone {
				s += fmt.Sprintf(" %d $%g", ev.Usage.PromptTokens, ev.Cost)
			}
			got = append(got, s)
		}
	}
	k := func(k agent.EventKind) int { return int(k) }
	want := []string{
		fmt.Sprintf("%d/1", k(agent.EventIteration)),
		fmt.Sprintf("%d/1 let me", k(agent.EventText)),
		fmt.Sprintf("%d/1 call_1#0", k(agent.EventCallEnd)),
		fmt.Sprintf("%d/1 call_2#1", k(agent.EventCallEnd)),
		fmt.Sprintf("%d/1 3 $0.5", k(agent.EventModelDone)),
		fmt.Sprintf("%d/1 call_1#0", k(agent.EventToolStart)),
		fmt.Sprintf("%d/1 call_1#0 \"done\" err=false", k(agent.EventToolResult)),
		fmt.Sprintf("%d/1 call_2#1", k(agent.EventToolStart)),
		fmt.Sprintf("%d/1 call_2#1 \"no such file\" err=true", k(agent.EventToolResult)),
		fmt.Sprintf("%d/1 call_9#2 err=TOOL_NOT_FOUND", k(agent.EventCallEnd)),
		fmt.Sprintf("%d/2", k(agent.EventIteration)),
		fmt.Sprintf("%d/2 call_3#0", k(agent.EventCallEnd)),
		fmt.Sprintf("%d/2 call_3#0 no", k(agent.EventDenied)),
		fmt.Sprintf("%d/2 ok", k(agent.EventFinal)),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDurableDecide: a call the run waits for is answered by the turn's
// approver (its verdict and reason go to the run); without an approver it
// is denied, and a turn canceled while asking sends no decision (the run
// is being canceled).
func TestDurableDecide(t *testing.T) {
	d := &durableRunner{}
	call := ptk.Call{ID: "call_1", Tool: "bash", Args: json.RawMessage(`{"command":"rm -rf /"}`)}
	no := tool.ApproverFunc(func(context.Context, ptk.Call, ptk.ToolInfo) (tool.Verdict, error) {
		return tool.Verdict{Reason: "not that"}, nil
	})
	if got := d.decide(context.Background(), agent.Options{Approver: no}, call); got != (durable.Command{CallID: "call_1", Reason: "not that"}) {
		t.Errorf("denied: %+v", got)
	}
	yes := tool.ApproverFunc(func(context.Context, ptk.Call, ptk.ToolInfo) (tool.Verdict, error) {
		return tool.Verdict{Allow: true}, nil
	})
	if got := d.decide(context.Background(), agent.Options{Approver: yes}, call); got != (durable.Command{CallID: "call_1", Allow: true}) {
		t.Errorf("allowed: %+v", got)
	}
	if got := d.decide(context.Background(), agent.Options{}, call); got.Allow || got.CallID != "call_1" || got.Reason == "" {
		t.Errorf("no approver: %+v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	asking := tool.ApproverFunc(func(ctx context.Context, _ ptk.Call, _ ptk.ToolInfo) (tool.Verdict, error) {
		cancel()
		return tool.Verdict{}, ctx.Err()
	})
	if got := d.decide(ctx, agent.Options{Approver: asking}, call); got != (durable.Command{}) {
		t.Errorf("canceled while asking: %+v", got)
	}
}

// TestDurableUsage: the flags of the workers are refused with --temporal
// in ptk run's JSON mode, ptk chat and ptk acp, saying whose they are.
func TestDurableUsage(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, args := range [][]string{
		{"run", "--temporal", "127.0.0.1:1", "--output-format", "json", "--workspace", "/", "hi"},
		{"run", "--temporal", "127.0.0.1:1", "--json", "--sandbox", "hi"},
		{"acp", "--temporal", "127.0.0.1:1", "--base-url", "http://x"},
	} {
		code, _, errOut := runPTK(t, "", args...)
		if code != 2 || !strings.Contains(errOut, "ptk worker") {
			t.Errorf("ptk %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}
	code, _, errOut := runPTK(t, "", "run", "--temporal", "127.0.0.1:1", "--json", "--output-schema", "s.json", "hi")
	if code != 2 || !strings.Contains(errOut, "--output-schema") {
		t.Errorf("--output-schema: exit %d: %s", code, errOut)
	}
}
