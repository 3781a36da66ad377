package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/tools/fs"
	"github.com/ptkit/ptk/tools/shell"
)

// builtins returns ptk's built-in tools over a new workspace holding
// a.txt, and a tool that panics.
func builtins(t *testing.T) (dir string, tools []ptk.Tool) {
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	sh, err := shell.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	panics := tool.New("panics", "Panics.", func(context.Context, struct{}) (string, error) { panic("oops") }, tool.ReadOnly())
	return dir, append(append(append(ws.Tools(), ws.EditTools()...), sh.Tool()), panics)
}

// refuseBash allows everything but bash, as a policy would.
var refuseBash = tool.ApproverFunc(func(_ context.Context, c ptk.Call, _ ptk.ToolInfo) (tool.Verdict, error) {
	if c.Tool == "bash" {
		return tool.Verdict{Reason: "no rule allows bash; add one to the policy file"}, nil
	}
	return tool.Verdict{Allow: true}, nil
})

func connectInMemory(t *testing.T, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *sdk.ClientSession, name, args string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r := ResultText(res)
	return r.Content, r.IsError
}

func TestServerOffersPTKTools(t *testing.T) {
	dir, tools := builtins(t)
	srv, err := NewServer(tools, ServerOptions{Approver: refuseBash})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, srv)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		info := toolInfo(tools, tl.Name)
		if tl.Description != info.Description || tl.InputSchema == nil {
			t.Errorf("%s: description or schema lost: %+v", tl.Name, tl)
		}
		a := tl.Annotations
		if a == nil || a.ReadOnlyHint != info.ReadOnly || a.DestructiveHint == nil || *a.DestructiveHint == info.ReadOnly {
			t.Errorf("%s: annotations %+v for a tool read-only %v", tl.Name, a, info.ReadOnly)
		}
	}
	for _, want := range []string{"read_file", "list_dir", "write_file", "edit_file", "bash", "panics"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s among %v", want, names)
		}
	}

	if text, isErr := callText(t, cs, "read_file", `{"path": "a.txt"}`); isErr || !strings.Contains(text, "beta") {
		t.Errorf("read_file: %q (error %v)", text, isErr)
	}
	if text, isErr := callText(t, cs, "read_file", `{"path": "../../etc/passwd"}`); !isErr {
		t.Errorf("read_file outside the workspace must fail: %q", text)
	}
	if text, isErr := callText(t, cs, "write_file", `{"path": "b.txt", "content": "from a client"}`); isErr {
		t.Errorf("write_file: %q", text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "from a client" {
		t.Errorf("b.txt: %q", b)
	}
	if text, isErr := callText(t, cs, "bash", `{"command": "touch c.txt"}`); !isErr || !strings.Contains(text, "Denied: no rule allows bash") {
		t.Errorf("bash, refused: %q (error %v)", text, isErr)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); err == nil {
		t.Error("the refused command ran")
	}
	if text, isErr := callText(t, cs, "panics", `{}`); !isErr || !strings.Contains(text, "panicked: oops") {
		t.Errorf("a panicking tool: %q (error %v)", text, isErr)
	}
	if text, isErr := callText(t, cs, "read_file", `{"path": 7}`); !isErr {
		t.Errorf("bad arguments: %q", text)
	}
}

func toolInfo(tools []ptk.Tool, name string) ptk.ToolInfo {
	for _, t := range tools {
		if t.Info().Name == name {
			return t.Info()
		}
	}
	return ptk.ToolInfo{}
}

// TestPTKServerThroughPTKClient serves the built-in tools over streamable
// HTTP and takes them back with Start: ptk's two halves agree.
func TestPTKServerThroughPTKClient(t *testing.T) {
	_, tools := builtins(t)
	srv, err := NewServer(tools, ServerOptions{Approver: refuseBash})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	c, err := startFake(t, Options{}, map[string]ServerConfig{"ptk": {URL: hs.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(c.Tools()), len(tools); got != want {
		t.Errorf("%d tools, want %d", got, want)
	}
	rf := toolNamed(t, c, "ptk__read_file")
	if !rf.Info().ReadOnly || toolNamed(t, c, "ptk__bash").Info().ReadOnly {
		t.Error("read-only must survive the round trip, and only it")
	}
	if r := call(t, rf, `{"path": "a.txt"}`); !strings.Contains(r.Content, "alpha") {
		t.Errorf("read_file: %+v", r)
	}
	if r := call(t, toolNamed(t, c, "ptk__bash"), `{"command": "ls"}`); !r.IsError || !strings.Contains(r.Content, "Denied") {
		t.Errorf("bash: %+v", r)
	}
}

func TestNewServerRefusesWhatMCPCannotCarry(t *testing.T) {
	noop := func(context.Context, json.RawMessage) (ptk.Result, error) { return ptk.Result{}, nil }
	for _, tc := range []struct {
		info ptk.ToolInfo
		says string
	}{
		{ptk.ToolInfo{Name: "has space"}, "names of 1 to 64"},
		{ptk.ToolInfo{Name: strings.Repeat("n", 65)}, "names of 1 to 64"},
		{ptk.ToolInfo{Name: "arr", Parameters: json.RawMessage(`{"type": "array"}`)}, `"type": "object"`},
	} {
		_, err := NewServer([]ptk.Tool{ptk.NewTool(tc.info, noop)}, ServerOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want an error saying %q", tc.info.Name, err, tc.says)
		}
	}
	if _, err := NewServer([]ptk.Tool{ptk.NewTool(ptk.ToolInfo{Name: "plain"}, noop)}, ServerOptions{}); err != nil {
		t.Errorf("a tool without a schema takes any object: %v", err)
	}
}
