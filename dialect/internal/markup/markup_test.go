package markup

import (
	"testing"

	"github.com/ptkit/ptk/lenient"
)

func TestXMLCalls(t *testing.T) {
	cases := []struct {
		in       string
		name     string
		args     string
		complete bool
	}{
		{"<function=read_file>\n<parameter=path>\na.go\n</parameter>\n</function>", "read_file", `{"path":"a.go"}`, true},
		{"<function=write_file>\n<path>a.md</path>\n<content>\n<중요> x </중요>\n</content>\n</function>", "write_file", `{"path":"a.md","content":"<중요> x </중요>"}`, true},
		{`<function=get_time>{"tz": "UTC"}</func`, "get_time", `{"tz":"UTC"}`, true},
		{"<function=read_file>\n<parameter=path>\na.go", "read_file", `{"path":"a.go"}`, false},
	}
	for _, c := range cases {
		calls, complete := XMLCalls([]byte(c.in), 0)
		if len(calls) != 1 || calls[0].Err != "" {
			t.Errorf("%q: %+v", c.in, calls)
			continue
		}
		if got := string(lenient.AppendJSON(nil, calls[0].Args, nil)); calls[0].Name != c.name || got != c.args || complete != c.complete {
			t.Errorf("%q: %s %s complete %v, want %s %s %v", c.in, calls[0].Name, got, complete, c.name, c.args, c.complete)
		}
	}
}

func TestScanSkipsValues(t *testing.T) {
	for _, c := range []struct {
		in    string
		gemma bool
		want  int
	}{
		{"<parameter=c>a </tool_call> b</parameter></tool_call>", false, 41},
		{"call:f{a:<escape>x<end_function_call>y<escape>}<end_function_call>", true, 47},
	} {
		s := Scan{Closers: []string{"</tool_call>", "<end_function_call>"}, Gemma: c.gemma}
		if idx, _ := s.Find([]byte(c.in), true); idx != c.want {
			t.Errorf("%q: closer at %d, want %d", c.in, idx, c.want)
		}
	}
}

// TestGLMDroppedTags: a value whose <arg_value> opener the model dropped is
// read, with a repair; a key with no value at all makes the call unreadable
// rather than a call with an empty argument.
func TestGLMDroppedTags(t *testing.T) {
	calls, _ := GLM([]byte("search<arg_key>query</arg_key>vacation days</arg_value>"), 0, nil)
	if len(calls) != 1 || calls[0].Err != "" || string(lenient.AppendJSON(nil, calls[0].Args, nil)) != `{"query":"vacation days"}` || len(calls[0].Repairs) != 1 {
		t.Errorf("opener dropped: %+v", calls)
	}
	calls, _ = GLM([]byte("search<arg_key>query</arg_key>"), 0, nil)
	if len(calls) != 1 || calls[0].Err == "" {
		t.Errorf("no value: %+v", calls)
	}
}

