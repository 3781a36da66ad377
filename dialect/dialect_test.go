package dialect

import (
	"encoding/json"
	"github.com/ptkit/ptk/dialect/result"
	"reflect"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/lenient"
)

// testConfig declares the named tools and accepts every call as read.
func testConfig(tools ...string) *Config {
	return &Config{
		Declared: len(tools) > 0,
		Lookup: func(name string, exact bool) (bool, bool) {
			for _, t := range tools {
				if t == name || !exact && strings.EqualFold(t, name) {
					return true, false
				}
			}
			return false, false
		},
		Finish: func(c RawCall, id string) (result.Attempt, []result.Diagnostic) {
			a := result.Attempt{Call: ptk.Call{ID: id, Tool: c.Name, Args: json.RawMessage("{}")}, Offset: c.Offset}
			if c.Args != nil {
				a.Call.Args = lenient.AppendJSON(nil, c.Args, c.Src)
			}
			if c.Err != "" {
				a.Err = ptk.NewError(ptk.ParseError, c.ErrMsg, nil)
			}
			return a, nil
		},
		IDPrefix: "c",
	}
}

func TestDialects(t *testing.T) {
	for in, want := range map[string]string{
		`<PTK_CALL>{"tool": "read", "args": {"p": 1}}</PTK_CALL>`:        `read {"p": 1}`,
		`<tool_call>{"name": "read", "arguments": {"p": 1}}</tool_call>`: `read {"p": 1}`,
		`[TOOL_CALLS]read[ARGS]{"p": 1}`:                                 `read {"p": 1}`,
		"<function=read>\n<parameter=p>\nx\n</parameter>\n</function>":   `read {"p":"x"}`,
		"[read(p=1)]": `read {"p":1}`,
		"read<arg_key>p</arg_key><arg_value>x</arg_value>":                        `read {"p":"x"}`,
		"<|python_tag|>{\"name\": \"read\", \"parameters\": {\"p\": 1}}":          `read {"p": 1}`,
		"```json\n{\"name\": \"read\", \"arguments\": {\"p\": 1}}\n```":           `read {"p": 1}`,
		`<think><tool_call>{"name": "read", "arguments": {}}</tool_call></think>`: ``,
	} {
		cfg := testConfig("read")
		got := Parse(cfg, in)
		var calls []string
		for _, c := range got.Calls {
			calls = append(calls, c.Tool+" "+string(c.Args))
		}
		if strings.Join(calls, "; ") != want {
			t.Errorf("%q: calls %q, want %q", in, calls, want)
		}
		for k := 1; k < len(in); k++ {
			s := NewStream(cfg, nil)
			s.WriteString(in[:k])
			s.Flush() // read now: a small piece would wait for more
			s.WriteString(in[k:])
			if streamed := s.Finish(); !reflect.DeepEqual(got, streamed) {
				t.Errorf("%q split at %d: streamed %+v, whole %+v", in, k, streamed, got)
				break
			}
		}
	}
}

// TestStealableStart: a trailing word stays back for a construct that may
// claim it; an over-long one keeps its last maxWalkBack bytes back.
func TestStealableStart(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, c := range []struct {
		seg  string
		want int
	}{
		{"hello world", len("hello ")},
		{"hello world ", len("hello world ")},
		{"hello\nword\n", len("hello\n")},
		{"x " + long, len("x ") + 300 - maxWalkBack},
		{"", 0},
	} {
		if got := stealableStart([]byte(c.seg), -1); got != c.want {
			t.Errorf("%.20q: %d, want %d", c.seg, got, c.want)
		}
	}
}

func TestValidUTF8Prefix(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"abc", 3}, {"a\xc3", 1}, {"a\xc3\xa9", 3}, {"\xe2\x82", 0}, {"\xe2\x82\xac", 3}, {"", 0}} {
		if got := validUTF8Prefix([]byte(c.in)); got != c.want {
			t.Errorf("validUTF8Prefix(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
