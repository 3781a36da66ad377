package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm/llmtest"
)

// stepRuntime is a Runtime whose clock moves a second each time it is read
// and that runs the tools itself, one group at a time, remembering the
// groups it was given.
type stepRuntime struct {
	now    time.Time
	groups [][]string
}

func (s *stepRuntime) Now() time.Time {
	s.now = s.now.Add(time.Second)
	return s.now
}

func (s *stepRuntime) RunTools(ctx context.Context, calls []*ToolRun) {
	var names []string
	for _, c := range calls {
		names = append(names, c.Call.ID+":"+c.Call.Tool)
		c.Result, c.Err = c.Tool.Run(ctx, c.Call.Args)
		c.Tries, c.Duration = 1, time.Minute
	}
	s.groups = append(s.groups, names)
}

// TestARuntimeRunsTheToolsAndTellsTheTime: with Options.Runtime, the loop
// runs no tool itself and reads no clock of its own: calls to read-only
// tools go to the runtime together, a call that changes something alone,
// in call order, and the run's durations are the runtime's.
func TestARuntimeRunsTheToolsAndTellsTheTime(t *testing.T) {
	read := simpleTool("read", true, func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
		return ptk.Result{Content: "read " + string(args)}, nil
	})
	write := simpleTool("write", false, func(context.Context, json.RawMessage) (ptk.Result, error) {
		return ptk.Result{Content: "written"}, nil
	})
	m := llmtest.New(
		llmtest.Text(ptkCall("read", `{"x": "a"}`)+ptkCall("read", `{"x": "b"}`)+ptkCall("write", `{"x": "c"}`)+ptkCall("read", `{"x": "d"}`)),
		llmtest.Text("done"),
	)
	rt := &stepRuntime{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	res, err := Run(context.Background(), Prompt("go"), Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{read, write}, Runtime: rt})
	if err != nil || res.Content != "done" {
		t.Fatalf("err %v, content %q", err, res.Content)
	}
	got := make([]string, len(rt.groups))
	for i, g := range rt.groups {
		got[i] = strings.Join(g, " ")
	}
	want := []string{"call_1_1:read call_1_2:read", "call_1_3:write", "call_1_4:read"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("groups %q, want %q", got, want)
	}
	// The clock was read at the start and at the end, and nowhere else.
	if res.Duration != time.Second {
		t.Errorf("duration %v, want the runtime's 1s", res.Duration)
	}
	if len(res.ToolCalls) != 4 || res.ToolCalls[2].Duration != time.Minute || res.ToolCalls[2].Result.Content != "written" {
		t.Errorf("tool calls %+v", res.ToolCalls)
	}
}
