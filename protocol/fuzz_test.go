package protocol

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
)

var fuzzTools = []ptk.ToolInfo{
	{Name: "read_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"]}`)},
	{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}`)},
	{Name: "special_function", Parameters: json.RawMessage(`{"type":"object","properties":{"arg1":{"type":"integer"}}}`)},
	{Name: "math.factorial"},
}

var fuzzSeeds = []string{
	`<PTK_CALL>{"tool": "read_file", "args": {"path": "go.mod"}}</PTK_CALL>`,
	"Sure.\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```\nDone.",
	`<tool_call>{"name":"bash","arguments":{"cmd":"echo </tool_call> test"}}</tool_call>`,
	`[TOOL_CALLS]get_weather[ARGS]{"city": "NYC"}[TOOL_CALLS]get_time[ARGS]{"tz": "EST"}`,
	`<think>maybe <tool_call>{"name":"x","arguments":{}}</tool_call></think>answer`,
	"[get_weather(city='San Francisco', unit='celsius'), math.factorial(number=5)]",
	"<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>",
	`{"name": "jeff"}{"name": "get_weather", "arguments": {"city": "SF"}}`,
	"all\nHello>>>special_function\n{\"arg1\": 1}\n",
	`<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "x"}<|call|>`,
	"<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>",
	"read<arg_key>path</arg_key><arg_value>a.go</arg_value>",
	"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\":\"x\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
	"for { fmt.Println(\"hello\") } and `code <PTK_CALL>` and ``` not closed",
	"get_weather({\"city\": \"Paris\"})\nthen text",
	"{\"a\": 'it's', b: True, // c\n}",
	"<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"main.go\", \"content\": \"package main",
}

// FuzzParse checks that parsing never panics, that a streamed parse equals
// the whole parse for any chunking, and that the events agree with the result.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint64(1))
	}
	for _, c := range loadCorpusForFuzz() {
		f.Add(c, uint64(7))
	}
	withTools, err := NewParser(fuzzTools)
	if err != nil {
		f.Fatal(err)
	}
	noTools, _ := NewParser(nil)
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		done := make(chan struct{})
		timer := time.AfterFunc(10*time.Second, func() {
			select {
			case <-done:
			default:
				panic(fmt.Sprintf("parsing took over 10s: %q", text))
			}
		})
		defer func() { close(done); timer.Stop() }()
		for _, p := range []*Parser{withTools, noTools} {
			whole := p.Parse(text)
			for _, a := range whole.Attempts {
				if !json.Valid(a.Call.Args) {
					t.Fatalf("attempt %s has invalid JSON args %q", a.Call.ID, a.Call.Args)
				}
			}
			rng := rand.New(rand.NewPCG(seed, seed>>32|1))
			var sizes []int
			for n := 0; n < len(text); {
				k := 1 + rng.IntN(8)
				if rng.IntN(4) == 0 {
					k = 1
				}
				sizes = append(sizes, k)
				n += k
			}
			got := streamChunks(t, p, text, sizes)
			if diff := cmp.Diff(whole, got); diff != "" {
				t.Fatalf("streamed (chunks %v) differs from whole (-whole +streamed):\n%s", sizes, diff)
			}
		}
	})
}

// streamChunks feeds text to a stream in pieces of the given sizes, and
// checks the events agree with the result: the text events spell the text,
// and each call starts once, has its deltas while open, and ends.
func streamChunks(t *testing.T, p *Parser, text string, sizes []int) Parsed {
	t.Helper()
	var out []byte
	var started, ended int
	open := map[int]bool{}
	s := p.NewStream(func(e Event) {
		switch e.Kind {
		case EventText:
			out = append(out, e.Text...)
		case EventCallStart:
			if open[e.Index] {
				t.Errorf("call %d started twice", e.Index)
			}
			open[e.Index] = true
			started++
		case EventCallDelta:
			if !open[e.Index] {
				t.Errorf("args delta for call %d that is not open", e.Index)
			}
		case EventCallEnd:
			if !open[e.Index] {
				t.Errorf("call %d ended without starting", e.Index)
			}
			delete(open, e.Index)
			ended++
		}
	})
	i := 0
	for k, n := range sizes {
		if i+n > len(text) {
			n = len(text) - i
		}
		s.WriteString(text[i : i+n])
		if k%4 != 3 {
			// Read most pieces as they come (a stream batches small
			// writes otherwise), some batched.
			s.Flush()
		}
		i += n
	}
	r := s.Finish()
	if string(out) != r.Text {
		t.Errorf("streamed text %q != result text %q", out, r.Text)
	}
	if started != ended || ended != len(r.Attempts) {
		t.Errorf("%d calls started, %d ended, %d attempts", started, ended, len(r.Attempts))
	}
	return r
}

func loadCorpusForFuzz() []string {
	cases, _ := readCorpus()
	var out []string
	for _, c := range cases {
		out = append(out, c.Raw)
	}
	for _, name := range derivedFiles {
		data, _ := os.ReadFile(name)
		for _, line := range strings.Split(string(data), "\n") {
			var c corpusCase
			if json.Unmarshal([]byte(line), &c) == nil && len(c.Raw) < 4096 {
				out = append(out, c.Raw)
			}
		}
	}
	return out
}
