package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/mcp/mcptest"
	"github.com/ptkit/ptk/tool"
)

// realServers are @modelcontextprotocol/server-everything and
// server-filesystem (over dir), from npm.
func realServers(t *testing.T, dir string) map[string]ServerConfig {
	nm := mcptest.NodeModules(t)
	node := mcptest.Node(t)
	return map[string]ServerConfig{
		"everything": {Command: node, Args: []string{filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"}},
		"files":      {Command: node, Args: []string{filepath.Join(nm, "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), dir}},
	}
}

// approvals records the calls an approver was asked about, and allows
// them.
type approvals struct {
	mu    sync.Mutex
	asked []string
}

func (a *approvals) Approve(_ context.Context, c ptk.Call, _ ptk.ToolInfo) (tool.Verdict, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, c.Tool)
	return tool.Verdict{Allow: true}, nil
}

// scriptCalls is a model reply that makes calls, in the mode's way: PTK_CALL
// blocks in its text, or native calls.
func scriptCalls(mode agent.Mode, calls ...ptk.Call) llmtest.Reply {
	if mode == agent.ModeNative {
		return llmtest.Reply{Calls: calls}
	}
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "<PTK_CALL>\n{\"tool\": %q, \"args\": %s}\n</PTK_CALL>\n", c.Tool, c.Args)
	}
	return llmtest.Reply{Content: b.String()}
}

func mcall(id, name, args string) ptk.Call {
	return ptk.Call{ID: id, Tool: name, Args: json.RawMessage(args)}
}

// TestAgentRunsRealServersTools gives a scripted model the tools of the
// real filesystem and everything servers, in ptk and in native mode: it
// reads a file, adds numbers, gets an image and structured content, and
// writes a file, which alone needs approval.
func TestAgentRunsRealServersTools(t *testing.T) {
	for _, mode := range []agent.Mode{agent.ModePTK, agent.ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the answer is 42\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := startFake(t, Options{}, realServers(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			p := func(name string) string { b, _ := json.Marshal(filepath.Join(dir, name)); return string(b) }
			model := llmtest.New(
				scriptCalls(mode,
					mcall("c1", "files__read_text_file", `{"path": `+p("notes.txt")+`}`),
					mcall("c2", "everything__get-sum", `{"a": 2, "b": 3}`),
					mcall("c3", "everything__get-tiny-image", `{}`),
					mcall("c4", "everything__get-structured-content", `{"location": "Chicago"}`)),
				scriptCalls(mode, mcall("c5", "files__write_file", `{"path": `+p("out.txt")+`, "content": "written by a model"}`)),
				scriptCalls(mode, mcall("c6", "files__read_text_file", `{"path": "/etc/passwd"}`)),
				llmtest.Text("The answer is 42, and 2+3 is 5."),
			)
			appr := &approvals{}
			res, err := agent.Run(context.Background(), agent.Prompt("What is in notes.txt?"), agent.Options{
				Model: model, Mode: mode, Tools: c.Tools(), Approver: appr,
			})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			want := []struct {
				tool, has string
				isErr     bool
			}{
				{"files__read_text_file", "the answer is 42", false},
				{"everything__get-sum", "5", false},
				{"everything__get-tiny-image", "[image: image/png", false},
				{"everything__get-structured-content", `"temperature"`, false},
				{"files__write_file", "Successfully wrote", false},
				{"files__read_text_file", "outside allowed directories", true},
			}
			if len(res.ToolCalls) != len(want) {
				t.Fatalf("%d calls answered, want %d: %+v", len(res.ToolCalls), len(want), res.ToolCalls)
			}
			for i, w := range want {
				r := res.ToolCalls[i].Result
				if res.ToolCalls[i].Call.Tool != w.tool || !strings.Contains(r.Content, w.has) || r.IsError != w.isErr {
					t.Errorf("call %d: %s gave %+v; want %s with %q (error %v)", i+1, res.ToolCalls[i].Call.Tool, r, w.tool, w.has, w.isErr)
				}
			}
			if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "written by a model" {
				t.Errorf("out.txt: %q, %v", b, err)
			}
			if !slices.Equal(appr.asked, []string{"files__write_file"}) {
				t.Errorf("approval asked for %v; want only files__write_file (the others say readOnlyHint)", appr.asked)
			}
			req := model.Requests()[0]
			if mode == agent.ModeNative {
				var names []string
				for _, ti := range req.Tools {
					names = append(names, ti.Name)
				}
				if !slices.Contains(names, "everything__get-sum") || !slices.Contains(names, "files__write_file") {
					t.Errorf("native tools sent: %v", names)
				}
			} else if sys := req.Messages[0].Content; !strings.Contains(sys, "everything__get-sum") || !strings.Contains(sys, "files__read_text_file") {
				t.Errorf("the system prompt does not teach the MCP tools:\n%s", sys)
			}
		})
	}
}

// TestRunSurvivesServersThatDieOrHang kills the everything server during
// a long call, and has a server that never answers a call: the run goes
// on, and the model is told what happened.
func TestRunSurvivesServersThatDieOrHang(t *testing.T) {
	servers := realServers(t, t.TempDir())
	delete(servers, "files")
	servers["fake"] = fakeConfig("tools")
	fake := servers["fake"]
	fake.Timeout = Duration(time.Second)
	servers["fake"] = fake
	c, err := startFake(t, Options{}, servers)
	if err != nil {
		t.Fatal(err)
	}
	var everything *server
	for _, s := range c.servers {
		if s.name == "everything" {
			everything = s
		}
	}
	model := llmtest.New(
		scriptCalls(agent.ModePTK, mcall("c1", "fake__stall", `{}`)),
		scriptCalls(agent.ModePTK, mcall("c2", "everything__trigger-long-running-operation", `{"duration": 30, "steps": 30}`)),
		scriptCalls(agent.ModePTK, mcall("c3", "everything__echo", `{"message": "are you there?"}`)),
		llmtest.Text("The server crashed; I could not finish."),
	)
	start := time.Now()
	var res *agent.Result
	for e, err := range agent.Stream(context.Background(), agent.Prompt("Run the long operation."), agent.Options{
		Model: model, Mode: agent.ModePTK, Tools: c.Tools(),
	}) {
		if e.Kind == agent.EventToolStart && e.Call.Tool == "everything__trigger-long-running-operation" {
			go func() {
				time.Sleep(300 * time.Millisecond)
				everything.kill()
			}()
		}
		if e.Kind == agent.EventDone {
			if err != nil {
				t.Fatalf("the run failed: %v", err)
			}
			res = e.Run
		}
	}
	if d := time.Since(start); d > 20*time.Second { // the call lasts 30 s unless its server's death ends it
		t.Errorf("the run took %s: a 30 s call to a killed server must end when it dies", d)
	}
	if !res.Success || len(res.ToolCalls) != 3 {
		t.Fatalf("result: %+v", res)
	}
	for i, has := range []string{"did not answer within 1s", "stopped during the call", "not running"} {
		r := res.ToolCalls[i].Result
		if !r.IsError || !strings.Contains(r.Content, has) {
			t.Errorf("call %d: %+v; want an error saying %q", i+1, r, has)
		}
	}
}
