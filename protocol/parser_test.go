package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
)

// testTools are the tools most parser tests declare.
var testTools = []ptk.ToolInfo{
	{Name: "read_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"]}`)},
	{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["city"]}`)},
	{Name: "bash", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer"}},"required":["command"]}`)},
	{Name: "search", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"filters":{"type":"object","properties":{"year":{"type":"integer"},"exact":{"type":"boolean"}}}},"required":["query"]}`)},
	{Name: "math.factorial", Parameters: json.RawMessage(`{"type":"dict","properties":{"number":{"type":"integer"}},"required":["number"]}`)},
	{Name: "now", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
}

type wantCall struct {
	tool string
	args string
}

type parseCase struct {
	name  string
	tools []ptk.ToolInfo // nil: testTools; use noTools for none
	in    string
	calls []wantCall
	text  *string
	kinds []DiagKind // diagnostics that must be present
}

var noTools = []ptk.ToolInfo{}

func str(s string) *string { return &s }

var parseCases = []parseCase{
	// PTK protocol
	{name: "ptk canonical", in: "<PTK_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"go.mod\"}, \"reasoning\": \"look\"}\n</PTK_CALL>",
		calls: []wantCall{{"read_file", `{"path":"go.mod"}`}}, text: str("")},
	{name: "ptk any case", in: `<Ptk_Call>{"tool": "read_file", "args": {"path": "a"}}</pTk_cAlL>`, calls: []wantCall{{"read_file", `{"path":"a"}`}}},
	{name: "ptk batch", in: `<PTK_BATCH>[{"tool": "read_file", "args": {"path": "a"}}, {"tool": "bash", "args": {"command": "ls"}}]</PTK_BATCH>`,
		calls: []wantCall{{"read_file", `{"path":"a"}`}, {"bash", `{"command":"ls"}`}}},
	{name: "legacy TOOL_CALL", in: `<TOOL_CALL>{"tool": "now", "args": {}}</TOOL_CALL>`, calls: []wantCall{{"now", `{}`}}},
	{name: "missing closing tag, JSON complete", in: `I'll look. <PTK_CALL>{"tool": "read_file", "args": {"path": "a"}}`,
		calls: []wantCall{{"read_file", `{"path":"a"}`}}, text: str("I'll look."), kinds: []DiagKind{DiagRepaired}},
	{name: "missing closing tag then prose", in: "<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"a\"}}\nWaiting for it.",
		calls: []wantCall{{"read_file", `{"path":"a"}`}}, text: str("Waiting for it.")},
	{name: "closing tag inside a string", in: `<PTK_CALL>{"tool": "bash", "args": {"command": "echo '</PTK_CALL>'"}}</PTK_CALL>`,
		calls: []wantCall{{"bash", `{"command":"echo '</PTK_CALL>'"}`}}},
	{name: "aliases name/parameters", in: `<PTK_CALL>{"name": "read_file", "parameters": {"path": "a"}}</PTK_CALL>`, calls: []wantCall{{"read_file", `{"path":"a"}`}}},
	{name: "alias function/input", in: `<PTK_CALL>{"function": "read_file", "input": {"path": "a"}}</PTK_CALL>`, calls: []wantCall{{"read_file", `{"path":"a"}`}}},
	{name: "args as a JSON string", in: `<PTK_CALL>{"tool": "read_file", "args": "{\"path\": \"a\"}"}</PTK_CALL>`,
		calls: []wantCall{{"read_file", `{"path":"a"}`}}},
	{name: "lenient JSON", in: "<PTK_CALL>{'tool': 'bash', 'args': {'command': 'echo it's ok', timeout: 5,}, /* c */ }</PTK_CALL>",
		calls: []wantCall{{"bash", `{"command":"echo it's ok","timeout":5}`}}, kinds: []DiagKind{DiagRepaired}},
	{name: "python literals", in: `<PTK_CALL>{"tool": "search", "args": {"query": "q", "filters": {"exact": True, "year": None}}}</PTK_CALL>`,
		calls: []wantCall{{"search", `{"query":"q","filters":{"exact":true}}`}}},
	{name: "raw newline in string", in: "<PTK_CALL>{\"tool\": \"bash\", \"args\": {\"command\": \"ls\n-la\"}}</PTK_CALL>",
		calls: []wantCall{{"bash", `{"command":"ls\n-la"}`}}},
	{name: "unescaped quotes in code", in: `<PTK_CALL>{"tool": "bash", "args": {"command": "echo "hi" > f.txt"}}</PTK_CALL>`,
		calls: []wantCall{{"bash", `{"command":"echo \"hi\" > f.txt"}`}}},
	{name: "mention of the tag in prose", in: "Use the <PTK_CALL> tag to call tools, and `<PTK_CALL>` too.",
		text: str("Use the <PTK_CALL> tag to call tools, and `<PTK_CALL>` too.")},
	{name: "truncated call", in: `<PTK_CALL>{"tool": "bash", "args": {"command": "rm -r`, kinds: []DiagKind{DiagTruncated}, text: str("")},
	{name: "truncated after opener", in: `Let me check. <tool_call>`, kinds: []DiagKind{DiagTruncated}, text: str("Let me check.")},
	{name: "think block", in: "<think>I could <PTK_CALL>{\"tool\": \"bash\", \"args\": {\"command\": \"rm -rf /\"}}</PTK_CALL></think>No.",
		text: str("No.")},
	{name: "unclosed think ending with a call", in: "<think>hmm <PTK_CALL>{\"tool\": \"now\", \"args\": {}}</PTK_CALL>\n",
		calls: []wantCall{{"now", `{}`}}, kinds: []DiagKind{DiagUnclosedThink}, text: str("")},
	{name: "unclosed think, a call thought of", in: "<think>hmm <PTK_CALL>{\"tool\": \"now\", \"args\": {}}</PTK_CALL> or not?", kinds: []DiagKind{DiagUnclosedThink}, text: str("")},
	{name: "unclosed think, a call cut", in: "<think>hmm <tool_call>{\"name\": \"now\", \"arguments\": {\"a", kinds: []DiagKind{DiagUnclosedThink}, text: str("")},
	{name: "doc example in a fence", tools: noTools,
		in:   "Write:\n```\n<PTK_CALL>{\"tool\": \"name\", \"args\": {}}</PTK_CALL>\n```\nThat's all.",
		text: str("Write:\n```\n<PTK_CALL>{\"tool\": \"name\", \"args\": {}}</PTK_CALL>\n```\nThat's all.")},
	{name: "doc example in a fence, undeclared tool",
		in:   "Write:\n```\n<PTK_CALL>{\"tool\": \"tool_name\", \"args\": {}}</PTK_CALL>\n```\nThat's all.",
		text: str("Write:\n```\n<PTK_CALL>{\"tool\": \"tool_name\", \"args\": {}}</PTK_CALL>\n```\nThat's all.")},
	{name: "call in a fence", in: "Reading.\n```json\n<PTK_CALL>{\"tool\": \"read_file\", \"args\": {\"path\": \"a\"}}</PTK_CALL>\n```",
		calls: []wantCall{{"read_file", `{"path":"a"}`}}, text: str("Reading.")},
	{name: "code fence with braces is text", in: "```go\nfunc main() { fmt.Println(\"{}\") }\n```",
		text: str("```go\nfunc main() { fmt.Println(\"{}\") }\n```")},
	{name: "inline code is text", in: "Call `read_file({\"path\": \"a\"})` yourself.", text: str("Call `read_file({\"path\": \"a\"})` yourself.")},

	// validation
	{name: "unknown tool", in: `<PTK_CALL>{"tool": "read_fle", "args": {"path": "a"}}</PTK_CALL>`, kinds: []DiagKind{DiagUnknownTool}},
	{name: "name corrected", in: `<PTK_CALL>{"tool": "ReadFile", "args": {"path": "a"}}</PTK_CALL>`,
		calls: []wantCall{{"read_file", `{"path":"a"}`}}, kinds: []DiagKind{DiagNameCorrected}},
	{name: "namespace", in: `<PTK_CALL>{"tool": "functions.read_file", "args": {"path": "a"}}</PTK_CALL>`, calls: []wantCall{{"read_file", `{"path":"a"}`}}},
	{name: "missing required", in: `<PTK_CALL>{"tool": "read_file", "args": {"offset": 1}}</PTK_CALL>`, kinds: []DiagKind{DiagMissingArgument}},
	{name: "wrong type", in: `<PTK_CALL>{"tool": "read_file", "args": {"path": "a", "offset": "ten"}}</PTK_CALL>`, kinds: []DiagKind{DiagWrongType}},
	{name: "coercion", in: `<PTK_CALL>{"tool": "search", "args": {"query": 42, "tags": "['a', 'b']", "filters": {"year": "2020", "exact": "false"}}}</PTK_CALL>`,
		calls: []wantCall{{"search", `{"query":"42","tags":["a","b"],"filters":{"year":2020,"exact":false}}`}}, kinds: []DiagKind{DiagCoerced}},
	{name: "enum case", in: `<PTK_CALL>{"tool": "get_weather", "args": {"city": "Oslo", "unit": "Celsius"}}</PTK_CALL>`,
		calls: []wantCall{{"get_weather", `{"city":"Oslo","unit":"celsius"}`}}},
	{name: "enum violation", in: `<PTK_CALL>{"tool": "get_weather", "args": {"city": "Oslo", "unit": "kelvin"}}</PTK_CALL>`, kinds: []DiagKind{DiagInvalidArgument}},
	{name: "unexpected argument dropped", in: `<PTK_CALL>{"tool": "read_file", "args": {"path": "a", "mood": "ok"}}</PTK_CALL>`,
		calls: []wantCall{{"read_file", `{"path":"a"}`}}, kinds: []DiagKind{DiagUnexpectedArgument}},
	{name: "BFCL dict schema", in: `[math.factorial(number=5)]`, calls: []wantCall{{"math.factorial", `{"number":5}`}}},
	{name: "BFCL underscore name", in: `<tool_call>{"name": "math_factorial", "arguments": {"number": "5"}}</tool_call>`,
		calls: []wantCall{{"math.factorial", `{"number":5}`}}},

	// other dialects
	{name: "hermes", in: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}\n</tool_call>", calls: []wantCall{{"get_weather", `{"city":"Tokyo"}`}}},
	{name: "hermes extra brace", in: `<tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}}</tool_call>`, calls: []wantCall{{"get_weather", `{"city":"Tokyo"}`}}},
	{name: "namespaced wrapper", in: "<minimax:tool_call><invoke name=\"get_weather\"><parameter name=\"city\">Rome</parameter></invoke></minimax:tool_call>",
		calls: []wantCall{{"get_weather", `{"city":"Rome"}`}}},
	{name: "claude function_calls", in: "<function_calls>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls -la</parameter>\n</invoke>\n</function_calls>",
		calls: []wantCall{{"bash", `{"command":"ls -la"}`}}, text: str("")},
	{name: "qwen xml typed by schema", in: "<tool_call>\n<function=search>\n<parameter=query>\nhello\n</parameter>\n<parameter=filters>\n{\"year\": 2020}\n</parameter>\n</function>\n</tool_call>",
		calls: []wantCall{{"search", `{"query":"hello","filters":{"year":2020}}`}}},
	{name: "glm in wrapper", in: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
		calls: []wantCall{{"get_weather", `{"city":"Paris","days":2}`}}},
	{name: "phi tool_call token", in: `<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|/tool_call|>`, calls: []wantCall{{"get_weather", `{"city":"Paris"}`}}},
	{name: "nemotron TOOLCALL", in: `<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>`, calls: []wantCall{{"get_weather", `{"city":"Paris"}`}}},
	{name: "firefunction", in: `functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]`, calls: []wantCall{{"get_weather", `{"city":"Paris"}`}}, text: str("")},
	{name: "llama python_tag builtin", in: `<|python_tag|>get_weather.call(city="Lima")<|eom_id|>`, calls: []wantCall{{"get_weather", `{"city":"Lima"}`}}, text: str("")},
	{name: "llama4 python_start", in: `<|python_start|>[get_weather(city="Quito")]<|python_end|>`, calls: []wantCall{{"get_weather", `{"city":"Quito"}`}}},
	{name: "harmony final", in: "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>",
		text: str("It is sunny.")},
	{name: "harmony call", in: "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"Paris\"}<|call|>",
		calls: []wantCall{{"get_weather", `{"city":"Paris"}`}}},
	{name: "openai response shape", in: `{"tool_calls": [{"id": "1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]}`,
		calls: []wantCall{{"get_weather", `{"city":"Rome"}`}}},
	{name: "pythonic positional with schema", in: `[get_weather('Paris', days=2)]`, calls: []wantCall{{"get_weather", `{"city":"Paris","days":2}`}}},
	{name: "tool_code fence", tools: noTools, in: "```tool_code\nget_weather(city=\"Paris\")\n```", calls: []wantCall{{"get_weather", `{"city":"Paris"}`}}},
	{name: "name call on its own line", in: "I'll check.\nget_weather(city=\"Berlin\")", calls: []wantCall{{"get_weather", `{"city":"Berlin"}`}}, text: str("I'll check.")},
	{name: "indented call on its own line", in: "Checking:\n    get_weather(city=\"Oslo\")", calls: []wantCall{{"get_weather", `{"city":"Oslo"}`}}},
	{name: "name call mid-sentence is text", in: "You could call get_weather(city=\"Berlin\") later.", text: str("You could call get_weather(city=\"Berlin\") later.")},

	// prose that is not a call
	{name: "braces in prose", in: "The set {1, 2} and {x: y} and {\"a\": 1}.", text: str("The set {1, 2} and {x: y} and {\"a\": 1}.")},
	{name: "JSON data in prose", in: `Here is the user: {"name": "Alice", "arguments": {"age": 30}}`, kinds: []DiagKind{DiagNotACall},
		text: str(`Here is the user: {"name": "Alice", "arguments": {"age": 30}}`)},
	{name: "brackets in prose", in: "See [1], [a](http://x) and [get_weather is fine].", text: str("See [1], [a](http://x) and [get_weather is fine].")},
	{name: "html in prose", in: "Use <div> and </p> and <br/> and a < b > c.", text: str("Use <div> and </p> and <br/> and a < b > c.")},
	{name: "leaked gemini syntax", in: `<call:default_api:x{a:1}/>`, kinds: []DiagKind{DiagUnsupported}, text: str(`<call:default_api:x{a:1}/>`)},
}

