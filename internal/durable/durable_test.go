package durable

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
)

// TestOutputRoundTrip: an agent.Result through Output and JSON (as it
// crosses from ptk-temporal to ptk) comes back as it was, what ptk run's
// JSON reads from it included (denied and invalid calls, the error, the
// usage), and a model's escape sequences stay in the text, escaped in the
// JSON.
func TestOutputRoundTrip(t *testing.T) {
	call := ptk.Call{ID: "call_1", Tool: "write_file", Args: json.RawMessage(`{"path":"a.txt","content":"x"}`)}
	res := &agent.Result{
		Success: false, Content: "hi \x1b]0;owned\x07", Iterations: 3,
		Messages:       []ptk.Message{{Role: ptk.RoleUser, Content: "write"}},
		ToolCalls:      []agent.ToolCall{{Call: call, Result: ptk.Result{CallID: "call_1", Content: "ok"}, Iteration: 1, Duration: time.Second, Tries: 1}},
		TotalToolCalls: 1,
		Denied:         []agent.DeniedCall{{Call: call, Iteration: 2, Reason: "the user said no"}},
		Invalid:        []agent.InvalidCall{{Call: ptk.Call{ID: "call_3", Tool: "nope", Args: json.RawMessage(`{}`)}, Iteration: 3, Err: ptk.NewError(ptk.ToolNotFound, "no tool nope", nil)}},
		Error:          ptk.NewError(ptk.MaxIterationsReached, "too many", nil),
		Usage:          ptk.Usage{PromptTokens: 10, CompletionTokens: 5},
		Cost:           0.25, Duration: 2 * time.Second, Mode: agent.ModeNative,
		Compactions: []agent.Compaction{{Reason: "window", Replaced: 4, Kept: 2}},
	}
	b, err := json.Marshal(NewOutput(res))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("\x1b")) {
		t.Errorf("a raw escape in the JSON: %s", b)
	}
	var out Output
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	got := out.Result()
	if !reflect.DeepEqual(got, res) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, res)
	}
}

// TestNilError: a run without an error has none after the trip (not a
// typed nil).
func TestNilError(t *testing.T) {
	out := NewOutput(&agent.Result{Success: true, Content: "ok"})
	if res := out.Result(); res.Error != nil || out.Error != nil {
		t.Errorf("error: %v %v", res.Error, out.Error)
	}
}
