package eval

import (
	"context"
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
