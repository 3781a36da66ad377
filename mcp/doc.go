// Package mcp connects ptk to the Model Context Protocol, both ways, with
// the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// As a client, [Start] starts the servers of a configuration file in the
// shape other assistants use ({"mcpServers": {…}}, see [Config]) and gives
// their tools as ptk tools, named server__tool ([ToolName]), so that any
// model — also one without native function calling, through ptk's text
// protocol — can call them in an agent run:
//
//	cfg, err := mcp.LoadConfig(file)
//	client, err := mcp.Start(ctx, cfg, mcp.Options{})
//	defer client.Close()
//	opts.Tools = append(opts.Tools, client.Tools()...)
//
// A tool's readOnlyHint makes it read-only (no approval, parallel calls);
// its results become text ([ResultText]); a server that stops, hangs or
// refuses a call gives the model an error result, never a failed run.
// Every message from a server is read through a bound
// ([Options.MaxMessageBytes], 8 MiB by default): a larger result is cut,
// says so to the model first, and the server stays usable.
//
// As a server, [NewServer] offers ptk tools (the built-in ones, say) to
// any MCP client, with ptk's approval: `ptk mcp` serves it over stdio or
// streamable HTTP.
package mcp
