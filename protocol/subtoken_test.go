package protocol

import (
	"bytes"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
)

// TestSubTokenStreams feeds replies the way a server streams them, one
// tokenizer piece per write, and checks each reads as it does whole and
// finds the calls it should.
func TestSubTokenStreams(t *testing.T) {
	cases := []struct {
		name   string
		pieces []string
		want   []wantCall
	}{
		{"functiongemma", []string{"<start_function_call>", "call", ":", "get", "_", "weather", "{", "city", ":", "<", "escape", ">", "Par", "is", "<escape>", ",", "days", ":", "3", "}", "<end_function_call>"},
			[]wantCall{{"get_weather", `{"city":"Paris","days":3}`}}},
		{"functiongemma two calls", []string{"Sure", ".", "<start_function_call>", "call:", "now", "{}", "<end_function_call>", "<start_function_call>", "call:", "search", "{", "query:", "<escape>", "a, b", "<escape>", "}", "<end_function_call>"},
			[]wantCall{{"now", `{}`}, {"search", `{"query":"a, b"}`}}},
		{"sentencepiece artefacts", []string{"<tool_call>", "▁{", "\"name\":", "▁\"", "read_file", "\",", "▁\"arguments\":", "▁{\"", "path", "\":", "▁\"", "go.mod", "\"}}", "▁</tool_call>"},
			[]wantCall{{"read_file", `{"path":"go.mod"}`}}},
		{"byte-level artefacts, split inside a rune", []string{"<tool_call>\xc4", "\x8a{\"name\":\xc4", "\xa0\"bash\",\xc4\xa0\"arguments\":{\"command\":\"ls\"}}</tool_call>"},
			[]wantCall{{"bash", `{"command":"ls"}`}}},
		{"typographic quotes, split inside a rune", []string{"<tool_call>{\xe2\x80", "\x9cname\xe2", "\x80\x9d: “now”, “arguments”: {}}</tool_call>"},
			[]wantCall{{"now", `{}`}}},
	}
	p, err := NewParser(testTools)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		whole := p.Parse(strings.Join(c.pieces, ""))
		s := p.NewStream(nil)
		for _, piece := range c.pieces {
			s.WriteString(piece)
			s.Flush() // each piece read as it comes, not batched
		}
		got := s.Finish()
		if diff := cmp.Diff(whole, got); diff != "" {
			t.Errorf("%s: streamed differs from whole (-whole +streamed):\n%s", c.name, diff)
		}
		if len(got.Calls) != len(c.want) {
			t.Errorf("%s: %d calls, want %d: %+v %+v", c.name, len(got.Calls), len(c.want), got.Calls, got.Diagnostics)
			continue
		}
		for i, w := range c.want {
			if got.Calls[i].Tool != w.tool || !jsonEqual(got.Calls[i].Args, json.RawMessage(w.args)) {
				t.Errorf("%s: call %d = %s %s, want %s %s", c.name, i, got.Calls[i].Tool, got.Calls[i].Args, w.tool, w.args)
			}
		}
	}
}

// TestLongStrings reads arguments longer than the length from which the
// JSON reader leaves strings undecoded until they are read: copied as
// written, decoded where the call needs their text.
func TestLongStrings(t *testing.T) {
	long := strings.Repeat("line \"one\"\ttab\n", 100) // 1,500 bytes decoded
	enc, _ := json.Marshal(long)
	inner, _ := json.Marshal(`{"path": "a.txt", "content": ` + string(enc) + `}`)
	tools := append(append([]ptk.ToolInfo(nil), writeFileTools...), ptk.ToolInfo{Name: "pick", Parameters: json.RawMessage(`{"type":"object","properties":{"mode":{"type":"string","enum":["fast","slow"]}},"required":["mode"]}`)})
	p, err := NewParser(tools)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(map[string]string{"path": "a.txt", "content": long})
	for _, in := range []string{
		`<tool_call>{"name": "write_file", "arguments": {"path": "a.txt", "content": ` + string(enc) + `}}</tool_call>`,
		`<tool_call>{"name": "write_file", "arguments": ` + string(inner) + `}</tool_call>`,
		`<function=write_file>{"path": "a.txt", "content": ` + string(enc) + `}</function>`,
	} {
		r := p.Parse(in)
		if len(r.Calls) != 1 || !jsonEqual(r.Calls[0].Args, want) {
			t.Errorf("%.60q...: %+v %+v", in, r.Calls, r.Diagnostics)
		}
		s := p.NewStream(nil)
		for i := 0; i < len(in); i += 5 {
			s.WriteString(in[i:min(i+5, len(in))])
		}
		if got := s.Finish(); !cmp.Equal(r, got) {
			t.Errorf("%.60q...: streamed differs from whole", in)
		}
	}
	r := p.Parse(`<tool_call>{"name": "pick", "arguments": {"mode": ` + string(enc) + `}}</tool_call>`)
	if len(r.Calls) != 0 || len(r.Attempts) != 1 || r.Attempts[0].Err == nil {
		t.Errorf("a long value outside the enum: %+v", r.Attempts)
	}
}

