package eval

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestDeclaredNumbers: ptk's reading of a call is JSON, so a whole number
// where the question declares floats is the float (simple_python_82's v4
// answer holds floats, the models wrote [12, 15, ...]), and 4.0 where it
// declares an integer is the integer; the strict verdict, the call as
// written and read as BFCL reads it, keeps them apart as BFCL's checker
// does.
func TestDeclaredNumbers(t *testing.T) {
	qs, err := Load(sharedDir, []string{"simple_python"}, 0)
	if err != nil {
		t.Skipf("BFCL data not here: %v", err)
	}
	recs := []Recorded{
		{Model: "m", ID: "simple_python_82", Raw: "[calculate_average(numbers=[12, 15, 18, 20, 21, 26, 30])]"},
		{Model: "m", ID: "simple_python_82", Raw: "[calculate_average(numbers=[12.0, 15.0, 18.0, 20.0, 21.0, 26.0, 30.0])]"},
		{Model: "m", ID: "simple_python_82", Raw: "[calculate_average(numbers=[12, 15, 18, 20, 21, 26, 31])]"},
	}
	rs, err := Replay(context.Background(), qs, recs)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		correct bool
		strict  string
	}{{true, "type_error:nested"}, {true, ""}, {false, "type_error:nested"}} {
		r := rs[i]
		if r.Correct != want.correct || r.Strict.ErrorType != want.strict {
			t.Errorf("reply %d: correct %v (%+v), strict %q; want %v, %q", i, r.Correct, r.Verdict, r.Strict.ErrorType, want.correct, want.strict)
		}
	}
}

// TestReplayLoopNoCall: a reply that writes one call until the token limit
// cuts it off is scored as a reply without a call (right on an irrelevance
// question), and the replay's differences say it was a repetition loop.
func TestReplayLoopNoCall(t *testing.T) {
	qs, err := Load(sharedDir, []string{"irrelevance"}, 0)
	if err != nil {
		t.Skipf("BFCL data not here: %v", err)
	}
	call := "<tool_call>\n{\"arguments\": {\"max_electric_field_strength\": 2}, \"name\": \"calculate_wave_amplitude\"}\n</tool_call>\n"
	wrongly := false
	recs := []Recorded{
		{Model: "m", ID: "irrelevance_21", Raw: strings.Repeat(call, 12) + call[:40], Correct: &wrongly},
		{Model: "m", ID: "irrelevance_21", Raw: strings.Repeat(call, 2) + call[:40], Correct: &wrongly},
	}
	rs, err := Replay(context.Background(), qs, recs)
	if err != nil {
		t.Fatal(err)
	}
	if !rs[0].Correct || len(rs[0].Calls) != 0 || !slices.Contains(rs[0].Invalid, "repetition_loop") {
		t.Errorf("the loop: correct %v, calls %v, invalid %v; want right, no call, repetition_loop", rs[0].Correct, rs[0].Calls, rs[0].Invalid)
	}
	if rs[1].Correct || len(rs[1].Calls) != 2 {
		t.Errorf("two calls, then one cut off: correct %v, calls %v; want the two calls read, wrong", rs[1].Correct, rs[1].Calls)
	}
	var b strings.Builder
	if err := ReplayDiffs(&b, rs, "gained", 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "calls: none run (a repetition loop)") {
		t.Errorf("the differences do not say it was a loop:\n%s", b.String())
	}
}
