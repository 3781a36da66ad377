package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/httpguard"
	"github.com/ptkit/ptk/mcp"
	"github.com/ptkit/ptk/tool"
)

type mcpFlags struct {
	workspace, tools, policy, addr, apiKeys string
	sandbox                                 bool
	exposure                                exposureFlags
}

func newMCPCmd() *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "Serve ptk's tools to MCP clients (Claude Desktop, IDEs, other agents)",
		Long: `mcp serves ptk's built-in tools (read_file, list_dir, glob, grep,
write_file, edit_file, bash) over --workspace as a Model Context Protocol
server: on stdin and stdout by default, the way MCP clients start servers,
or over streamable HTTP at http://ADDR/mcp with --addr.

The tools are confined as in 'ptk run': file tools cannot leave the
workspace, --sandbox runs bash under bubblewrap. The read-only tools run
freely; write_file, edit_file and bash run only where the --policy file
allows them (default: policy.json in ptk's config folder, if there is one):
there is nobody to ask, so any other call is refused, and the client's model
is told how the user can allow it.

A client's configuration to start it:
  {"mcpServers": {"ptk": {"command": "ptk",
    "args": ["mcp", "--workspace", "/path/to/project", "--policy", "/path/to/policy.json"]}}}

Over HTTP, clients send one of the keys of --api-keys FILE (one a line) or
$PTK_API_KEYS (comma-separated) as "Authorization: Bearer KEY"; with neither,
no key is asked for, and an --addr other machines can reach is refused
unless --unauthenticated is given. Requests a web page could make are
refused: a Host other than the listen address, localhost or --allowed-hosts,
a body that is not JSON, an Origin of another site.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMCP(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workspace, "workspace", ".", "the folder the tools work in; file tools cannot leave it")
	fl.StringVar(&f.tools, "tools", "", "comma-separated tools to serve (default: all built-ins)")
	fl.StringVar(&f.policy, "policy", "", "a policy file that allows write_file, edit_file or bash calls (default: policy.json in ptk's config folder, if there is one)")
	fl.BoolVar(&f.sandbox, "sandbox", false, "run bash under bubblewrap: system read-only, workspace writable, no network")
	fl.StringVar(&f.addr, "addr", "", "serve streamable HTTP at HOST:PORT (path /mcp) instead of stdio")
	fl.StringVar(&f.apiKeys, "api-keys", "", "with --addr, a file of the keys clients must send, one a line (env PTK_API_KEYS: comma-separated keys)")
	addExposureFlags(fl, &f.exposure, true)
	return cmd
}

func runMCP(cmd *cobra.Command, f mcpFlags) error {
	root, tools, closeTools, err := builtinTools(f.workspace, f.tools, f.sandbox, keyEnvs(nil))
	if err != nil {
		return err
	}
	defer closeTools()
	policy, policyFile, err := loadPolicy(cmd, f.policy)
	if err != nil {
		return usageError{err}
	}
	srv, err := mcp.NewServer(tools, mcp.ServerOptions{
		Approver: &mcpApprover{policyOnly: &serveApprover{policy: policy, file: policyFile, tools: approvalTools(tools)}, file: policyFile},
		Instructions: "Tools over the folder " + root + "; paths are relative to it. " +
			"write_file, edit_file and bash run only where the user's policy allows them.",
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.addr == "" {
		t := &sdk.IOTransport{Reader: io.NopCloser(cmd.InOrStdin()), Writer: nopWriteCloser{cmd.OutOrStdout()}}
		err := srv.Run(ctx, t)
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return nil // the client went away, or we were stopped
		}
		return err
	}
	keys, err := clientKeys(f.apiKeys)
	if err != nil {
		return usageError{err}
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usagef("--addr %s: %v", f.addr, err)
	}
	defer ln.Close()
	if err := f.exposure.check(ln, len(keys), "the tools over "+root); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	guard := httpguard.Guard(httpguard.Options{Hosts: f.exposure.hosts(cmd)})
	// A body must arrive at the gateway's pace: the SDK's handler reads
	// it with no deadline of its own, so a client trickling one byte at a
	// time would hold its connection for ever.
	hs := &http.Server{Handler: guard(gateway.RequireKey(keys)(gateway.PaceBodies(mcpBodyIdle, 0)(mux))), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	logger.Info("serving MCP", "url", "http://"+ln.Addr().String()+"/mcp", "workspace", root, "tools", len(tools), "keys", len(keys))
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// mcpBodyIdle is how long ptk mcp --addr waits for a request body that
// sends nothing (a variable for the tests).
var mcpBodyIdle = gateway.DefaultBodyIdleTimeout

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpApprover lets a served tool change something only where the policy
// allows it (serveApprover decides), and tells the client's model how the
// user can allow what it refuses.
type mcpApprover struct {
	policyOnly tool.Approver
	file       string
}

func (a *mcpApprover) Approve(ctx context.Context, call ptk.Call, info ptk.ToolInfo) (tool.Verdict, error) {
	v, err := a.policyOnly.Approve(ctx, call, info)
	if err != nil || v.Allow {
		return v, err
	}
	where := "ptk mcp was started with no policy file"
	if a.file != "" {
		where = "no rule of the policy file " + a.file + " allows this call"
	}
	return tool.Verdict{Reason: fmt.Sprintf("%s runs only where the user's policy allows it, and %s. "+
		`Tell the user what you wanted to do; they can allow it with a rule in a policy file given to ptk mcp with --policy FILE, such as {"rules": [{"tool": %q, "action": "allow"}]} (rules can also name a path glob or a command prefix).`,
		call.Tool, where, call.Tool)}, nil
}

// mcpFlag adds --mcp to a command's flags.
func mcpFlag(fl *pflag.FlagSet, p *string) {
	fl.StringVar(p, "mcp", "", "an MCP configuration file ({\"mcpServers\": …}) whose servers' tools the model gets, named server__tool (default: mcp.json in ptk's config folder, if there is one)")
}

// startMCP starts the servers of the --mcp file, or of mcp.json in ptk's
// config folder when there is one and --mcp was not given; never one from
// the workspace, which the model can write. A server that does not start
// is reported on stderr, one line, and left out; a file that cannot be
// read or makes no sense is a usage error. The returned function stops
// the servers.
// hidden names the variables no stdio server gets from ptk's environment
// (the catalog's keys, see [keyEnvs]).
func startMCP(cmd *cobra.Command, file string, hidden []string) ([]ptk.Tool, func(), error) {
	if !cmd.Flags().Changed("mcp") {
		def, err := mcp.DefaultConfigFile()
		if err != nil {
			return nil, func() {}, nil
		}
		if _, err := os.Stat(def); err != nil {
			return nil, func() {}, nil
		}
		file = def
	}
	cfg, err := mcp.LoadConfig(file)
	if err != nil {
		return nil, nil, usagef("--mcp: %v", err)
	}
	// What the client leaves out or sees change (a tool whose schema ptk
	// cannot use, a server that stopped) is a line on stderr.
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	client, err := mcp.Start(cmd.Context(), cfg, mcp.Options{Logger: logger, HiddenEnv: hidden})
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			fmt.Fprintf(cmd.ErrOrStderr(), "ptk: %v; its tools are left out\n", e)
		}
	} else if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "ptk: %v\n", err)
	}
	return client.Tools(), func() { client.Close() }, nil
}

// addMCPTools gives a gateway's own tools the MCP servers' tools, when it
// runs tools (--tools) or --mcp names a file, with the gateway's approval.
func addMCPTools(cmd *cobra.Command, file, policyFlag string, cfg *gateway.Config, hidden []string) (func(), error) {
	if len(cfg.Tools) == 0 && !cmd.Flags().Changed("mcp") {
		return func() {}, nil
	}
	tools, stop, err := startMCP(cmd, file, hidden)
	if err != nil {
		return nil, err
	}
	cfg.Tools = append(cfg.Tools, tools...)
	if cfg.Approver == nil {
		policy, policyFile, err := loadPolicy(cmd, policyFlag)
		if err != nil {
			stop()
			return nil, usageError{err}
		}
		cfg.Approver = &serveApprover{policy: policy, file: policyFile, tools: approvalTools(cfg.Tools)}
	}
	return stop, nil
}
