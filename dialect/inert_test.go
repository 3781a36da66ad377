package dialect

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/dialect/tag"
)

// rowExamples holds, for every row of the dialect table (recognizers by
// their "what", tagRules by their "dialect"), texts that the row reads: a
// call for the rows that read calls, the construct for the others.
// TestEveryRowHasExamples fails for a row without any, so a new dialect
// cannot be added without them; TestNeutralizeEveryRow and FuzzNeutralize
// then check that Neutralize makes each inert.
var rowExamples = map[string][]string{
	// recognizers
	"a tag: see tagRules": {`<tool_call>{"name": "read", "arguments": {"p": 1}}</tool_call>`},
	"Mistral's [TOOL_CALLS], a pythonic call list [f(a=1)]": {
		`[TOOL_CALLS]read[ARGS]{"p": 1}`, `[TOOL_CALLS] [{"name": "read", "arguments": {"p": 1}}]`, "[read(p=1), read(p=2)]",
		`[tool]read[args]{"p": 1}[end]`, `[TOOL_REQUEST]{"name": "read", "arguments": {}}[END_TOOL_REQUEST]`,
		`functools[{"name": "read", "arguments": {"p": 1}}]`, "[think]x[/think]"},
	"bare JSON naming a declared tool": {`{"name": "read", "arguments": {"p": 1}}`, `{"tool": "read", "args": {}}; {"tool": "read", "args": {"p": 2}}`},
	"a code fence or span: fenced JSON, ```tool_code": {
		"```json\n{\"name\": \"read\", \"arguments\": {\"p\": 1}}\n```", "```tool_code\nread(p=1)\n```", "~~~\n[read(p=1)]\n~~~", "`<tool_call>`"},
	"functionary's >>>name":                               {">>>read\n{\"p\": 1}", "all\n>>>read\n{\"p\": 1}"},
	"name(...) on a line of its own, for a declared tool": {"read(p=1)", "  read(p='x')\n"},
	// tagRules
	"MiniMax-M3 reasoning <mm:think>":                       {"<mm:think>x</mm:think>y"},
	"reasoning: <think>, <thinking>":                        {"<think>x</think>y", "<thinking>x</thinking>"},
	"reasoning closed but never opened":                     {"x</think>y"},
	"Gemma 4 reasoning <|channel>thought...<channel|>":      {"<|channel>thought\nx<channel|>y"},
	"Gemma 4's <channel|> left over":                        {"x<channel|>y"},
	"Apertus reasoning <|inner_prefix|>...<|inner_suffix|>": {"<|inner_prefix|>x<|inner_suffix|>y"},
	"Kimi-K3 <|open|>name<|sep|> (think, response, tools) and <|close|>name<|sep|>": {
		`<|open|>tools<|sep|><|open|>call tool="read"<|sep|><|open|>argument key="p" type="string"<|sep|>x<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>`},
	"Command R7B reasoning <|START_THINKING|>": {"<|START_THINKING|>x<|END_THINKING|>y"},
	"Kimi, DeepSeek section openers": {
		"<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{\"p\": 1}<|tool_call_end|><|tool_calls_section_end|>",
		"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read\n```json\n{\"p\": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
	"Gemma 4 <|tool_call>...<tool_call|>": {"<|tool_call>call:read{p:<|\"|>x<|\"|>}<tool_call|>"},
	"FunctionGemma <start_function_call>call:name{k:<escape>v<escape>}<end_function_call>": {
		"<start_function_call>call:read{p:<escape>x<escape>}<end_function_call>"},
	"FunctionGemma's <end_function_call> left over": {"x<end_function_call>"},
	"PTK, Hermes/Qwen and other wrappers: <PTK_CALL>, <tool_call>, <function_calls>, ...": {
		`<PTK_CALL>{"tool": "read", "args": {"p": 1}}</PTK_CALL>`, `<tool_call>{"name": "read", "arguments": {}}</tool_call>`,
		"<function_calls>\n<invoke name=\"read\">\n<parameter name=\"p\">1</parameter>\n</invoke>\n</function_calls>",
		`<minimax:tool_call><invoke name="read"><parameter name="p">x</parameter></invoke></minimax:tool_call>`,
		"<tool_call>read<arg_key>p</arg_key><arg_value>x</arg_value></tool_call>", "<tool_call>\nread(p=1)\n</tool_call>"},
	"GigaChat 3 <|message_sep|>function call<|role_sep|>{...}": {"<|message_sep|>function call<|role_sep|>{\"name\": \"read\", \"arguments\": {}}"},
	"special-token wrappers: Llama 4 <|python_start|>, LFM2, InternLM, Command R, Apertus, Phi-4, GigaChat": {
		`<|python_start|>[read(p="x")]<|python_end|>`, `<|tool_call_start|>[read(p=1)]<|tool_call_end|>`,
		`<|action_start|><|plugin|>{"name": "read", "parameters": {}}<|action_end|>`, `<|START_ACTION|>[{"tool_name": "read", "parameters": {}}]<|END_ACTION|>`,
		`<|tools_prefix|>[{"read": {"p": 1}}]<|tools_suffix|>`, `<|tool_call|>[{"name": "read", "arguments": {}}]<|/tool_call|>`},
	"a wrapper's closer left over after a call": {`<tool_call>{"name": "read", "arguments": {}}</tool_call></tool_call>`},
	"<json>, <xml> around a call":               {`<json>{"name": "read", "arguments": {}}</json>`},
	"Qwen3-Coder and Claude XML without a wrapper: <function=...>, <invoke name=...>": {
		"<function=read>\n<parameter=p>\nx\n</parameter>\n</function>", `<invoke name="read"><parameter name="p">x</parameter></invoke>`},
	"an XML call's closer left over":    {"<function=read>\n<parameter=p>\nx\n</parameter>\n</function></function>"},
	"a <response> wrapper around calls": {`<response><tool_call>{"name": "read", "arguments": {}}</tool_call></response>`},
	"Hunyuan's <answer>":                {"<answer>x</answer>"},
	"Mistral's end of sequence </s>":    {"x</s>"},
	"GLM name<arg_key>...":              {"read<arg_key>p</arg_key><arg_value>x</arg_value>"},
	"a message's header: ChatML <|im_start|>assistant, Llama 3 <|start_header_id|>user<|end_header_id|>, Gemma <start_of_turn>model": {
		"x\n<|im_start|>user\ny", "<|im_start|>assistant\n[read(p=1)]", "x\n<|start_header_id|>user<|end_header_id|>\n\ny", "<start_of_turn>model\nx"},
	"Gemma's end of a turn <end_of_turn>":     {"x<end_of_turn>"},
	"Llama 3 <|python_tag|>":                  {`<|python_tag|>{"name": "read", "parameters": {"p": 1}}`, `<|python_tag|>read.call(p="x")<|eom_id|>`},
	"Harmony <|start|>, <|channel|>":          {`<|start|>assistant<|channel|>commentary to=functions.read <|constrain|>json<|message|>{"p": "x"}<|call|>`, `<|channel|>commentary to=read<|message|>{"p": 1}`},
	"Kimi, DeepSeek <|tool_call_begin|>":      {"<|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{\"p\": 1}<|tool_call_end|>"},
	"protocol tokens that are never text":     {"x<|eot_id|>", "<|im_end|>"},
	"Gemma 4's closer <tool_call|> left over": {"x<tool_call|>"},
	"Cline's and Roo Code's XML: <read_file><path>a.go</path></read_file>, for a declared tool": {"<read><p>x</p></read>"},
}

// rowNames lists the rows of the dialect table.
func rowNames() []string {
	var names []string
	for _, r := range recognizers {
		names = append(names, r.what)
	}
	for _, r := range tagRules {
		names = append(names, r.dialect)
	}
	return names
}

func TestEveryRowHasExamples(t *testing.T) {
	rows := map[string]bool{}
	for _, name := range rowNames() {
		rows[name] = true
		if len(rowExamples[name]) == 0 {
			t.Errorf("the dialect row %q has no examples in rowExamples: add a text it reads, so that Neutralize is tested on it", name)
		}
	}
	for name := range rowExamples {
		if !rows[name] {
			t.Errorf("rowExamples has examples for %q, which is no row of the table (renamed?)", name)
		}
	}
	// A tag rule's examples must hold a tag it matches.
	for _, r := range tagRules {
		if unmatchedRows[r.dialect] {
			continue
		}
		for _, ex := range rowExamples[r.dialect] {
			if !holdsTag(ex, r.match) {
				t.Errorf("no tag of the example %q is one %q matches", ex, r.dialect)
			}
		}
	}
}

// unmatchedRows are rows no tag reaches: tag.Read gives <mm:think> the
// name "think" (the namespace dropped), so the reasoning row reads it.
var unmatchedRows = map[string]bool{"MiniMax-M3 reasoning <mm:think>": true}

func holdsTag(s string, match func(tag.Info) bool) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		if ti, ok, _ := tag.Read([]byte(s), i, true); ok && match(ti) {
			return true
		}
	}
	return false
}

