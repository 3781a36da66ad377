package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
