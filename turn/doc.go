// Package turn is one model turn, the piece every way of using a model in
// ptk shares: the agent's loop, the gateway, and what calls a model from
// code. A Turn makes one model call — streamed or whole — feeds what the
// model writes to the protocol parser, checks native calls against the
// tools' schemas, and reports each step as an Event while the answer comes:
// text, reasoning, calls as they start, grow and end. Its Reply holds the
// prose, the text as written, the calls (each checked, with the error the
// model should read when it cannot run), the usage and the cost.
//
// A History is the conversation a turn sends, rendered for the model once
// per message as it grows — the text protocol's system prompt, replies and
// results in PTK mode, the provider's own messages in Native mode — so that
// a long run costs each model call its new turn, not its whole past.
//
// The turn never runs a tool, loops, or speaks HTTP: the agent and the
// gateway do, each on top of it.
package turn
