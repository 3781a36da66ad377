package react

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTraceHostileTrajectory: a trajectory is read from a file or a store
// someone else may have written. One of 800 steps, each returning 50 long
// strings and taking one of the first step's, is turned into a workflow
// at once: each argument is looked up, not compared with every value of
// every earlier step (that took minutes; 1,500 steps of 100 did not end in
// 10). Steps without an
// action or an observation, arguments that are not an object or not JSON,
// and odd names are kept as written or left out, never a panic.
func TestTraceHostileTrajectory(t *testing.T) {
	const steps, items = 800, 50
	tr := &Trajectory{Goal: "g"}
	for i := range steps {
		list := make([]string, items)
		for j := range list {
			list[j] = fmt.Sprintf("value %d of step %d, long enough to count", j, i)
		}
		result, _ := json.Marshal(list)
		args := fmt.Sprintf(`{"x": "value %d of step 0, long enough to count"}`, i%items)
		tr.Steps = append(tr.Steps, Step{Thought: Thought{Content: "t", Step: i + 1},
			Action: &Action{Name: "f", Args: json.RawMessage(args)}, Observation: &Observation{Result: string(result), Success: true}})
	}
	tr.Steps = append(tr.Steps,
		Step{Thought: Thought{Content: "no action"}},
		Step{Action: &Action{Name: "f"}},
		Step{Action: &Action{Name: "../../etc/passwd", Args: json.RawMessage(`"not an object"`)}, Observation: &Observation{Result: "x", Success: true}},
		Step{Action: &Action{Name: "f", Args: json.RawMessage(`null`)}, Observation: &Observation{Result: "{not json", Success: true}},
		Step{Action: &Action{Name: "f", Args: json.RawMessage(`{"a": [1, {"b": null}]}`)}, Observation: &Observation{Result: "", Success: true}},
	)
	start := time.Now()
	wf := tr.Trace()
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Trace took %v", d) // a bound against hanging: it takes well under a second
	}
	if len(wf.Steps) != steps+3 {
		t.Fatalf("%d steps, want %d", len(wf.Steps), steps+3)
	}
	for i, s := range wf.Steps[1:steps] {
		want := fmt.Sprintf(`{"x":{"$ref":"step_0","path":"/%d"}}`, (i+1)%items)
		if string(s.Args) != want {
			t.Fatalf("step %d: args %s, want %s", i+1, s.Args, want)
		}
	}
	if got := string(wf.Steps[steps].Args); got != `"not an object"` || wf.Steps[steps].PTool != "../../etc/passwd" {
		t.Errorf("kept as written: %s %s", wf.Steps[steps].PTool, got)
	}
}

// TestTraceRefersToTheLatest: an argument equal to several earlier values
// refers to the latest step that returned it, and within one output to
// its whole, then to its first member by name: the same trajectory gives
// the same workflow every time.
func TestTraceRefersToTheLatest(t *testing.T) {
	tr := &Trajectory{Goal: "g", Steps: []Step{
		{Action: &Action{Name: "a", Args: json.RawMessage(`{}`)}, Observation: &Observation{Result: `{"z": "pizza", "b": "pizza", "m": "pizza"}`, Success: true}},
		{Action: &Action{Name: "b", Args: json.RawMessage(`{"item": "pizza"}`)}, Observation: &Observation{Result: `"salad"`, Success: true}},
		{Action: &Action{Name: "c", Args: json.RawMessage(`{}`)}, Observation: &Observation{Result: `["soup", "salad"]`, Success: true}},
		{Action: &Action{Name: "d", Args: json.RawMessage(`{"x": "salad", "y": ["soup", "salad"]}`)}, Observation: &Observation{Result: `"ok"`, Success: true}},
	}}
	for range 20 {
		wf := tr.Trace()
		if got := string(wf.Steps[1].Args); got != `{"item":{"$ref":"step_0","path":"/b"}}` {
			t.Fatalf("step 1: %s", got)
		}
		if got := string(wf.Steps[3].Args); !strings.Contains(got, `"x":{"$ref":"step_2","path":"/1"}`) || !strings.Contains(got, `"y":{"$ref":"step_2"}`) {
			t.Fatalf("step 3: %s", got)
		}
	}
}
