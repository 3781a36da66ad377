// Package dialect finds tool calls in what a model wrote, in every format
// models write them: PTK tags in any case, Hermes/Qwen <tool_call> and its
// wrapper variants, Qwen3-Coder and Claude XML, Mistral [TOOL_CALLS], Llama
// <|python_tag|>, pythonic [f(a=1)] lists, GLM, Gemma and FunctionGemma,
// Kimi, DeepSeek and Harmony tokens, functionary, fenced and bare JSON.
//
// It is one linear scanner (scan.go): prose is read up to a trigger byte,
// where a recognizer (recognize.go) decides within a bounded look-ahead
// whether a construct starts; a construct is read by its region (region_*.go,
// xmlcalls.go), which hands the calls it read to [Config.Finish]. A decision
// that needs bytes not yet written waits for them, so [NewStream] reads a
// reply split anywhere exactly as [Parse] reads it whole.
//
// What a call means for the declared tools (names, schemas, validation) is
// not its business: the protocol package supplies that through [Config]. It
// builds on the lenient JSON layer and the root ptk vocabulary only.
package dialect