func TestParseCases(t *testing.T) {
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) {
			tools := c.tools
			if tools == nil {
				tools = testTools
			}
			p, err := NewParser(tools)
			if err != nil {
				t.Fatal(err)
			}
			r := p.Parse(c.in)
			var got []wantCall
			for _, call := range r.Calls {
				got = append(got, wantCall{call.Tool, compact(t, call.Args)})
			}
			want := c.calls
			for i := range want {
				want[i].args = compact(t, []byte(want[i].args))
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(wantCall{})); diff != "" {
				t.Errorf("calls (-want +got):\n%s\ndiagnostics: %+v", diff, r.Diagnostics)
			}
			if c.text != nil && r.Text != *c.text {
				t.Errorf("text = %q, want %q", r.Text, *c.text)
			}
			for _, k := range c.kinds {
				found := false
				for _, d := range r.Diagnostics {
					found = found || d.Kind == k
				}
				if !found {
					t.Errorf("no %s diagnostic in %+v", k, r.Diagnostics)
				}
			}
			// Streamed in small pieces, the reply reads the same.
			for _, size := range []int{1, 3} {
				if diff := cmp.Diff(r, streamParse(t, p, c.in, size)); diff != "" {
					t.Errorf("streamed by %d differs (-whole +streamed):\n%s", size, diff)
				}
			}
		})
	}
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %q: %v", b, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestDiagnosticsCarryPointersAndMessages(t *testing.T) {
	p, err := NewParser(testTools)
	if err != nil {
		t.Fatal(err)
	}
	r := p.Parse(`<PTK_CALL>{"tool": "search", "args": {"tags": [1, "b"], "filters": {"year": "soon"}}}</PTK_CALL>`)
	if len(r.Attempts) != 1 || r.Attempts[0].Err == nil {
		t.Fatalf("want one rejected attempt, got %+v", r.Attempts)
	}
	a := r.Attempts[0]
	if a.Err.Code != ptk.InvalidToolCall {
		t.Errorf("code = %s, want INVALID_TOOL_CALL", a.Err.Code)
	}
	ptrs := map[string]DiagKind{}
	for _, d := range r.Diagnostics {
		if d.CallID != a.Call.ID {
			t.Errorf("diagnostic %+v is not about %s", d, a.Call.ID)
		}
		ptrs[d.Pointer] = d.Kind
	}
	for ptr, kind := range map[string]DiagKind{"/query": DiagMissingArgument, "/filters/year": DiagWrongType} {
		if ptrs[ptr] != kind {
			t.Errorf("pointer %s: kind %q, want %q (all: %v)", ptr, ptrs[ptr], kind, ptrs)
		}
	}
	// "1" in a string array is coerced, so /tags/0 is not an error.
	if _, bad := ptrs["/tags/0"]; bad && ptrs["/tags/0"] != DiagCoerced {
		t.Errorf("/tags/0 reported as %s", ptrs["/tags/0"])
	}
	for _, want := range []string{"missing required argument \"query\"", "/filters/year: expected integer", "Parameters: query (string, required)"} {
		if !strings.Contains(a.Err.Message, want) {
			t.Errorf("message %q lacks %q", a.Err.Message, want)
		}
	}
}

