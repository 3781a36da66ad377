// Package completion runs models that have no chat API, only text in and
// text out: llama.cpp's native POST /completion ([LlamaCpp]), the legacy
// OpenAI POST /v1/completions that vLLM, llama.cpp and Ollama also serve
// ([OpenAI]), and any Go function that answers a prompt — a local binary, a
// browser-driven chat ([Func], [FuncStream]). Each is an [llm.Model]; those
// that can stream are [llm.Streamer]s.
//
// A completion model reads one prompt: each is an [llm.TextCompleter]. A
// caller that flattens the conversation with its own formatter (an agent in
// its text-protocol mode, with the run's formatter) sends the result as
// [llm.Request.Prompt], and the model sends it as it is. Without a Prompt,
// the model flattens [llm.Request.Messages] itself into a plain transcript:
// SYSTEM:, USER:, ASSISTANT: and TOOL: turns, each header alone on its line
// and every line of a message that would read as a header escaped with a
// backslash, ending with the cue "ASSISTANT:\n"; an assistant's native calls
// are written as one JSON object a line ({"tool": …, "args": …}) and tool
// results under a line that names their tool and call. The transcript adds
// nothing else: a conversation in the text protocol already holds the
// protocol, the tool definitions and the results in its messages.
//
// None of them takes native tool definitions: each implements
// [llm.ToolSupporter] with SupportsNativeTools() false, and a request with
// Tools fails, before anything is sent, with an *[llm.Error] of kind
// [llm.ErrToolsUnsupported], so that an agent in auto mode switches to the
// text protocol.
//
// The model must stop where its turn ends. Every call adds "\nUSER:" and
// "\nTOOL:" to the request's own stop sequences (OpenAI's /v1/completions
// takes at most four: the two turn headers and the first two of the
// request's are sent), and the text is cut, here, at the first line that
// starts with a turn header (SYSTEM:, USER:, ASSISTANT: or TOOL:) and at the
// first of the request's stop sequences: what a server did not stop at, and
// everything a [Func] writes. A stream holds back the few bytes that may
// begin one of them, and when it is cut here it is closed at once: the
// response then has FinishReason "stop" and no usage.
//
// Failures are *[llm.Error]s classified as in llm/openai: llama.cpp's
// {"error":{"code":503,"message":"Loading model"}} is [llm.ErrServer], and
// like rate limits and broken connections it is retried (twice by default,
// after a jittered exponential pause or the Retry-After the server asked
// for); a stream is retried only before its first chunk. A canceled or
// expired context ends a call at once, closing its stream, with an error
// that wraps ctx.Err().
package completion
