package protocol

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
)

// inertContexts are what a model may write around data it repeats: nothing,
// a sentence, a list item, a block quote, a code fence, reasoning.
var inertContexts = []struct{ before, after string }{
	{"", ""},
	{"\n", "\n"},
	{"The file says: ", " That is all."},
	{"Done. ", ""},
	{"Here it is:\n", "\nDone."},
	{"- ", ""},
	{"> ", "\n"},
	{"    ", ""},
	{"```\n", "\n```"},
	{"```json\n", "\n```\n"},
	{"```python\n", "\n```"},
	{"<think>\nLet me look.\n</think>\n", ""},
	{"`", "`"},
	{"x = ", "\ny = 1"},
}

// checkInert checks the property of p.Neutralize on data: nothing of the
// result, in any of inertContexts, repeated or not, reads as a call to p or
// to a parser without tools; it is idempotent; and only bytes that could
// start a call changed, each to its character reference.
func checkInert(t testing.TB, p *Parser, data string) {
	t.Helper()
	plain := plainParser()
	got := p.Neutralize(data)
	for _, c := range inertContexts {
		for _, text := range []string{c.before + got + c.after, c.before + got + c.after + "\n" + c.before + got + c.after} {
			for _, q := range []*Parser{p, plain} {
				if r := q.Parse(text); len(r.Attempts) > 0 {
					t.Fatalf("Neutralize(%q) = %q\nin %q reads as a call: %s %s", data, got, text, r.Attempts[0].Call.Tool, r.Attempts[0].Call.Args)
				}
			}
		}
	}
	if again := p.Neutralize(got); again != got {
		t.Fatalf("not idempotent: %q -> %q -> %q", data, got, again)
	}
	if err := onlyRespelled(data, got); err != nil {
		t.Fatalf("Neutralize(%q) = %q: %v", data, got, err)
	}
}

// respelled are the character references Neutralize may write, and the
// byte each stands for.
var respelled = map[string]byte{"&lt;": '<', "&gt;": '>', "&#91;": '[', "&#123;": '{', "&#40;": '(', "&#96;": '`', "&#126;": '~'}

// onlyRespelled reports an error unless out is in with some bytes written as
// their character references.
func onlyRespelled(in, out string) error {
	i, j := 0, 0
	for i < len(in) && j < len(out) {
		if in[i] == out[j] {
			i, j = i+1, j+1
			continue
		}
		ok := false
		for ref, c := range respelled {
			if in[i] == c && strings.HasPrefix(out[j:], ref) {
				i, j, ok = i+1, j+len(ref), true
				break
			}
		}
		if !ok {
			return fmt.Errorf("byte %d (%q) became %q", i, in[i], out[j:min(j+8, len(out))])
		}
	}
	if i != len(in) || j != len(out) {
		return fmt.Errorf("lengths differ past byte %d", i)
	}
	return nil
}

// inertParser declares the fuzz tools and the tools the corpus calls.
func inertParser(t testing.TB, extra ...ptk.ToolInfo) *Parser {
	t.Helper()
	tools := append([]ptk.ToolInfo(nil), fuzzTools...)
	seen := map[string]bool{}
	for _, ti := range tools {
		seen[ti.Name] = true
	}
	for _, ti := range extra {
		if !seen[ti.Name] {
			seen[ti.Name] = true
			ti.Parameters = nil // any arguments: the most calls read
			tools = append(tools, ti)
		}
	}
	p, err := NewParser(tools)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNeutralizeCorpus: every real and derived reply of the corpora, as
// data, is made inert, with the tools it calls declared.
func TestNeutralizeCorpus(t *testing.T) {
	var tools []ptk.ToolInfo
	var raws []string
	for _, c := range loadCorpus(t) {
		tools = append(tools, toolsFor(c)...)
		raws = append(raws, c.Raw)
	}
	for _, c := range loadDerived(t) {
		raws = append(raws, c.Raw)
		tools = append(tools, c.Tools...)
		for _, call := range c.Expect.Calls {
			tools = append(tools, ptk.ToolInfo{Name: call.Tool})
		}
	}
	raws = append(raws, fuzzSeeds...)
	p := inertParser(t, tools...)
	n := 0
	for _, raw := range raws {
		if len(p.Parse(raw).Attempts) > 0 {
			n++
		}
		checkInert(t, p, raw)
	}
	if n < 100 {
		t.Errorf("only %d of the %d texts hold calls", n, len(raws))
	}
	t.Logf("%d texts, %d with calls", len(raws), n)
}

// liveTagRE is the definition of a live PTK tag that FuzzNeutralize checks,
// written independently of the implementation.
var liveTagRE = regexp.MustCompile(`(?i)<[\t\n\v\f\r ]*/?[\t\n\v\f\r ]*(ptk_|tool_call)`)

// FuzzNeutralize checks Neutralize's promises on any text: no live PTK
// tag is left, nothing in the result reads as a call in any dialect wherever
// a model repeats it (checkInert, for a parser with the fuzz tools and one
// without), it is idempotent, and only bytes that could start something
// changed.
func FuzzNeutralize(f *testing.F) {
	for _, s := range []string{"", "<PTK_CALL>", "< /ptk_result >", "<\v/\fTOOL_CALL", "&lt;PTK_CALL>", "<<//PTK_", "<PT\u212a_", "a<b"} {
		f.Add(s)
	}
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range loadCorpusForFuzz() {
		f.Add(s)
	}
	p, err := NewParser(fuzzTools)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		done := make(chan struct{})
		timer := time.AfterFunc(10*time.Second, func() {
			select {
			case <-done:
			default:
				panic(fmt.Sprintf("checking took over 10s: %q", s))
			}
		})
		defer func() { close(done); timer.Stop() }()
		got := Neutralize(s)
		if loc := liveTagRE.FindStringIndex(got); loc != nil {
			t.Fatalf("Neutralize(%q) = %q has a live tag at %v", s, got, loc)
		}
		if again := Neutralize(got); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
		checkInert(t, p, s)
	})
}

// neutralizeData are texts a tool returns: a Markdown README (code, JSON and
// call examples in it), a JSON document, Go source.
func neutralizeData(b *testing.B) map[string]string {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		b.Fatal(err)
	}
	var items []map[string]any
	for i := range 400 {
		items = append(items, map[string]any{"id": i, "name": fmt.Sprintf("item %d", i), "tags": []string{"a", "b"}, "price": 9.5, "nested": map[string]any{"ok": true}})
	}
	js, _ := json.MarshalIndent(map[string]any{"items": items}, "", "  ")
	src := strings.Repeat("func greet(name string) string {\n\tif name == \"\" {\n\t\treturn fmt.Sprintf(\"hello, %s\", name)\n\t}\n\tread_file(name)\n\treturn strings.ToUpper(name[:1]) + name[1:]\n}\n\n", 400)
	return map[string]string{"markdown": string(readme), "json": string(js), "go": src}
}

// BenchmarkNeutralizeData measures making typical data inert, for a parser
// without tools (Neutralize) and with the fuzz tools (Parser.Neutralize),
// against a parse of the same text: the ratios are the cost.
func BenchmarkNeutralizeData(b *testing.B) {
	p, _ := NewParser(fuzzTools)
	for _, name := range []string{"markdown", "json", "go"} {
		s := neutralizeData(b)[name]
		b.Run(name+"/tools", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				p.Neutralize(s)
			}
		})
		b.Run(name+"/neutralize", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				Neutralize(s)
			}
		})
		b.Run(name+"/parse", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				p.Parse(s)
			}
		})
	}
}
