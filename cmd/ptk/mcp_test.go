package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptkit/ptk/internal/version"
	"github.com/ptkit/ptk/mcp"
	"github.com/ptkit/ptk/mcp/mcptest"
)

// testBinary is ptk built once for the tests that need it as a process
// (MCP clients start their servers, signals, standard input), in a folder
// TestMain removes.
var testBinary struct {
	once     sync.Once
	dir, bin string
	err      error
}

// ptkBinary builds ptk, once per test run, and returns its path.
func ptkBinary(t testing.TB) string {
	t.Helper()
	testBinary.once.Do(func() {
		if testBinary.dir, testBinary.err = os.MkdirTemp("", "ptk-bin"); testBinary.err != nil {
			return
		}
		testBinary.bin = filepath.Join(testBinary.dir, "ptk")
		if out, err := exec.Command("go", "build", "-o", testBinary.bin, ".").CombinedOutput(); err != nil {
			testBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if testBinary.err != nil {
		t.Fatal(testBinary.err)
	}
	return testBinary.bin
}

// mcpWorkspace is a workspace with a.txt, and a policy file that allows
// write_file and edit_file under docs/.
func mcpWorkspace(t *testing.T) (dir, policy string) {
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	policy = filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(`{"rules": [{"tool": "*_file", "path": "docs/**", "action": "allow"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, policy
}

func sdkCall(t *testing.T, cs *sdk.ClientSession, name, args string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r := mcp.ResultText(res)
	return r.Content, r.IsError
}

// TestMCPCommandStdio drives "ptk mcp" as MCP clients do: a process started
// by the go-sdk client, on its stdin and stdout.
func TestMCPCommandStdio(t *testing.T) {
	dir, policy := mcpWorkspace(t)
	bin := ptkBinary(t)
	cmd := exec.Command(bin, "mcp", "--workspace", dir, "--policy", policy)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The server names itself with the binary's version, as ptk --version does.
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if info := cs.InitializeResult().ServerInfo; info.Name != "ptk" || info.Version != version.From(bi).String() {
		t.Errorf("serverInfo = %+v, want ptk %s", info, version.From(bi).String())
	}
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"bash", "edit_file", "glob", "grep", "list_dir", "read_file", "write_file"}) {
		t.Errorf("tools: %v", names)
	}
	if text, isErr := sdkCall(t, cs, "read_file", `{"path": "a.txt"}`); isErr || !strings.Contains(text, "alpha") {
		t.Errorf("read_file: %q", text)
	}
	if text, isErr := sdkCall(t, cs, "write_file", `{"path": "docs/b.md", "content": "# b"}`); isErr {
		t.Errorf("write_file where the policy allows it: %q", text)
	}
	text, isErr := sdkCall(t, cs, "write_file", `{"path": "c.txt", "content": "c"}`)
	if !isErr || !strings.Contains(text, "no rule of the policy file "+policy+" allows this call") || !strings.Contains(text, "--policy FILE") {
		t.Errorf("write_file where the policy does not allow it: %q (error %v)", text, isErr)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); err == nil {
		t.Error("the refused write happened")
	}
	start := time.Now()
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("ptk mcp took %s to exit when its stdin closed", d)
	}
}

// serveMCPHTTP runs ptk mcp --addr over a workspace with tools and the key
// k1 until the test ends (then checks it ended cleanly), and returns its
// address.
func serveMCPHTTP(t *testing.T, tools string) string {
	t.Helper()
	dir, _ := mcpWorkspace(t)
	t.Setenv("PTK_API_KEYS", "k1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		root := newRoot(strings.NewReader(""), &bytes.Buffer{}, &stderr)
		root.SetArgs([]string{"mcp", "--workspace", dir, "--tools", tools, "--addr", addr})
		done <- root.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ptk mcp ended with %v; stderr:\n%s", err, stderr.String())
		}
	})
	return addr
}

// TestMCPCommandHTTP serves over streamable HTTP with a key, taken by
// ptk's own client.
func TestMCPCommandHTTP(t *testing.T) {
	addr := serveMCPHTTP(t, "read_file,bash")
	url := "http://" + addr + "/mcp"
	for range 200 {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := mcp.Start(context.Background(), &mcp.Config{Servers: map[string]mcp.ServerConfig{"ptk": {URL: url}}}, mcp.Options{}); err == nil {
		t.Error("a client without the key was served")
	}
	c, err := mcp.Start(context.Background(), &mcp.Config{Servers: map[string]mcp.ServerConfig{
		"ptk": {URL: url, Headers: map[string]string{"Authorization": "Bearer k1"}}}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var names []string
	for _, tl := range c.Tools() {
		names = append(names, tl.Info().Name)
	}
	if !slices.Equal(names, []string{"ptk__bash", "ptk__read_file"}) {
		t.Fatalf("tools: %v", names)
	}
	r, err := c.Tools()[0].Run(context.Background(), json.RawMessage(`{"command": "echo hi > x"}`))
	if err != nil || !r.IsError || !strings.Contains(r.Content, "ptk mcp was started with no policy file") {
		t.Errorf("bash with no policy: %+v, %v", r, err)
	}
}

// TestMCPCommandHTTPSlowBody trickles a request body at ptk mcp --addr:
// the connection is given up once the body stops, not held for ever (the
// SDK's handler reads bodies with no deadline of its own).
func TestMCPCommandHTTPSlowBody(t *testing.T) {
	defer func(d time.Duration) { mcpBodyIdle = d }(mcpBodyIdle)
	mcpBodyIdle = 300 * time.Millisecond
	addr := serveMCPHTTP(t, "read_file")
	var c net.Conn
	var err error
	for range 300 {
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer k1\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 5000\r\n\r\n{\"jsonrpc\": \"2.0\", ")
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	io.Copy(io.Discard, c) // until ptk mcp answers and closes, or drops the connection
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a body that stopped held the connection for %s", d)
	}
}

// TestMCPInspectorCLI lists and calls ptk's tools with the official
// inspector's CLI mode, ptk mcp started by it over stdio.
func TestMCPInspectorCLI(t *testing.T) {
	node := mcptest.Node(t)
	inspector := filepath.Join(mcptest.NodeModules(t), "@modelcontextprotocol", "inspector", "cli", "build", "cli.js")
	dir, policy := mcpWorkspace(t)
	bin := ptkBinary(t)
	inspect := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(node, append([]string{inspector, "--cli", bin, "mcp", "--workspace", dir, "--policy", policy}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s%s", args, err, out, stderr.String())
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("inspector %v: not JSON: %v\n%s", args, err, out)
		}
		return v
	}
	list := inspect("--method", "tools/list")
	var names []string
	for _, tl := range list["tools"].([]any) {
		m := tl.(map[string]any)
		names = append(names, m["name"].(string))
		if m["inputSchema"] == nil || m["annotations"] == nil {
			t.Errorf("%s: no schema or annotations: %v", m["name"], m)
		}
	}
	if len(names) != 7 || !slices.Contains(names, "bash") {
		t.Errorf("tools: %v", names)
	}
	text := func(v map[string]any) (string, bool) {
		var b strings.Builder
		for _, c := range v["content"].([]any) {
			b.WriteString(c.(map[string]any)["text"].(string))
		}
		isErr, _ := v["isError"].(bool)
		return b.String(), isErr
	}
	for _, tc := range []struct {
		tool  string
		args  []string
		has   string
		isErr bool
	}{
		{"read_file", []string{"path=a.txt"}, "alpha", false},
		{"list_dir", []string{"path=."}, "a.txt", false},
		{"grep", []string{"pattern=alp"}, "a.txt", false},
		{"glob", []string{"pattern=*.txt"}, "a.txt", false},
		{"write_file", []string{"path=docs/n.md", "content=note"}, "", false},
		{"edit_file", []string{"path=docs/n.md", "old_string=note", "new_string=memo"}, "", false},
		{"bash", []string{"command=rm a.txt"}, "--policy FILE", true},
	} {
		got, isErr := text(inspect(append([]string{"--method", "tools/call", "--tool-name", tc.tool, "--tool-arg"}, tc.args...)...))
		if isErr != tc.isErr || !strings.Contains(got, tc.has) {
			t.Errorf("%s: %q (error %v); want %q (error %v)", tc.tool, got, isErr, tc.has, tc.isErr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "docs", "n.md")); string(b) != "memo" {
		t.Errorf("docs/n.md: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Error("the refused bash ran")
	}
}

// TestRunWithMCPServers runs "ptk run --mcp FILE" with the everything
// server from npm and one that cannot start, a model calling the server's
// tools in ptk mode and in native mode.
func TestRunWithMCPServers(t *testing.T) {
	node := mcptest.Node(t)
	nm := mcptest.NodeModules(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	everything, _ := json.Marshal(filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	nodeJSON, _ := json.Marshal(node)
	os.WriteFile(cfg, []byte(`{"mcpServers": {
		"everything": {"command": `+string(nodeJSON)+`, "args": [`+string(everything)+`, "stdio"]},
		"broken": {"command": "/nonexistent/server"}
	}}`), 0o644)
	for _, mode := range []string{"ptk", "native"} {
		t.Run(mode, func(t *testing.T) {
			first := fakeReply{content: `<PTK_CALL>{"tool": "everything__get-sum", "args": {"a": 20, "b": 22}}</PTK_CALL>`}
			if mode == "native" {
				first = fakeReply{calls: [][2]string{{"everything__get-sum", `{"a": 20, "b": 22}`}}}
			}
			f, url := newFakeOpenAI(t, first, fakeReply{content: "It is 42."})
			code, out, stderr := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", mode, "--json",
				"--workspace", workspace(t), "--mcp", cfg, "Add 20 and 22.")
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			if !strings.Contains(stderr, `MCP server "broken" did not start`) || strings.Count(stderr, "broken") != 1 {
				t.Errorf("the broken server must be one line on stderr:\n%s", stderr)
			}
			var res struct {
				Success   bool `json:"success"`
				ToolCalls []struct {
					Tool string `json:"tool"`
				} `json:"tool_calls"`
			}
			json.Unmarshal([]byte(out), &res)
			if !res.Success || len(res.ToolCalls) != 1 || res.ToolCalls[0].Tool != "everything__get-sum" {
				t.Errorf("result: %s", out)
			}
			// The second request carries the tool's result.
			b, _ := json.Marshal(f.request(1)["messages"])
			if !strings.Contains(string(b), "The sum of 20 and 22 is 42") {
				t.Errorf("the model was not given the result: %s", b)
			}
		})
	}
}

func TestRunMCPFileErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(bad, []byte(`{"mcpServers": {"x": {}}}`), 0o644)
	code, _, stderr := runPTK(t, "", "run", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--mcp", bad, "hi")
	if code != 2 || !strings.Contains(stderr, `server "x": give a "command"`) {
		t.Errorf("a bad --mcp file: exit %d, %q", code, stderr)
	}
	code, _, stderr = runPTK(t, "", "run", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--mcp", "/nonexistent/mcp.json", "hi")
	if code != 2 || !strings.Contains(stderr, "--mcp") {
		t.Errorf("a missing --mcp file: exit %d, %q", code, stderr)
	}
}

// TestServeWithMCPServers runs "ptk serve --mcp FILE": the gateway runs the
// MCP server's tools itself for a request that declares none.
func TestServeWithMCPServers(t *testing.T) {
	node := mcptest.Node(t)
	nm := mcptest.NodeModules(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	everything, _ := json.Marshal(filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	nodeJSON, _ := json.Marshal(node)
	os.WriteFile(cfg, []byte(`{"mcpServers": {"everything": {"command": `+string(nodeJSON)+`, "args": [`+string(everything)+`, "stdio"]}}}`), 0o644)
	f, upstream := newFakeOpenAI(t,
		fakeReply{content: `<PTK_CALL>{"tool": "everything__echo", "args": {"message": "through the gateway"}}</PTK_CALL>`},
		fakeReply{content: "It echoed."})
	url := startServe(t, "--base-url", upstream, "--model", "m", "--mode", "ptk", "--mcp", cfg)
	status, out := postChat(t, url, "", `{"messages":[{"role":"user","content":"Echo something."}]}`)
	if status != http.StatusOK {
		t.Fatalf("%d %v", status, out)
	}
	if msg := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any); msg["content"] != "It echoed." {
		t.Errorf("answer: %v", msg)
	}
	if b, _ := json.Marshal(f.request(1)["messages"]); !strings.Contains(string(b), "Echo: through the gateway") {
		t.Errorf("the gateway did not run the MCP tool: %s", b)
	}
}
