package protocol

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
)

// loopReply writes calls in Hermes' <tool_call> tags, one for each path;
// with cut, a last call is cut off in the middle of its arguments, as a
// token limit leaves it.
func loopReply(paths []string, cut bool) string {
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": %q}}\n</tool_call>\n", p)
	}
	if cut {
		b.WriteString("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"pa")
	}
	return b.String()
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func distinct(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("f%d.go", i)
	}
	return out
}

// TestRepetitionLoopRule: the rule's edges, each side of every threshold
// (see dialect/loop.go): a reply is a loop when it is cut off after 8
// complete calls or after 3 identical ones in a row, or ends in 10
// identical calls in a row; then no call runs. Below them, every complete
// call runs as before (the cut one never does).
func TestRepetitionLoopRule(t *testing.T) {
	p, err := NewParser(testTools)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		paths []string
		cut   bool
		loop  bool
	}{
		{"7 different calls, cut off", distinct(7), true, false},
		{"8 different calls, cut off", distinct(8), true, true},
		{"40 different calls, not cut off", distinct(40), false, false},
		{"2 identical calls, cut off", repeat("a.go", 2), true, false},
		{"3 identical calls, cut off", repeat("a.go", 3), true, true},
		{"3 identical calls after others, cut off", append(distinct(2), repeat("a.go", 3)...), true, true},
		{"identical calls, then another, cut off", append(repeat("a.go", 3), "b.go"), true, false},
		{"9 identical calls", repeat("a.go", 9), false, false},
		{"10 identical calls", repeat("a.go", 10), false, true},
		{"10 identical calls after another", append([]string{"b.go"}, repeat("a.go", 10)...), false, true},
		{"10 identical calls, then another", append(repeat("a.go", 10), "b.go"), false, false},
	} {
		in := loopReply(c.paths, c.cut)
		got := p.Parse(in)
		loop := false
		for _, d := range got.Diagnostics {
			if d.Kind == DiagRepetitionLoop {
				loop = true
				if !strings.Contains(d.Message, "repetition loop") {
					t.Errorf("%s: the diagnostic does not say what it is: %q", c.name, d.Message)
				}
			}
		}
		if loop != c.loop {
			t.Errorf("%s: loop = %v, want %v; diagnostics %+v", c.name, loop, c.loop, got.Diagnostics)
		}
		complete := len(c.paths)
		switch {
		case c.loop && len(got.Calls) != 0:
			t.Errorf("%s: %d calls would run in a loop, want none", c.name, len(got.Calls))
		case !c.loop && len(got.Calls) != complete:
			t.Errorf("%s: %d calls run, want the %d complete ones", c.name, len(got.Calls), complete)
		}
		if want := complete + btoi(c.cut); len(got.Attempts) != want {
			t.Errorf("%s: %d attempts, want %d", c.name, len(got.Attempts), want)
		}
		for i, a := range got.Attempts {
			if c.loop && (a.Err == nil || a.Err.Code != ptk.DuplicateToolCall || !strings.Contains(a.Err.Message, "none of its calls was run")) {
				t.Errorf("%s: attempt %d's error is %v, want the loop's, said to the model", c.name, i, a.Err)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRepetitionLoopStream: a stream never reports a repeat of the call just
// before it as runnable before the reply's end decides whether it is a
// loop: of a loop of one call, only the first is reported runnable as it
// ends (a gateway has sent it; it is not taken back), the repeats are
// reported at the end with the loop's error, so a gateway never sends
// them; and the stream's Parsed is the whole parse's. Two identical calls
// followed by another are reported as they were, runnable, once the other
// call ends.
func TestRepetitionLoopStream(t *testing.T) {
	p, err := NewParser(testTools)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		in       string
		early    int // runnable call ends reported before Finish
		runnable int // runnable call ends reported in all
	}{
		{"loop of one call, cut off", loopReply(repeat("a.go", 12), true), 1, 1},
		{"loop of one call", loopReply(repeat("a.go", 10), false), 1, 1},
		{"a call twice, then another", loopReply([]string{"a.go", "a.go", "b.go"}, false), 3, 3},
		{"a call twice at the end", loopReply([]string{"b.go", "a.go", "a.go"}, false), 2, 3},
	} {
		whole := p.Parse(c.in)
		for _, size := range []int{1, 7, 64, len(c.in)} {
			var ends []Event
			finished := false
			early := 0
			s := p.NewStream(func(e Event) {
				if e.Kind != EventCallEnd {
					return
				}
				ends = append(ends, e)
				if e.Attempt.Err == nil && !finished {
					early++
				}
			})
			for i := 0; i < len(c.in); i += size {
				s.WriteString(c.in[i:min(i+size, len(c.in))])
				s.Flush()
			}
			finished = true
			got := s.Finish()
			if !reflect.DeepEqual(whole, got) {
				t.Errorf("%s in %d-byte writes: streamed differs (-whole +streamed):\n%s", c.name, size, cmp.Diff(whole, got))
			}
			if early != c.early {
				t.Errorf("%s in %d-byte writes: %d calls reported runnable before the end, want %d", c.name, size, early, c.early)
			}
			runnable := 0
			for i, e := range ends {
				if e.Index != i {
					t.Errorf("%s in %d-byte writes: end %d reports call %d", c.name, size, i, e.Index)
				}
				if e.Attempt.Err == nil {
					runnable++
				}
			}
			if len(ends) != len(whole.Attempts) || runnable != c.runnable {
				t.Errorf("%s in %d-byte writes: %d call ends, %d runnable; want %d, %d", c.name, size, len(ends), runnable, len(whole.Attempts), c.runnable)
			}
		}
	}
}

// TestRepetitionLoopProviderCut: when the provider says the token limit
// cut the reply off (finish reason "length"), the cut may fall between two
// calls; the rule counts the reply cut off all the same (ParseCut, or Cut
// before a stream's Finish), and the stream reaches the whole parse's
// verdict. Without the provider's word, the same text is complete calls.
func TestRepetitionLoopProviderCut(t *testing.T) {
	p, err := NewParser(testTools)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		paths []string
		loop  bool
	}{
		{"7 different calls", distinct(7), false},
		{"8 different calls", distinct(8), true},
		{"2 identical calls", repeat("a.go", 2), false},
		{"3 identical calls", repeat("a.go", 3), true},
	} {
		in := loopReply(c.paths, false)
		if got := p.Parse(in); len(got.Calls) != len(c.paths) {
			t.Errorf("%s, not cut: %d calls run, want all %d", c.name, len(got.Calls), len(c.paths))
		}
		whole := p.ParseCut(in)
		if loop := len(whole.Calls) == 0; loop != c.loop {
			t.Errorf("%s, cut by the provider: loop %v, want %v (%d calls run)", c.name, loop, c.loop, len(whole.Calls))
		}
		for _, size := range []int{1, 16, len(in)} {
			s := p.NewStream(func(Event) {})
			for i := 0; i < len(in); i += size {
				s.WriteString(in[i:min(i+size, len(in))])
			}
			s.Cut()
			if got := s.Finish(); !reflect.DeepEqual(whole, got) {
				t.Errorf("%s in %d-byte writes: streamed differs (-whole +streamed):\n%s", c.name, size, cmp.Diff(whole, got))
			}
		}
	}
}