func TestTrimValue(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\na.go\n", "a.go"},
		{"\n        Dallas\n        ", "Dallas"},
		{" latest news 2026 ", "latest news 2026"},
		{"\n  def f():\n      pass\n", "  def f():\n      pass"},
		{"value\n\n", "value\n\n"},
		{"a.go\n", "a.go"},
		{"    if x:\n        return 1\n", "    if x:\n        return 1\n"},
		{" ", " "},
		{"  indented", "  indented"},
	} {
		if got := string(trimValue([]byte(c.in))); got != c.want {
			t.Errorf("trimValue(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestGemmaParens: Gemma 4's calls in parentheses, in its own key:value form
// and in Python's.
func TestGemmaParens(t *testing.T) {
	for _, c := range []struct{ in, args string }{
		{`call:terminal(command:<|"|>ls -a<|"|>)`, `{"command":"ls -a"}`},
		{`call:get_weather(city="Tokyo", unit="celsius")`, `{"city":"Tokyo","unit":"celsius"}`},
	} {
		calls, ok := Gemma([]byte(c.in), 0)
		if !ok || len(calls) != 1 || calls[0].Err != "" || string(lenient.AppendJSON(nil, calls[0].Args, nil)) != c.args {
			t.Errorf("%s: %+v %v", c.in, calls, ok)
		}
	}
	if calls, ok := Gemma([]byte(`call:f(a="x"`), 0); ok || calls[0].Err == "" {
		t.Errorf("cut off: %+v %v", calls, ok)
	}
}

// TestGLMDroppedKey: the <arg_key> before the first key dropped, with the
// key after a space or glued to the name, and a name with a stray closer.
func TestGLMDroppedKey(t *testing.T) {
	split := func(s string) (string, bool) {
		if len(s) > len("send_command_to_shell") && s[:len("send_command_to_shell")] == "send_command_to_shell" {
			return "send_command_to_shell", true
		}
		return "", false
	}
	for _, c := range []struct{ in, name, args string }{
		{"send_command_to_shellcommand</arg_key><arg_value>echo test</arg_value>", "send_command_to_shell", `{"command":"echo test"}`},
		{"browser_action task</arg_key><arg_value>go</arg_value>", "browser_action", `{"task":"go"}`},
		{"tool_12</arg_value>", "tool_12", `{}`},
	} {
		calls, _ := GLM([]byte(c.in), 0, split)
		if len(calls) != 1 || calls[0].Err != "" || calls[0].Name != c.name || string(lenient.AppendJSON(nil, calls[0].Args, nil)) != c.args || len(calls[0].Repairs) == 0 {
			t.Errorf("%s: %+v", c.in, calls)
		}
	}
	if calls, _ := GLM([]byte("unknownkey</arg_key><arg_value>x</arg_value>"), 0, split); len(calls) != 1 || calls[0].Err == "" {
		t.Errorf("an undeclared glued name was split: %+v", calls)
	}
}

// TestRepeatedParameter: a parameter written again makes a list.
func TestRepeatedParameter(t *testing.T) {
	calls, _ := XMLCalls([]byte(`<invoke name="search"><city>A</city><city>B</city><city>C</city><n>1</n></invoke>`), 0)
	if len(calls) != 1 || string(lenient.AppendJSON(nil, calls[0].Args, nil)) != `{"city":["A","B","C"],"n":"1"}` {
		t.Errorf("%+v", calls)
	}
}

// TestCDATA: MiniCPM5's <param name="k"> and CDATA values, whose closers
// inside the CDATA are text.
func TestCDATA(t *testing.T) {
	in := `<function name="write_file"><param name="content"><![CDATA[example </param> and </function> end]]></param><param name="n">2</param></function>`
	calls, complete := XMLCalls([]byte(in), 0)
	if !complete || len(calls) != 1 || calls[0].Name != "write_file" ||
		string(lenient.AppendJSON(nil, calls[0].Args, nil)) != `{"content":"example </param> and </function> end","n":"2"}` {
		t.Errorf("%+v %v", calls, complete)
	}
	x := Scan{Closers: []string{"</function>"}}
	if i, _ := x.Find([]byte(in), true); i != len(in)-len("</function>") {
		t.Errorf("the call ends at %d, want %d", i, len(in)-len("</function>"))
	}
}

func TestKimiK3(t *testing.T) {
	in := `<|open|>tools<|sep|><|open|>call tool="weather" index="0"<|sep|><|open|>argument key="city" type="string"<|sep|>杭州<|close|>argument<|sep|><|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool="now" index="1"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>`
	calls, complete := KimiK3([]byte(in), 0)
	if !complete || len(calls) != 2 || calls[0].Name != "weather" || string(lenient.AppendJSON(nil, calls[0].Args, nil)) != `{"city":"杭州","days":"3"}` ||
		calls[1].Name != "now" || string(lenient.AppendJSON(nil, calls[1].Args, nil)) != `{}` {
		t.Errorf("%+v %v", calls, complete)
	}
	if _, complete := KimiK3([]byte(in[:120]), 0); complete {
		t.Error("a cut block read as complete")
	}
	one := `<|open|>call tool="now" index="0"<|sep|><|open|>argument key="tz" type="string"<|sep|>UTC<|close|>argument<|sep|><|close|>call<|sep|>`
	if calls, complete := KimiK3([]byte(one), 0); !complete || len(calls) != 1 || string(lenient.AppendJSON(nil, calls[0].Args, nil)) != `{"tz":"UTC"}` {
		t.Errorf("a call without its tools block: %+v %v", calls, complete)
	}
}
