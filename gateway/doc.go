// Package gateway is an HTTP server that gives tool calling to models that
// lack it, in the three APIs programs and coding agents speak: OpenAI's Chat
// Completions (the SDKs, LangChain, opencode, an IDE plugin), Anthropic's
// Messages (Claude Code, the Claude Agent SDK) and OpenAI's Responses (the
// Codex CLI, the OpenAI Agents SDK). Any of them can send it requests with
// tools, whatever the model behind it.
//
// A [Server] serves POST /v1/chat/completions, POST /v1/messages (and
// /v1/messages/count_tokens), POST /v1/responses, GET /v1/models and GET
// /healthz. Each API is a translation layer over one exchange: its request
// is read into ptk's messages, tools and tool choice, served by the same
// model turn, and the answer written in its shape, whole or as its stream
// of events. A model name the agents' APIs ask for that the gateway does
// not serve (Config.Serves; Claude Code asks for claude-*) is served by the
// default model, or renamed by [Config].ModelMap. For each request the
// gateway resolves the model ([Config].Resolve) to an [Upstream] and
// answers in one of three ways (pass-through for Chat Completions only):
//
//   - Pass-through. When the model takes native tools, the request goes to
//     an OpenAI-compatible upstream as it came, every field kept (only its
//     model named again when needed), and the answer comes back as it is:
//     ids, usage and all. In agent.ModeAuto the answer is read on its way
//     back: calls the model wrote in its text (a server without a tool
//     parser takes the tools and ignores them) become tool_calls, and a
//     stream whose client did not ask for the usage gets it on its
//     finishing chunk. An upstream that is not OpenAI-compatible (no
//     Upstream.Forward) gets the tools through its llm.Model, with the same
//     reading of its text.
//   - The text protocol. When the model does not (Upstream.Mode
//     agent.ModePTK, a model that says so, or, in agent.ModeAuto, an
//     upstream that rejected the tools, which the server then remembers), the
//     gateway writes the tools and the conversation in ptk's protocol, reads
//     the calls out of what the model writes, in whichever format it drifts
//     into, checks them against the tools' schemas and returns standard
//     tool_calls with ids and finish_reason "tool_calls". Tool results come
//     back as role "tool" messages and are written as protocol results.
//     Streams carry text deltas without protocol tags, and each call as
//     delta.tool_calls as soon as it is read. tool_choice "required" or a
//     named function asks a model that answered in prose once more, with a
//     sharper instruction; so does a reply whose calls all failed to read or
//     validate, with the errors.
//   - The gateway's own tools ([Config].Tools), for requests that declare no
//     tools: it runs the agent loop and the client sees the answer.
//
// In the Messages and Responses APIs a call becomes a tool_use block or a
// function_call item once it is read and checked, so that what a stream
// sent never changes; reasoning becomes thinking blocks (when the request
// asks for thinking) or a reasoning item; a stream that waits for a slow
// model says it is alive ([Config].KeepAlive). Responses kept with store
// are continued with previous_response_id from [Config].Conversations.
//
// Every answer carries the upstream's token usage. Errors have the API's
// shape (Anthropic's types for Messages, OpenAI's otherwise): 400 for a malformed request, 401 without a valid key, 413 past the
// body cap, 429 with Retry-After past the concurrency cap, the upstream's own
// 4xx for a request it refused, 502 for an upstream that failed, 504 past the
// time limit. What a model writes never makes a 5xx. Each request is logged
// as one slog line: model, mode, calls, tokens, latency.
package gateway
