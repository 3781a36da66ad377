// Package openai is a client for the OpenAI Chat Completions API
// (POST /chat/completions) and for the servers that speak it: Ollama's /v1,
// vLLM, llama.cpp's server, Groq, Together, OpenRouter and DeepSeek. A
// [Client] is an [llm.Model] and an [llm.Streamer]:
//
//	model := openai.New("http://localhost:11434/v1")
//	model := openai.New("https://api.openai.com/v1", openai.WithAPIKey(key))
//
// It maps [llm.Request] to the API's messages, tools and tool_choice, and
// the answer back to [llm.Response]: the text (a string or an array of text
// parts), the reasoning some servers return apart (reasoning_content or
// reasoning), the native tool calls (arguments as a JSON string or, as some
// servers send them, as JSON) and the token usage, cached prompt tokens
// included. A stream asks for usage ("stream_options") and yields one
// [llm.Chunk] per piece of text and per tool-call fragment; [llm.Collect]
// turns it into the Response that Generate would have returned.
//
// Every failure is an *[llm.Error] classified by status and by what the
// server said: a wrong key is [llm.ErrAuth], an unknown model
// [llm.ErrModelNotFound], a model or server that takes no tool definitions
// [llm.ErrToolsUnsupported] (Ollama's "does not support tools", vLLM without
// --enable-auto-tool-choice, llama.cpp without --jinja), and so on. Rate
// limits, server failures and broken connections are retried twice by
// default, after a jittered exponential pause or the Retry-After the server
// asked for (up to a minute); a stream is retried only before its first
// chunk. A canceled or expired context ends a call at once with an error
// that wraps ctx.Err().
package openai
