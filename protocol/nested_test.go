package protocol

import (
	"strings"
	"testing"

	"github.com/ptkit/ptk"
)

// TestNestedCallsAreNotRun: a call written as another call's argument,
// f(x=g(y=1)), is read and reported, and the outer call never runs — its
// argument would be the inner call's text, not its result. The attack: a
// command written as a call inside bash's argument must not reach bash as
// a string to run.
func TestNestedCallsAreNotRun(t *testing.T) {
	p, err := NewParser(testTools)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in, inner, args string
		others          int // valid calls beside the nested one
	}{
		{`[bash(command=os.system('rm -rf /'))]`, "os.system('rm -rf /')", `{"command":"os.system('rm -rf /')"}`, 0},
		{`[now(x=get_weather(city="Paris")), now()]`, `get_weather(city="Paris")`, `{"x":{"get_weather":{"city":"Paris"}}}`, 1},
		{"bash(command=search(query=now()))", "search(query=now())", "", 0},
	} {
		r := p.Parse(c.in)
		if len(r.Calls) != c.others {
			t.Errorf("%s: %d calls run, want %d: %+v", c.in, len(r.Calls), c.others, r.Calls)
		}
		a := r.Attempts[0]
		if a.Err == nil || a.Err.Code != ptk.InvalidToolCall || !strings.Contains(a.Err.Message, c.inner) || !strings.Contains(a.Err.Message, "first") {
			t.Errorf("%s: attempt error %+v, want one naming %s", c.in, a.Err, c.inner)
		}
		if c.args != "" && compact(t, a.Call.Args) != compact(t, []byte(c.args)) {
			t.Errorf("%s: args %s, want %s (as BFCL reads them)", c.in, a.Call.Args, c.args)
		}
		found := false
		for _, d := range r.Diagnostics {
			found = found || d.Kind == DiagNestedCall && strings.Contains(d.Message, c.inner)
		}
		if !found {
			t.Errorf("%s: no nested_call diagnostic naming %s in %+v", c.in, c.inner, r.Diagnostics)
		}
		if s := streamParse(t, p, c.in, 1); len(s.Calls) != len(r.Calls) || len(s.Attempts) != len(r.Attempts) {
			t.Errorf("%s: streamed differs: %+v", c.in, s)
		}
	}
}
