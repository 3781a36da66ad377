// Package acp makes ptk an agent of the Agent Client Protocol (ACP: JSON-RPC
// over stdio), the way editors reach coding agents: Zed, the JetBrains IDEs,
// Neovim (CodeCompanion, avante), Emacs, and ptk's own VS Code chat view.
// `ptk acp` serves it on stdin and stdout.
//
// [Serve] runs the agent over one connection, with the official Go SDK
// (github.com/coder/acp-go-sdk) for the wire. Each ACP session is a
// conversation in the session's folder (its cwd, the workspace the tools are
// confined to), and each prompt is one run of [agent.Stream]: the loop is
// ptk's, never a second one, and what it reports becomes session/update
// notifications as it goes: the answer and the reasoning as they stream,
// each tool call with its kind, title, locations and arguments, its status
// as it runs, and its result (a diff for an edit, the editor's terminal for
// a command), and the plan when the model writes one with update_plan.
//
// Calls that change something are approved as in `ptk run`: the user's
// policy file decides first (tool.Policy), then the session's mode (a
// tool.Preset: plan, ask or auto-edit), then the user, through
// session/request_permission (allow once, allow always for that tool,
// reject). When the editor offers fs/read_text_file and fs/write_text_file,
// read_file, edit_file and write_file read and write through its buffers
// (tools/fs.WithEditor), after the workspace's own checks; when it offers
// terminal/*, bash runs in its terminals (tools/shell.WithExecutor). Without
// them, ptk's own confined tools work on the disk.
//
// Conversations are kept in a store (the trace store under `ptk acp`), so
// that session/load replays one as updates after a restart, and session/list
// lists a folder's. The editor's MCP servers start with the session through
// package mcp. A prompt that starts with "/" is one of ptk's commands
// (/help, /tools, /mode, /model, /cost, /clear), announced to the editor with
// available_commands_update.
//
// Everything the model writes reaches the editor as data: JSON strings in
// notifications, never a message of the protocol, whatever it contains. What
// the editor sends as context (an embedded file) reaches the model
// neutralised, as tool results do (protocol.Neutralize), so a file's text
// cannot read as a call.
package acp