func TestUnknownToolSuggests(t *testing.T) {
	p, _ := NewParser(testTools)
	r := p.Parse(`<tool_call>{"name": "get_wether", "arguments": {"city": "x"}}</tool_call>`)
	if len(r.Attempts) != 1 || r.Attempts[0].Err == nil || r.Attempts[0].Err.Code != ptk.ToolNotFound {
		t.Fatalf("attempts = %+v", r.Attempts)
	}
	if msg := r.Attempts[0].Err.Message; !strings.Contains(msg, `did you mean "get_weather"?`) {
		t.Errorf("message %q has no suggestion", msg)
	}
}

func TestValidJSONArgsKeptByteForByte(t *testing.T) {
	p, _ := NewParser(testTools)
	args := `{ "path" : "a.go",  "limit": 1e2 }`
	r := p.Parse(`<PTK_CALL>{"tool": "read_file", "args": ` + args + `}</PTK_CALL>`)
	if len(r.Calls) != 1 || string(r.Calls[0].Args) != args {
		t.Fatalf("args = %q, want %q exactly", r.Calls[0].Args, args)
	}
}

func TestIDsAndOffsets(t *testing.T) {
	p, _ := NewParser(testTools, WithIDPrefix("t"))
	in := `a <PTK_CALL>{"tool": "now", "args": {}}</PTK_CALL> b <PTK_CALL>{"tool": "nope", "args": {}}</PTK_CALL>`
	r := p.Parse(in)
	if len(r.Attempts) != 2 {
		t.Fatalf("attempts = %+v", r.Attempts)
	}
	for i, want := range []string{"t1", "t2"} {
		a := r.Attempts[i]
		if a.Call.ID != want {
			t.Errorf("attempt %d id = %q, want %q", i, a.Call.ID, want)
		}
		if !strings.HasPrefix(in[a.Offset:], "<PTK_CALL>") {
			t.Errorf("attempt %d offset %d does not point at its call", i, a.Offset)
		}
	}
	if len(r.Calls) != 1 || r.Calls[0].ID != "t1" {
		t.Errorf("calls = %+v", r.Calls)
	}
}

