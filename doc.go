// Package ptk is the shared vocabulary of ptk, a tool-calling runtime for any LLM.
//
// ptk teaches a model a small text protocol (a JSON object between <PTK_CALL>
// tags), parses whatever the model really writes, validates it against the
// tool's JSON Schema, runs the tool, feeds the result back and loops until the
// model answers. This package holds the types every part of ptk shares: tools
// ([Tool], [ToolInfo]), calls ([Call]), tool results ([Result]), conversation
// messages ([Message]), token usage ([Usage]) and the error codes ([Code],
// [Error]).
//
// The text protocol itself (system prompt, parser) lives in package protocol.
package ptk