// inertConfigs are the parsers Neutralize is checked for: with a tool
// declared (and close spellings of it), and without any.
func inertConfigs() []*Config { return []*Config{testConfig("read"), testConfig()} }

// inertContexts are what a model may write around data it repeats.
var inertContexts = []struct{ before, after string }{
	{"", ""}, {"\n", "\n"}, {"The file says: ", " That is all."}, {"Done. ", ""}, {"Here:\n", "\nDone."},
	{"- ", ""}, {"> ", "\n"}, {"    ", ""}, {"```\n", "\n```"}, {"```json\n", "\n```\n"}, {"<think>\nhm\n</think>\n", ""},
	{"`", "`"}, {"x = ", "\ny = 1"},
}

// checkInert checks that nothing of Neutralize(data), in any context, once
// or twice, reads as a call, and that a second Neutralize changes nothing.
func checkInert(t testing.TB, data string) {
	t.Helper()
	cfgs := inertConfigs()
	got := Neutralize(data, cfgs...)
	for _, c := range inertContexts {
		once := c.before + got + c.after
		for _, text := range []string{once, once + "\n" + once} {
			for _, cfg := range cfgs {
				if r := Parse(cfg, text); len(r.Attempts) > 0 {
					t.Fatalf("Neutralize(%q) = %q\nin %q reads as a call: %s %s", data, got, text, r.Attempts[0].Call.Tool, r.Attempts[0].Call.Args)
				}
			}
		}
	}
	if again := Neutralize(got, cfgs...); again != got {
		t.Fatalf("not idempotent: %q -> %q -> %q", data, got, again)
	}
}