func TestStartInThink(t *testing.T) {
	p, _ := NewParser(testTools, StartInThink())
	r := p.Parse(`maybe <PTK_CALL>{"tool": "now", "args": {}}</PTK_CALL></think>The answer.`)
	if len(r.Attempts) != 0 || r.Text != "The answer." || !strings.Contains(r.Reasoning, "maybe") {
		t.Fatalf("got %+v", r)
	}
}

func TestNewParserRejectsBadTools(t *testing.T) {
	for _, tools := range [][]ptk.ToolInfo{
		{{Name: "a"}, {Name: "a"}},
		{{Name: ""}},
		{{Name: "a", Parameters: json.RawMessage(`[1]`)}},
		{{Name: "a", Parameters: json.RawMessage(`{"type": "object", "properties": {"x": {"type": 5}}}`)}},
	} {
		if _, err := NewParser(tools); err == nil {
			t.Errorf("NewParser(%+v) accepted", tools)
		}
	}
}

func TestStreamEvents(t *testing.T) {
	p, _ := NewParser(testTools)
	var kinds []EventKind
	var deltas strings.Builder
	s := p.NewStream(func(e Event) {
		if len(kinds) == 0 || kinds[len(kinds)-1] != e.Kind {
			kinds = append(kinds, e.Kind)
		}
		if e.Kind == EventCallDelta {
			deltas.WriteString(e.Text)
		}
	})
	in := `Hi <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call> bye`
	for i := 0; i < len(in); i++ {
		s.WriteString(in[i : i+1])
	}
	r := s.Finish()
	want := []EventKind{EventText, EventCallStart, EventCallDelta, EventCallEnd, EventText}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("event kinds (-want +got):\n%s", diff)
	}
	if deltas.String() != `{"name": "get_weather", "arguments": {"city": "Paris"}}` {
		t.Errorf("args deltas = %q", deltas.String())
	}
	if r.Text != "Hi  bye" {
		t.Errorf("text = %q", r.Text)
	}
	if _, err := s.WriteString("more"); err == nil {
		t.Error("Write after Finish did not fail")
	}
}

