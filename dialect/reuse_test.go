package dialect

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk/dialect/result"
)

// reuseSeeds are replies of every kind of region: a machine that read one
// must read any other as a new machine does.
var reuseSeeds = []string{
	"I'll check.\n\n<PTK_CALL>\n{\"tool\": \"read\", \"args\": {\"p\": \"a\"}}\n</PTK_CALL>",
	"Just prose, nothing else.",
	"<tool_call>{\"name\": \"read\", \"arguments\": {\"p\": [1, 2, {\"q\": null}]}}</tool_call>",
	"<think>hmm <tool_call>{\"name\":\"x\"}</tool_call></think>answer",
	"```json\n{\"name\": \"read\", \"arguments\": {\"p\": 1}}\n```",
	"[read(p='x'), read(p='y')]",
	"<function=read>\n<parameter=p>\nx\n</parameter>\n</function>",
	"<PTK_CALL>{\"tool\": \"read\", \"args\": {\"p\": \"cut off",
	strings.Repeat("<PTK_CALL>{\"tool\": \"read\", \"args\": {}}</PTK_CALL>\n", 12),
	"{\"name\": \"read\", \"arguments\": {\"p\": 1}} {\"name\": \"read\", \"arguments\": {\"p\": 2}}",
}

// freshParse reads text with a machine that never read anything.
func freshParse(cfg *Config, text string, cut bool) result.Parsed {
	m := new(machine)
	m.init(cfg, nil)
	return m.parse(text, cut)
}

// streamAll reads text streamed in pieces of n bytes, flushing each, and
// returns the result with the events' texts joined.
func streamAll(cfg *Config, text string, n int) (result.Parsed, string) {
	var events strings.Builder
	s := NewStream(cfg, func(e result.Event) {
		events.WriteString(string(e.Kind))
		events.WriteString(e.Text)
		if e.Attempt != nil {
			events.WriteString(e.Attempt.Call.ID + e.Attempt.Call.Tool + string(e.Attempt.Call.Args))
		}
	})
	for i := 0; i < len(text); i += n {
		s.WriteString(text[i:min(i+n, len(text))])
		s.Flush()
	}
	return s.Finish(), events.String()
}

// checkReuse reads a, then b, with the pooled machines, whole and streamed,
// and checks that b reads as a new machine reads it and that what a's parse
// returned did not change.
func checkReuse(t *testing.T, cfg *Config, a, b string) {
	t.Helper()
	wa := Parse(cfg, a)
	sa, ea := streamAll(cfg, a, 3)
	keep := func(r result.Parsed) result.Parsed { // a deep copy
		c := r
		c.Text = strings.Clone(r.Text)
		c.Attempts = append([]result.Attempt(nil), r.Attempts...)
		for i := range c.Attempts {
			c.Attempts[i].Call.Args = append([]byte(nil), r.Attempts[i].Call.Args...)
		}
		c.Diagnostics = append([]result.Diagnostic(nil), r.Diagnostics...)
		return c
	}
	wa0, sa0, ea0 := keep(wa), keep(sa), strings.Clone(ea)
	for _, cut := range []bool{false, true} {
		want := freshParse(cfg, b, cut)
		var got result.Parsed
		if cut {
			got = ParseCut(cfg, b)
		} else {
			got = Parse(cfg, b)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after %q, a reused machine read %q (cut %v) as\n%+v\nnot as a new one:\n%+v", a, b, cut, got, want)
		}
	}
	if got, _ := streamAll(cfg, b, 2); !reflect.DeepEqual(got, freshParse(cfg, b, false)) {
		t.Fatalf("after %q, a reused machine streamed %q as\n%+v", a, b, got)
	}
	if !reflect.DeepEqual(wa, wa0) || !reflect.DeepEqual(sa, sa0) {
		t.Fatalf("reading %q changed what reading %q returned", b, a)
	}
	if ea != ea0 {
		t.Fatalf("reading %q changed the events of %q: %q, was %q", b, a, ea, ea0)
	}
}

// TestMachineReuse: a machine handed from one parse to the next keeps
// nothing of the last: every pair of the seeds reads as with new machines,
// and a result already returned never changes.
func TestMachineReuse(t *testing.T) {
	for _, cfg := range []*Config{testConfig("read"), testConfig()} {
		for _, a := range reuseSeeds {
			for _, b := range reuseSeeds {
				checkReuse(t, cfg, a, b)
			}
		}
	}
}

// TestMachineReuseConcurrent reads replies on several goroutines at once
// (run with -race): each reads what a new machine reads.
func TestMachineReuseConcurrent(t *testing.T) {
	cfg := testConfig("read")
	want := make([]result.Parsed, len(reuseSeeds))
	for i, s := range reuseSeeds {
		want[i] = freshParse(cfg, s, false)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 200 {
				i := (g + k) % len(reuseSeeds)
				if got := Parse(cfg, reuseSeeds[i]); !reflect.DeepEqual(got, want[i]) {
					t.Errorf("%q read as %+v, want %+v", reuseSeeds[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzMachineReuse: for any two replies, the second reads with a machine
// that read the first as with a new machine, whole and streamed, and the
// first's results do not change.
func FuzzMachineReuse(f *testing.F) {
	for i, a := range reuseSeeds {
		f.Add(a, reuseSeeds[(i+1)%len(reuseSeeds)])
	}
	cfgs := []*Config{testConfig("read"), testConfig()}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, cfg := range cfgs {
			checkReuse(t, cfg, a, b)
		}
	})
}