// keptBy runs f and returns its result and how many bytes of heap it kept
// alive once collected (two collections: a buffer a stream left in the pool
// is not counted).
func keptBy(f func() Parsed) (Parsed, int64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := f()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return r, int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestResultKeepsWhatItReturns parses a 1 MiB reply with one call and
// checks the result holds its call's arguments and its text, not a buffer
// sized for the whole reply.
func TestResultKeepsWhatItReturns(t *testing.T) {
	p, err := NewParser(writeFileTools)
	if err != nil {
		t.Fatal(err)
	}
	text := writeFileReply(1 << 20)
	r, kept := keptBy(func() Parsed { return p.Parse(text) })
	if len(r.Calls) != 1 {
		t.Fatalf("%d calls", len(r.Calls))
	}
	if limit := int64(len(r.Calls[0].Args)+len(r.Text)) + 256<<10; kept > limit {
		t.Errorf("the result keeps %d bytes; its arguments and text are %d", kept, len(r.Calls[0].Args)+len(r.Text))
	}
	runtime.KeepAlive(text)
}

// TestStreamKeepsWhatItReturns: a streamed call's arguments that are most of
// the stream's buffer are a slice of it, not a copy; the result then keeps
// at most a third more than it returns.
func TestStreamKeepsWhatItReturns(t *testing.T) {
	p, err := NewParser(writeFileTools)
	if err != nil {
		t.Fatal(err)
	}
	text := writeFileReply(1 << 20)
	want := p.Parse(text)
	r, kept := keptBy(func() Parsed {
		s := p.NewStream(nil)
		for i := 0; i < len(text); i += 4 {
			s.WriteString(text[i:min(i+4, len(text))])
		}
		r := s.Finish()
		// The next stream does not get the buffer the arguments are a
		// slice of, and write over them.
		s2 := p.NewStream(nil)
		s2.WriteString(strings.Repeat("x", 1<<20))
		s2.Finish()
		return r
	})
	if len(r.Calls) != 1 || !bytes.Equal(r.Calls[0].Args, want.Calls[0].Args) || r.Text != want.Text {
		t.Fatalf("streamed differs from whole (or was written over): %d calls, text %q", len(r.Calls), r.Text)
	}
	returned := int64(len(r.Calls[0].Args) + len(r.Text))
	if kept > returned*4/3+256<<10 {
		t.Errorf("the result keeps %d bytes; its arguments and text are %d", kept, returned)
	}
	runtime.KeepAlive(text)
}

// TestStreamsShareNothing: a finished stream's buffer is read into by the
// next stream, so nothing a stream returned or reported may point into it.
// Every reply of the corpus is streamed one after another (with events,
// whose texts are kept); only then is each checked against its whole parse.
func TestStreamsShareNothing(t *testing.T) {
	p, err := NewParser(fuzzTools)
	if err != nil {
		t.Fatal(err)
	}
	type kept struct {
		text   string
		got    Parsed
		deltas []string // as reported
		copies []string // copied when reported
		shown  string
	}
	var all []kept
	texts := append(loadCorpusForFuzz(), writeFileReply(64<<10), benchReply(32<<10))
	for _, text := range texts {
		k := kept{text: text}
		var shown strings.Builder
		s := p.NewStream(func(e Event) {
			switch e.Kind {
			case EventText:
				shown.WriteString(e.Text)
			case EventCallDelta:
				k.deltas = append(k.deltas, e.Text)
				k.copies = append(k.copies, strings.Clone(e.Text))
			}
		})
		for i := 0; i < len(text); i += 3 {
			s.WriteString(text[i:min(i+3, len(text))])
		}
		k.got = s.Finish()
		k.shown = shown.String()
		all = append(all, k)
	}
	for _, k := range all {
		if diff := cmp.Diff(p.Parse(k.text), k.got); diff != "" {
			t.Fatalf("a streamed result changed after later streams (-whole +kept):\n%s", diff)
		}
		if k.shown != k.got.Text {
			t.Fatalf("the text events changed after later streams: %q, want %q", k.shown, k.got.Text)
		}
		if !slices.Equal(k.deltas, k.copies) {
			t.Fatalf("a call's deltas changed after later streams: %q, reported as %q", k.deltas, k.copies)
		}
	}
}

func TestStableArgs(t *testing.T) {
	buf := make([]byte, 1000, 1200)
	for _, c := range []struct {
		stable     bool
		start, end int
		want       bool
	}{
		{true, 50, 950, true},   // 900 of 1200: a slice keeps a third more at most
		{true, 0, 899, false},   // under three quarters of the buffer: copied
		{false, 50, 950, false}, // not a stream's buffer
		{true, 50, 1001, false}, // past the bytes read
		{true, 60, 50, false},
	} {
		if got := stableArgs(c.stable, buf, c.start, c.end); got != c.want {
			t.Errorf("stableArgs(%v, [%d:%d]) = %v", c.stable, c.start, c.end, got)
		}
	}
}