// TestParserIsSafeToShare parses with one Parser from many goroutines (run
// with -race).
func TestParserIsSafeToShare(t *testing.T) {
	p, err := NewParser(testTools)
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{
		`<PTK_CALL>{"tool": "search", "args": {"query": "q", "tags": "['a']", "filters": {"year": "2020"}}}</PTK_CALL>`,
		"<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
		`[get_weather(city='Paris'), math.factorial(number=5)]`,
		`<PTK_CALL>{"tool": "read_file", "args": {"offset": "x"}}</PTK_CALL>`,
	}
	want := make([]Parsed, len(inputs))
	for i, in := range inputs {
		want[i] = p.Parse(in)
	}
	done := make(chan struct{})
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for n := 0; n < 50; n++ {
				i := (g + n) % len(inputs)
				if got := p.Parse(inputs[i]); !cmp.Equal(got, want[i]) {
					t.Errorf("input %d parsed differently under concurrency", i)
					return
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
}

// TestLongWordBeforeConstruct streams a word longer than the prose a stream
// holds back, before a construct that claims the word before it: the stream
// must give up on the word as the whole parse does, not find a short word
// where it moved the start of the long one to the text (issue 13, item 7).
func TestLongWordBeforeConstruct(t *testing.T) {
	long := strings.Repeat("a", 100)
	tools := []ptk.ToolInfo{{Name: long}, {Name: "a"}}
	for _, in := range []string{
		strings.Repeat("0", 66) + "<Arg_keY>",
		strings.Repeat("0", 66) + "<arg_key>k</arg_key><arg_value>v</arg_value>",
		long + "(x=1)",
		strings.Repeat("a", 200) + "(x=1)",
		strings.Repeat("b", 70) + "-a<arg_key>k</arg_key><arg_value>v</arg_value>",
	} {
		p, err := NewParser(tools)
		if err != nil {
			t.Fatal(err)
		}
		whole := p.Parse(in)
		for _, size := range []int{1, 7, 33} {
			if got := streamParse(t, p, in, size); !cmp.Equal(whole, got) {
				t.Errorf("%.20q… in chunks of %d: streamed differs (-whole +streamed):\n%s", in, size, cmp.Diff(whole, got))
			}
		}
	}
}
