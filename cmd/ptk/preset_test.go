package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/tools/fs"
	"github.com/ptkit/ptk/tools/shell"
)

// Each preset over each kind of call, with and without a policy, with no
// terminal to ask on: the policy decides first, and a rule that asks asks
// whatever the preset (here: denied, since nobody can be asked).
func TestApproverPresets(t *testing.T) {
	dir := t.TempDir()
	sh, _ := shell.New(dir)
	ws, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	edit, _ := ws.Tool("edit_file")
	tools := approvalTools([]ptk.Tool{sh.Tool(), edit})
	editCall := ptk.Call{Tool: "edit_file", Args: json.RawMessage(`{"path":"a.go","old_string":"a","new_string":"b"}`)}
	bashCall := ptk.Call{Tool: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`)}
	allowTests := &tool.Policy{Rules: []tool.Rule{{Tool: "bash", Command: "go test", Action: tool.Allow}}}
	askEdits := &tool.Policy{Rules: []tool.Rule{{Tool: "edit_file", Action: tool.Ask}}}
	denyBash := &tool.Policy{Rules: []tool.Rule{{Tool: "bash", Action: tool.Deny}}}
	for _, c := range []struct {
		preset tool.Preset
		policy *tool.Policy
		call   ptk.Call
		allow  bool
		reason string
	}{
		{tool.PresetPlan, nil, editCall, false, "plan-only mode"},
		{tool.PresetPlan, nil, bashCall, false, "plan-only mode"},
		{tool.PresetPlan, allowTests, bashCall, true, ""}, // the policy first
		{tool.PresetAsk, nil, editCall, false, "without a terminal"},
		{tool.PresetAutoEdit, nil, editCall, true, ""},
		{tool.PresetAutoEdit, nil, bashCall, false, "without a terminal"},
		{tool.PresetAutoEdit, askEdits, editCall, false, "without a terminal"},
		{tool.PresetYolo, nil, editCall, true, ""},
		{tool.PresetYolo, nil, bashCall, true, ""},
		{tool.PresetYolo, denyBash, bashCall, false, "rule 1) does not allow"},
		{tool.PresetYolo, askEdits, editCall, false, "without a terminal"},
	} {
		a := &cliApprover{policy: c.policy, policyFile: "p.json", tools: tools, preset: c.preset}
		v, err := a.Approve(context.Background(), c.call, ptk.ToolInfo{Name: c.call.Tool})
		if err != nil || v.Allow != c.allow || !strings.Contains(v.Reason, c.reason) {
			t.Errorf("%s, policy %v, %s: %+v %v; want allow=%v, a reason with %q", c.preset, c.policy != nil, c.call.Tool, v, err, c.allow, c.reason)
		}
	}
	// Switched while in use (ptk chat's shift+tab): the next call sees it.
	a := &cliApprover{tools: tools, preset: tool.PresetPlan}
	a.setPreset(tool.PresetAutoEdit)
	if v, _ := a.Approve(context.Background(), editCall, ptk.ToolInfo{Name: "edit_file"}); !v.Allow {
		t.Errorf("after switching to auto-edit: %+v", v)
	}
}

// ptk run --approval: plan tells the model to plan and changes nothing;
// auto-edit edits without a terminal and still asks (here: denies) bash;
// --yes and --approval must agree.
func TestRunApproval(t *testing.T) {
	ws := workspace(t)
	before, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	f, url := newFakeOpenAI(t, codingReplies()...)
	code, _, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", ws, "--approval", "plan", "Greet ptk.")
	if code != 0 {
		t.Fatalf("plan: exit %d, stderr %s", code, errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(ws, "main.go")); string(after) != string(before) {
		t.Error("plan mode changed main.go")
	}
	first, _ := json.Marshal(f.request(0)["messages"])
	second, _ := json.Marshal(f.request(1)["messages"])
	if !strings.Contains(string(first), "You are in plan mode") || strings.Count(string(second), "plan-only mode") != 3 {
		t.Errorf("plan mode is not said to the model:\n%s\n%s", first, second)
	}

	ws = workspace(t)
	f, url = newFakeOpenAI(t, codingReplies()...)
	code, _, errOut = runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", ws, "--approval", "auto-edit", "Greet ptk.")
	if code != 0 {
		t.Fatalf("auto-edit: exit %d, stderr %s", code, errOut)
	}
	main, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	notes, _ := os.ReadFile(filepath.Join(ws, "docs", "NOTES.md"))
	if !strings.Contains(string(main), `greet("ptk")`) || !strings.Contains(string(notes), "Greets ptk") {
		t.Errorf("auto-edit did not edit: main.go %q, notes %q", main, notes)
	}
	second, _ = json.Marshal(f.request(1)["messages"])
	if strings.Count(string(second), "Denied: ptk is running without a terminal") != 1 || !strings.Contains(string(second), "--approval auto-edit") {
		t.Errorf("auto-edit and bash:\n%s", second)
	}
	first, _ = json.Marshal(f.request(0)["messages"])
	if strings.Contains(string(first), "plan mode") {
		t.Error("auto-edit tells the model it is in plan mode")
	}

	for _, args := range [][]string{{"--yes", "--approval", "ask"}, {"--approval", "sometimes"}} {
		code, _, errOut = runPTK(t, "", append(append([]string{"run", "--model", "m", "--workspace", ws}, args...), "hi")...)
		if code != 2 || !strings.Contains(errOut, "--approval") {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
}
