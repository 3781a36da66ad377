package markup

import "github.com/ptkit/ptk/lenient"

// Reasoning that is never closed ends where a call opens in it when the
// reply ends with the calls (llama.cpp, Ollama and SGLang read it so): the
// model forgot the closer its template expects. A call followed by more
// reasoning was only thought of, and stays reasoning. ThinkCallOpeners
// start a call in reasoning (in lower case).
var (
	ThinkCallOpeners = []string{"<tool_call>", "<function=", "<ptk_call>", "<|tool_call>",
		"<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<｜tool▁calls▁begin｜>",
		"<start_function_call>", "[tool_calls]", "<|python_start|>", "<|python_tag|>", "<tool_calls>", "<function_calls>",
		"<｜dsml｜tool_calls>"}
	// what the reply may end with after its calls: a closer, or the end of
	// a call's JSON or list when the closer is missing
	thinkCallEnds = []string{"</tool_call>", "</function>", "</ptk_call>", "<tool_call|>", "<|tool_call_end|>",
		"<|tool_calls_section_end|>", "<｜tool▁calls▁end｜>", "<end_function_call>",
		"<|python_end|>", "</tool_calls>", "</function_calls>", "</｜dsml｜tool_calls>", "]", "}"}
)

// EndsWithCalls reports whether b ends, but for white space, as calls do.
func EndsWithCalls(b []byte) bool {
	n := len(b)
	for n > 0 && lenient.IsWS(b[n-1]) {
		n--
	}
	for _, e := range thinkCallEnds {
		if lenient.HasSuffixFold(b[:n], e) {
			return true
		}
	}
	return false
}
