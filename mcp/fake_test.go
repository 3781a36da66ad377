package mcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also a set of misbehaving MCP servers: run with
// PTK_MCP_FAKE=mode, it is that server instead of the tests.
const fakeEnv = "PTK_MCP_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeConfig is the configuration of the test binary as a stdio server in
// mode.
func fakeConfig(mode string, env ...string) ServerConfig {
	e := map[string]string{fakeEnv: mode}
	for i := 0; i+1 < len(env); i += 2 {
		e[env[i]] = env[i+1]
	}
	return ServerConfig{Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: e}
}

func fakeServer(mode string) {
	switch mode {
	case "exit": // dies at once, saying why
		fmt.Fprintln(os.Stderr, "fake: FAKE_TOKEN is not set")
		os.Exit(3)
	case "hang": // reads everything, answers nothing
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
		}
		time.Sleep(time.Hour)
	case "garbage": // answers every line with something that is not JSON-RPC
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Println("Welcome to the fake server! <html>not json</html>")
		}
	case "flood": // a hand-made server whose tool answers with 300 MiB
		floodStdio()
	case "tools":
		if f := os.Getenv("PTK_MCP_FAKE_CHILD"); f != "" {
			// A child of its own, as npx starts node: it must be
			// stopped with the server.
			child := exec.Command("sleep", "300")
			if err := child.Start(); err != nil {
				panic(err)
			}
			os.WriteFile(f, []byte(strconv.Itoa(child.Process.Pid)), 0o644)
		}
		srv := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
		addFakeTools(srv)
		srv.Run(context.Background(), &sdk.StdioTransport{})
	case "pages": // a tools/list that never ends: every page names another
		endlessPages()
	case "environ": // one tool that answers with the server's environment
		srv := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
		sdk.AddTool(srv, &sdk.Tool{Name: "environ", Description: "Lists the environment."},
			func(context.Context, *sdk.CallToolRequest, textArgs) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(os.Environ(), "\n")}}}, nil, nil
			})
		srv.Run(context.Background(), &sdk.StdioTransport{})
	default:
		fmt.Fprintln(os.Stderr, "unknown fake mode", mode)
		os.Exit(2)
	}
}

type textArgs struct {
	Text string `json:"text,omitempty"`
}

// addFakeTools adds the fake server's tools: echo (read-only), fail (an
// isError result), die (the process exits during the call), stall (never
// answers, even when cancelled) and write (neither read-only nor said
// otherwise).
func addFakeTools(srv *sdk.Server) {
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echoes text.", Annotations: ro},
		func(_ context.Context, _ *sdk.CallToolRequest, a textArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + a.Text}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "fail", Description: "Fails.", Annotations: ro},
		func(_ context.Context, _ *sdk.CallToolRequest, a textArgs) (*sdk.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("no such record %q: try an id from list_records", a.Text)
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "die", Description: "Crashes the server."},
		func(context.Context, *sdk.CallToolRequest, textArgs) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "fake: segmentation fault (core dumped)")
			os.Exit(139)
			return nil, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "stall", Description: "Never answers.", Annotations: ro},
		func(context.Context, *sdk.CallToolRequest, textArgs) (*sdk.CallToolResult, any, error) {
			select {}
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "babble", Description: "Writes garbage where JSON-RPC goes.", Annotations: ro},
		func(context.Context, *sdk.CallToolRequest, textArgs) (*sdk.CallToolResult, any, error) {
			os.Stdout.WriteString("Loading plugins... done\n")
			select {}
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "write", Description: "Writes."},
		func(_ context.Context, _ *sdk.CallToolRequest, a textArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "wrote " + a.Text}}}, nil, nil
		})
}