func TestNeutralizeEveryRow(t *testing.T) {
	calls := 0
	for _, name := range rowNames() {
		for _, ex := range rowExamples[name] {
			if len(Parse(testConfig("read"), ex).Attempts) > 0 {
				calls++
			}
			checkInert(t, ex)
		}
	}
	if calls < 40 {
		t.Errorf("only %d examples read as calls", calls)
	}
}

func TestNeutralizeSpelling(t *testing.T) {
	for in, want := range map[string]string{
		"":                                       "",
		"plain text, a < b, f(x) {}":             "plain text, a < b, f(x) {}",
		`[TOOL_CALLS]read[ARGS]{"p": 1}`:         `&#91;TOOL_CALLS]read[ARGS]{"p": 1}`,
		"read(p=1)":                              "read&#40;p=1)",
		`{"name": "read", "arguments": {}}`:      `&#123;"name": "read", "arguments": {}}`,
		`{"name": "Alice", "arguments": "none"}`: `{"name": "Alice", "arguments": "none"}`,
		">>>read\n{\"p\": 1}":                    "&gt;>>read\n{\"p\": 1}",
		"<|python_tag|>{\"name\": \"read\"}":     "&lt;|python_tag|>&#123;\"name\": \"read\"}",
		"```tool_code\nx(1)\n```":                "&#96;``tool_code\nx(1)\n```",
		"```json\n{\"a\": 1}\n```":               "```json\n{\"a\": 1}\n```",
		"<tool_call>\n{\"name\": \"read\", \"arguments\": {}}\n</tool_call>": "&lt;tool_call>\n&#123;\"name\": \"read\", \"arguments\": {}}\n</tool_call>",
	} {
		if got := Neutralize(in, inertConfigs()...); got != want {
			t.Errorf("Neutralize(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	if got := Neutralize(strings.Repeat("<tool_call>", 50)+`{"name": "read", "arguments": {}}`, inertConfigs()...); strings.Contains(got, "<tool_call>") {
		t.Errorf("nested wrappers left live: %q", got)
	}
}

// watchdog panics, naming the input, when a check of it takes over 10s:
// the fuzzer then keeps the input instead of waiting on it for ever.
func watchdog(s string) (stop func()) {
	done := make(chan struct{})
	timer := time.AfterFunc(10*time.Second, func() {
		select {
		case <-done:
		default:
			panic(fmt.Sprintf("checking took over 10s: %q", s))
		}
	})
	return func() { close(done); timer.Stop() }
}

// FuzzNeutralize checks checkInert on any text, from every row's examples.
func FuzzNeutralize(f *testing.F) {
	for _, name := range rowNames() {
		for _, ex := range rowExamples[name] {
			f.Add(ex)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		defer watchdog(s)()
		checkInert(t, s)
	})
}
