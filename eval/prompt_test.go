package eval

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/protocol"
)

// TestPromptsRoundTrip checks each prompt variant: its system prompt names
// every tool and says how to call, and the calls it teaches (Calls) read
// back, through the parser, as the same calls.
func TestPromptsRoundTrip(t *testing.T) {
	qs := questions(t, 50)
	n := 0
	for name, f := range Prompts {
		for _, q := range qs {
			if q.Answer == nil {
				continue
			}
			tools, _ := Tools(q, false)
			sys := f.SystemPrompt("Answer the user.", tools)
			for _, tl := range tools {
				if !strings.Contains(sys, tl.Name) {
					t.Fatalf("%s: the %s prompt does not name %s", q.ID, name, tl.Name)
				}
			}
			p, err := protocol.NewParser(tools)
			if err != nil {
				t.Fatal(err)
			}
			var calls []ptk.Call
			for _, c := range literals(q, reference(q)) {
				calls = append(calls, ptk.Call{Tool: c.Name, Args: json.RawMessage(argsJSON(c.Args))})
			}
			res := p.Parse(f.Calls(calls))
			if len(res.Attempts) != len(calls) {
				t.Errorf("%s (%s): %d calls read back from %q, want %d", q.ID, name, len(res.Attempts), f.Calls(calls), len(calls))
				continue
			}
			bare, _ := protocol.NewParser(bareTools(tools))
			for i, a := range bare.Parse(f.Calls(calls)).Attempts {
				got, _ := decodeArgs(a.Call.Args)
				want, _ := decodeArgs(calls[i].Args)
				if a.Call.Tool != calls[i].Tool || !pyEqual(got, want) {
					t.Errorf("%s (%s): call %d read back as %s %s, want %s %s", q.ID, name, i, a.Call.Tool, a.Call.Args, calls[i].Tool, calls[i].Args)
				}
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("nothing checked")
	}
}

var updateGolden = flag.Bool("update-golden", false, "rewrite the prompt variants' golden files in testdata/golden")

// TestPromptsGolden shows exactly what a model reads with each prompt
// variant for a BFCL question, and how its calls are replayed to it.
func TestPromptsGolden(t *testing.T) {
	qs, err := Load("testdata/bfcl", []string{"simple_python", "parallel_multiple"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hermes", "pythonic"} {
		f := Prompts[name]
		var b strings.Builder
		for _, q := range qs {
			tools, _ := Tools(q, false)
			var calls []ptk.Call
			for _, c := range reference(q) {
				calls = append(calls, ptk.Call{Tool: c.Name, Args: json.RawMessage(argsJSON(c.Args))})
			}
			fmt.Fprintf(&b, "==== %s: system prompt\n%s\n==== %s: calls\n%s\n", q.ID, f.SystemPrompt("You are a helpful assistant.", tools), q.ID, f.Calls(calls))
		}
		path := filepath.Join("testdata", "golden", name+".txt")
		if *updateGolden {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run Golden -update-golden to create it)", err)
		}
		if got := b.String(); got != string(want) {
			t.Errorf("the %s prompt differs from %s (run with -update-golden if the change is intended):\n%s", name, path, got)
		}
	}
}
