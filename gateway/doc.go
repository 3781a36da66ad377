// Package gateway is an OpenAI-compatible HTTP server that gives tool
// calling to models that lack it. Any program that speaks the Chat
// Completions API (the official SDKs, LangChain, an IDE plugin) can send it
// requests with tools, whatever the model behind it.
//
// A [Server] serves POST /v1/chat/completions, GET /v1/models and GET
// /healthz. For each request it resolves the model ([Config].Resolve) to an
// [Upstream] and answers in one of three ways:
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
// Every answer carries the upstream's token usage. Errors have OpenAI's
// shape: 400 for a malformed request, 401 without a valid key, 413 past the
// body cap, 429 with Retry-After past the concurrency cap, the upstream's own
// 4xx for a request it refused, 502 for an upstream that failed, 504 past the
// time limit. What a model writes never makes a 5xx. Each request is logged
// as one slog line: model, mode, calls, tokens, latency.
package gateway
