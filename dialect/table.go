package dialect

import (
	"github.com/ptkit/ptk/dialect/internal/markup"
	"github.com/ptkit/ptk/dialect/tag"
)

// The dialects, in two tables: what can start at each trigger byte, and,
// for a tag, which dialect it belongs to. Adding a dialect is a file with its
// recognizer (and its region, if it needs one) and a row here.

// recognizers lists what may start at each byte that can start a construct.
// prose stops only at these bytes (and at line breaks, to track lines).
var recognizers = []struct {
	triggers string
	what     string
	rec      func(m *machine, i int) action
}{
	{"<", "a tag: see tagRules", (*machine).recognizeTag},
	{"[", "Mistral's [TOOL_CALLS], a pythonic call list [f(a=1)]", (*machine).recognizeBracket},
	{"{", "bare JSON naming a declared tool", (*machine).recognizeBrace},
	{"`~", "a code fence or span: fenced JSON, ```tool_code", (*machine).recognizeTicks},
	{">", "functionary's >>>name", (*machine).recognizeArrows},
	{"(", "name(...) on a line of its own, for a declared tool", (*machine).recognizeParen},
	// "[": also unknown markers around a declared tool's name and object,
	// [tool]name[args]{...}[end], and LM Studio's [TOOL_REQUEST]{...}.
}

// byTrigger and trigger are recognizers by byte.
var (
	byTrigger [256]func(m *machine, i int) action
	trigger   [256]bool
)

func init() {
	trigger['\n'] = true
	for _, r := range recognizers {
		for _, c := range []byte(r.triggers) {
			byTrigger[c], trigger[c] = r.rec, true
		}
	}
}

