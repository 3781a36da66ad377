// Package anthropic is a client for Anthropic's Messages API
// (POST /v1/messages) and for the servers that speak it, such as Ollama
// since v0.14. A [Client] is an [llm.Model] and an [llm.Streamer]:
//
//	model := anthropic.New("", anthropic.WithAPIKey(key)) // https://api.anthropic.com
//	model := anthropic.New("http://localhost:11434")      // Ollama
//
// It translates; it never loops or runs tools. The system turns of an
// [llm.Request] become the top-level system prompt; an assistant turn's
// calls become tool_use blocks (arguments that are not a JSON object are
// sent as {}); tool results become tool_result blocks of a user turn; and
// consecutive turns of one role are merged, since the API wants user and
// assistant to alternate. ToolChoice "required" is the API's "any". A
// request without MaxTokens gets [DefaultMaxTokens] or [WithMaxTokens]'s,
// since the API requires one.
//
// The answer's text blocks make [llm.Response] Content, its thinking
// blocks Reasoning and its tool_use blocks Calls; FinishReason is the
// stop_reason as the API writes it ("end_turn", "tool_use", "max_tokens",
// "stop_sequence"). The API counts input_tokens apart from the tokens read
// from and written to the prompt cache; Usage.PromptTokens is their sum, as
// [llm.Price.Cost] expects, and CacheReadTokens and CacheWriteTokens are
// the cached parts. A stream yields one [llm.Chunk] per text, thinking or
// argument fragment, the first chunk of each call with its ID and tool,
// and the usage and stop reason last; [llm.Collect] turns it into the
// Response that Generate would have returned.
//
// Every failure is an *[llm.Error] classified by status, or for an error
// event in a stream by the error's type: a wrong key is [llm.ErrAuth], an
// unknown model [llm.ErrModelNotFound], a rate limit [llm.ErrRateLimited]
// (with the retry-after the API sent), a failure or an overload (529,
// "overloaded_error") [llm.ErrServer], and so on. Rate limits, server
// failures and broken connections are retried twice by default, after a
// jittered exponential pause or the retry-after the server asked for (up to
// a minute); a stream is retried only before its first chunk. A canceled or
// expired context ends a call at once with an error that wraps ctx.Err().
package anthropic
