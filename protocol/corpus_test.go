package protocol

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
)

// corpusCase is one line of ../shared/corpus/parse/cases.jsonl.
type corpusCase struct {
	ID      string `json:"id"`
	Raw     string `json:"raw"`
	Dialect string `json:"dialect"`
	Note    string `json:"note"`
	Expect  struct {
		Calls []struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		} `json:"calls"`
		Text *string `json:"text"`
	} `json:"expect"`
}

const corpusPath = "../../shared/corpus/parse/cases.jsonl"

// loadCorpus returns the shared corpus's cases, or none when the corpus is
// not beside the repository (a plain clone): the tests that use it run
// their in-repo cases all the same, and the shared cases add to them.
func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	cases, err := readCorpus()
	if os.IsNotExist(err) {
		t.Logf("shared corpus not found, in-repo cases only: %v", err)
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

func readCorpus() ([]corpusCase, error) {
	f, err := os.Open(filepath.FromSlash(corpusPath))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("corpus line %d: %v", len(cases)+1, err)
		}
		cases = append(cases, c)
	}
	return cases, sc.Err()
}

// corpusSchemas gives the tools of some cases the schema a real
// deployment would declare, where the expected reading depends on it.
var corpusSchemas = map[string]map[string]string{
	"minpeter-live-05":   {"write_file": `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`},
	"issue-vllmmlx-63-b": {"config": `{"type":"object","properties":{"settings":{"type":"object"}}}`},
}

// toolsFor declares the tools a case's expected calls name.
func toolsFor(c corpusCase) []ptk.ToolInfo {
	var tools []ptk.ToolInfo
	seen := map[string]bool{}
	for _, call := range c.Expect.Calls {
		if seen[call.Tool] {
			continue
		}
		seen[call.Tool] = true
		schema := corpusSchemas[c.ID][call.Tool]
		tools = append(tools, ptk.ToolInfo{Name: call.Tool, Parameters: json.RawMessage(schema)})
	}
	return tools
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}

func checkCase(t *testing.T, c corpusCase, r Parsed) {
	t.Helper()
	if d := caseDiff(c, r); d != "" {
		t.Error(d)
	}
}

// caseDiff says how r differs from what c expects, or "" when it does not.
func caseDiff(c corpusCase, r Parsed) string {
	if len(r.Calls) != len(c.Expect.Calls) {
		return fmt.Sprintf("%s: %d calls, want %d\nraw: %q\ngot: %+v\ndiags: %+v", c.ID, len(r.Calls), len(c.Expect.Calls), c.Raw, r.Calls, r.Diagnostics)
	}
	for i, want := range c.Expect.Calls {
		got := r.Calls[i]
		if got.Tool != want.Tool || !jsonEqual(got.Args, want.Args) {
			return fmt.Sprintf("%s: call %d = %s %s, want %s %s\nraw: %q", c.ID, i, got.Tool, got.Args, want.Tool, want.Args, c.Raw)
		}
	}
	if c.Expect.Text != nil && r.Text != *c.Expect.Text {
		return fmt.Sprintf("%s: text = %q, want %q", c.ID, r.Text, *c.Expect.Text)
	}
	return ""
}

// TestCorpusDeclaredTools reads the shared corpus with its tools declared;
// TestDerivedCases does the same for the in-repo cases.
func TestCorpusDeclaredTools(t *testing.T) {
	cases := loadCorpus(t)
	if cases == nil {
		t.Skip("the shared corpus is not here; TestDerivedCases reads the in-repo cases")
	}
	for _, c := range cases {
		p, err := NewParser(toolsFor(c))
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		checkCase(t, c, p.Parse(c.Raw))
	}
}

// streamParse feeds text to a stream in pieces of size bytes (0: one
// piece) and checks the events against the result (see streamChunks).
func streamParse(t *testing.T, p *Parser, text string, size int) Parsed {
	t.Helper()
	var sizes []int
	for i := 0; i < len(text); {
		n := size
		if n <= 0 || i+n > len(text) {
			n = len(text) - i
		}
		sizes = append(sizes, n)
		i += n
	}
	return streamChunks(t, p, text, sizes)
}

func TestCorpusStreamedEqualsWhole(t *testing.T) {
	for _, in := range streamInputs(t) {
		for _, tools := range [][]ptk.ToolInfo{in.tools, nil} {
			p, err := NewParser(tools, in.opts...)
			if err != nil {
				t.Fatal(err)
			}
			whole := p.Parse(in.text)
			for _, size := range streamChunkSizes() {
				got := streamParse(t, p, in.text, size)
				if diff := cmp.Diff(whole, got); diff != "" {
					t.Errorf("%s (tools %d) chunk %d: streamed differs from whole (-whole +streamed):\n%s", in.id, len(tools), size, diff)
				}
			}
		}
	}
}

// streamChunkSizes are the chunk sizes the corpus is streamed in: under
// the race detector, which makes this test ten times slower, a third of
// them (.ci/run runs the whole set without it).
func streamChunkSizes() []int {
	if raceEnabled {
		return []int{1, 7, 64}
	}
	return []int{1, 2, 3, 5, 7, 16, 64}
}

// streamInput is a text to parse whole and streamed, with its tools.
type streamInput struct {
	id    string
	text  string
	tools []ptk.ToolInfo
	opts  []Option
}

// streamInputs gathers every test input: the in-repo derived cases and
// parse cases always, the shared corpus when it is there.
func streamInputs(t *testing.T) []streamInput {
	var inputs []streamInput
	for _, c := range loadCorpus(t) {
		inputs = append(inputs, streamInput{c.ID, c.Raw, toolsFor(c), nil})
	}
	for _, c := range append(loadDerived(t), loadCases(t, gapsFile)...) {
		var opts []Option
		if c.Options.StartInThink {
			opts = append(opts, StartInThink())
		}
		inputs = append(inputs, streamInput{c.ID, c.Raw, c.Tools, opts})
	}
	for _, c := range parseCases {
		tools := c.tools
		if tools == nil {
			tools = testTools
		}
		inputs = append(inputs, streamInput{c.name, c.in, tools, nil})
	}
	if len(inputs) < len(parseCases)+300 {
		t.Fatalf("only %d test inputs: the in-repo cases went missing", len(inputs))
	}
	return inputs
}

// needTools lists the corpus cases whose expected reading depends on the
// declared tools, with why; with no tools declared they read differently.
var needTools = map[string]string{
	"minpeter-live-05": "the hallucinated 'mood' argument is dropped only by the tool's schema",
	"ollama-tools-15":  "name(JSON) in prose is a call only when name is a declared tool",
	"ollama-tools-17":  `{"NAME": {...}} is a call only when NAME is a declared tool`,
}

func TestCorpusNoTools(t *testing.T) {
	p, err := NewParser(nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := loadCorpus(t)
	if cases == nil {
		t.Skip("the shared corpus is not here; TestDerivedCases reads the in-repo cases with their tools")
	}
	for _, c := range cases {
		if why, ok := needTools[c.ID]; ok {
			t.Logf("%s: skipped: %s", c.ID, why)
			continue
		}
		checkCase(t, c, p.Parse(c.Raw))
	}
}
