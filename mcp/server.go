package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/version"
	"github.com/ptkit/ptk/tool"
)

// Caps on what one call of a served tool returns, as agent.Options has
// them for a run.
const (
	DefaultMaxResultBytes = 50 << 10
	DefaultMaxResultLines = 2000
)

// ServerOptions configure [NewServer].
type ServerOptions struct {
	// Name and Version are how the server names itself to clients;
	// default "ptk" and ptk's module version (package internal/version).
	Name, Version string
	// Instructions tell clients what the server is for.
	Instructions string
	// Approver is asked before a tool that is not read-only runs, as the
	// agent asks it; a denied call is an error result with the approver's
	// reason. Nil lets every call run.
	Approver tool.Approver
	// MaxResultBytes and MaxResultLines cap each result (defaults 50 KB
	// and 2,000 lines; negative for no cap), with a note that tells the
	// client's model how to ask for less.
	MaxResultBytes, MaxResultLines int
	// Logger, when set, logs the server's sessions (the SDK's logging).
	Logger *slog.Logger
}

// NewServer returns an MCP server that offers tools: each with its name,
// description and input schema, readOnlyHint for read-only tools and
// destructiveHint for the others. A call is approved as in a ptk run,
// runs with the client's cancellation, and its result is one text content
// (isError for a failure the model should correct). A tool that returns a
// Go error or panics gives an error result; the server goes on.
//
// Serve it over stdio with srv.Run(ctx, &mcp.StdioTransport{}) (package
// github.com/modelcontextprotocol/go-sdk/mcp), or over streamable HTTP with
// mcp.NewStreamableHTTPHandler.
func NewServer(tools []ptk.Tool, opts ServerOptions) (*sdk.Server, error) {
	if opts.Name == "" {
		opts.Name = "ptk"
	}
	if opts.Version == "" {
		opts.Version = version.Get().String()
	}
	if opts.MaxResultBytes == 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.MaxResultLines == 0 {
		opts.MaxResultLines = DefaultMaxResultLines
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		return nil, err
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: opts.Name, Version: opts.Version},
		&sdk.ServerOptions{Instructions: opts.Instructions, Logger: opts.Logger})
	limit := tool.Limit(max(opts.MaxResultBytes, 0), max(opts.MaxResultLines, 0))
	var calls atomic.Int64
	for _, t := range reg.Tools() {
		info := t.Info()
		if !validName(info.Name) || len(info.Name) > MaxNameLen {
			return nil, fmt.Errorf("tool %q: MCP clients and models take names of 1 to 64 letters, digits, _ and -", info.Name)
		}
		schema := info.Parameters
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		var top struct {
			Type any `json:"type"`
		}
		if err := json.Unmarshal(schema, &top); err != nil || top.Type != "object" {
			return nil, fmt.Errorf(`tool %q: MCP needs an input schema of "type": "object"`, info.Name)
		}
		destructive := !info.ReadOnly
		srv.AddTool(&sdk.Tool{
			Name:        info.Name,
			Description: info.Description,
			InputSchema: schema,
			Annotations: &sdk.ToolAnnotations{
				ReadOnlyHint:    info.ReadOnly,
				DestructiveHint: &destructive,
				IdempotentHint:  info.ReadOnly,
			},
		}, handler(tool.Wrap(t, limit), info, opts.Approver, &calls))
	}
	return srv, nil
}

// handler runs one tool for MCP clients.
func handler(t ptk.Tool, info ptk.ToolInfo, approver tool.Approver, calls *atomic.Int64) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		call := ptk.Call{ID: "mcp_" + strconv.FormatInt(calls.Add(1), 10), Tool: info.Name, Args: args}
		if !info.ReadOnly && approver != nil {
			v, err := approver.Approve(ctx, call, info)
			if err != nil {
				v = tool.Verdict{Reason: "the approval failed: " + err.Error()}
			}
			if !v.Allow {
				reason := v.Reason
				if reason == "" {
					reason = "the call was not approved"
				}
				return textResult("Denied: "+reason, true), nil
			}
		}
		res, err := runSafely(ctx, t, args)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return textResult(fmt.Sprintf("tool %q failed: %v", info.Name, err), true), nil
		}
		if res.IsError && res.Content == "" {
			res.Content = "The tool failed without saying why."
		}
		return textResult(res.Content, res.IsError), nil
	}
}

// runSafely runs t, turning a panic into an error.
func runSafely(ctx context.Context, t ptk.Tool, args json.RawMessage) (res ptk.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the tool panicked: %v", p)
		}
	}()
	return t.Run(ctx, args)
}

func textResult(text string, isError bool) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isError}
}