// tagRules lists the tags of every dialect. The tag read at a '<' goes to
// the first rule whose match accepts it; a tag no rule accepts is text.
var tagRules = []struct {
	dialect string
	match   func(t tag.Info) bool
	start   func(m *machine, i int, t tag.Info) action
}{
	{"MiniMax-M3 reasoning <mm:think>", func(t tag.Info) bool { return !t.Closing && t.Name == "mm:think" },
		func(m *machine, i int, t tag.Info) action { return m.think(t, "</mm:think>") }},
	{"reasoning: <think>, <thinking>", func(t tag.Info) bool { return !t.Closing && (t.Name == "think" || t.Name == "thinking") },
		func(m *machine, i int, t tag.Info) action { return m.think(t, "</"+t.Raw+">", "</"+t.Name+">") }},
	{"reasoning closed but never opened", func(t tag.Info) bool { return t.Closing && (t.Name == "think" || t.Name == "thinking") },
		(*machine).unopenedThink},
	{"Gemma 4 reasoning <|channel>thought...<channel|>", func(t tag.Info) bool { return t.Name == "channel" && t.BarL && !t.BarR && !t.Closing },
		func(m *machine, i int, t tag.Info) action { return m.think(t, "<channel|>") }},
	{"Gemma 4's <channel|> left over", func(t tag.Info) bool { return t.Name == "channel" && t.BarR && !t.BarL },
		func(m *machine, i int, t tag.Info) action { return m.drop(t) }},
	{"Apertus reasoning <|inner_prefix|>...<|inner_suffix|>", func(t tag.Info) bool { return barred(t) && t.Name == "inner_prefix" },
		func(m *machine, i int, t tag.Info) action { return m.think(t, "<|inner_suffix|>") }},
	{"Kimi-K3 <|open|>name<|sep|> (think, response, tools) and <|close|>name<|sep|>", func(t tag.Info) bool {
		return barred(t) && (t.Name == "open" || t.Name == "close")
	}, (*machine).kimi},
	{"Command R7B reasoning <|START_THINKING|>", func(t tag.Info) bool { return barred(t) && t.Name == "start_thinking" },
		func(m *machine, i int, t tag.Info) action { return m.think(t, "<|end_thinking|>") }},
	{"Kimi, DeepSeek section openers", func(t tag.Info) bool {
		return barred(t) && (t.Name == "tool_calls_begin" || t.Name == "tool_calls" || t.Name == "tool_calls_section_begin")
	}, (*machine).sectionOpener},
	{"Gemma 4 <|tool_call>...<tool_call|>", func(t tag.Info) bool {
		return wrapperNames[t.Name] && !t.Closing && t.BarL && !t.BarR && t.Name == "tool_call"
	}, func(m *machine, i int, t tag.Info) action {
		return m.wrapper(i, t, []string{"<tool_call|>"}, false, true)
	}},
	{"FunctionGemma <start_function_call>call:name{k:<escape>v<escape>}<end_function_call>", func(t tag.Info) bool {
		return t.Name == "start_function_call" && !t.Closing && !t.BarL && !t.BarR
	}, func(m *machine, i int, t tag.Info) action {
		return m.wrapper(i, t, []string{"<end_function_call>"}, false, true)
	}},
	{"FunctionGemma's <end_function_call> left over", func(t tag.Info) bool {
		return t.Name == "end_function_call" && !t.BarL && !t.BarR
	}, func(m *machine, i int, t tag.Info) action { return m.drop(t) }},
	{"PTK, Hermes/Qwen and other wrappers: <PTK_CALL>, <tool_call>, <function_calls>, ...", func(t tag.Info) bool {
		return wrapperNames[t.Name] && !t.Closing && !t.BarR
	}, (*machine).callWrapper},
	{"GigaChat 3 <|message_sep|>function call<|role_sep|>{...}", func(t tag.Info) bool { return barred(t) && t.Name == "message_sep" },
		(*machine).gigaChatHeader},
	{"special-token wrappers: Llama 4 <|python_start|>, LFM2, InternLM, Command R, Apertus, Phi-4, GigaChat", func(t tag.Info) bool {
		return barred(t) && barredWrappers[t.Name] != "" && !t.Closing
	}, func(m *machine, i int, t tag.Info) action {
		return m.wrapper(i, t, append([]string{barredWrappers[t.Name]}, wrapperClosers...), false, false)
	}},
	{"a wrapper's closer left over after a call", func(t tag.Info) bool { return wrapperNames[t.Name] && (t.Closing || t.BarR) },
		(*machine).strayCloser},
	{"<json>, <xml> around a call", func(t tag.Info) bool { return (t.Name == "json" || t.Name == "xml") && !t.Closing && !t.BarL },
		func(m *machine, i int, t tag.Info) action {
			return m.wrapper(i, t, []string{"</" + t.Name + ">"}, true, false)
		}},
	{"Qwen3-Coder and Claude XML without a wrapper: <function=...>, <invoke name=...>", func(t tag.Info) bool {
		return (t.Name == "function" || t.Name == "invoke" || t.Name == "tool") && !t.Closing && !t.BarL
	}, (*machine).xmlCall},
	{"an XML call's closer left over", func(t tag.Info) bool {
		return (t.Name == "function" || t.Name == "invoke" || t.Name == "function_calls") && t.Closing
	}, (*machine).strayCloser},
	{"a <response> wrapper around calls", func(t tag.Info) bool { return t.Name == "response" && t.Attrs == "" && !t.BarL && !t.BarR },
		(*machine).responseTag},
	{"Hunyuan's <answer>", func(t tag.Info) bool { return t.Name == "answer" && t.Attrs == "" && !t.BarL },
		func(m *machine, i int, t tag.Info) action { return m.drop(t) }},
	{"Mistral's end of sequence </s>", func(t tag.Info) bool { return t.Name == "s" && t.Closing && !t.BarL },
		(*machine).endOfSequence},
	{"GLM name<arg_key>...", func(t tag.Info) bool { return t.Name == "arg_key" && !t.Closing },
		(*machine).glmInline},
	{"a message's header: ChatML <|im_start|>assistant, Llama 3 <|start_header_id|>user<|end_header_id|>, Gemma <start_of_turn>model", func(t tag.Info) bool {
		return !t.Closing && (barred(t) && (t.Name == "im_start" || t.Name == "start_header_id") || t.Name == "start_of_turn" && !t.BarL && !t.BarR)
	}, (*machine).messageHeader},
	{"Gemma's end of a turn <end_of_turn>", func(t tag.Info) bool { return t.Name == "end_of_turn" && !t.Closing && !t.BarL && !t.BarR },
		func(m *machine, i int, t tag.Info) action { return m.drop(t) }},
	{"Llama 3 <|python_tag|>", func(t tag.Info) bool { return barred(t) && t.Name == "python_tag" },
		(*machine).pythonTag},
	{"Harmony <|start|>, <|channel|>", func(t tag.Info) bool { return barred(t) && (t.Name == "start" || t.Name == "channel") },
		(*machine).harmony},
	{"Kimi, DeepSeek <|tool_call_begin|>", func(t tag.Info) bool { return barred(t) && t.Name == "tool_call_begin" },
		(*machine).tokenCall},
	{"protocol tokens that are never text", func(t tag.Info) bool { return barred(t) && strayTokens[t.Name] },
		func(m *machine, i int, t tag.Info) action { return m.drop(t) }},
	{"Gemma 4's closer <tool_call|> left over", func(t tag.Info) bool { return t.BarR && !t.BarL && t.Name == "tool_call" },
		func(m *machine, i int, t tag.Info) action { return m.drop(t) }},
	{"Cline's and Roo Code's XML: <read_file><path>a.go</path></read_file>, for a declared tool", func(t tag.Info) bool {
		return markup.BareParam(t)
	}, (*machine).toolTag},
}

// barred reports a special token written with bars on both sides: <|name|>.
func barred(t tag.Info) bool { return t.BarL && t.BarR }
