package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrajectoryToWorkflow: a ReAct run that called a ptool and a plain
// tool becomes a workflow of both, whose reference runs on new data; the
// stored trajectories export as --examples.
func TestTrajectoryToWorkflow(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "pizza"), []byte("hot and round\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "salad"), []byte("green\n"), 0o644)
	db := filepath.Join(dir, "traces.db")
	_, url := newFakeOpenAI(t,
		fakeReply{content: "The items first.\n<PTK_CALL>\n{\"tool\": \"extract_items\", \"args\": {\"order\": \"a pizza and a salad\"}}\n</PTK_CALL>"},
		fakeReply{content: `{"answer": ["pizza", "salad"]}`},
		fakeReply{content: "Now the first one's note.\n<PTK_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"pizza\"}}\n</PTK_CALL>"},
		fakeReply{content: "It is hot and round. <answer>hot and round</answer>"},
	)
	code, out, errOut := runPTK(t, "", "react", "What is the note of the first item of 'a pizza and a salad'?", "--ptools", "testdata/workflow_ptools.json",
		"--tools", "read_file", "--workspace", ws, "--base-url", url, "--model", "local-model", "--trace-db", db)
	if code != 0 || out != "hot and round\n" {
		t.Fatalf("react: exit %d, out %q: %s", code, out, errOut)
	}
	runs := storedRuns(t, db, "react")
	if len(runs) != 1 {
		t.Fatalf("%d react runs", len(runs))
	}

	// the stored run as a workflow, checked against the ptools and tools
	flow := filepath.Join(dir, "flow.json")
	code, _, errOut = runPTK(t, "", "workflow", "from-trajectory", "--run", runs[0].ID[:8], "--trace-db", db, "-o", flow,
		"--check", "--ptools", "testdata/workflow_ptools.json", "--tools", "read_file", "--workspace", ws)
	if code != 0 || !strings.Contains(errOut, "2 steps from 2 actions") {
		t.Fatalf("from-trajectory: exit %d: %s", code, errOut)
	}
	data, _ := os.ReadFile(flow)
	var tr struct {
		Steps []struct {
			PTool string          `json:"ptool"`
			Args  json.RawMessage `json:"args"`
		}
	}
	if json.Unmarshal(data, &tr) != nil || len(tr.Steps) != 2 || tr.Steps[1].PTool != "read_file" ||
		compactJSON(tr.Steps[1].Args) != `{"path":{"$ref":"step_0","path":"/0"}}` || strings.Contains(string(data), `"status"`) {
		t.Fatalf("the workflow: %s", data)
	}
	// without the tool it does not check
	if code, out, errOut := runPTK(t, "", "workflow", "check", flow, "--ptools", "testdata/workflow_ptools.json"); code != 1 || !strings.Contains(out, `no ptool "read_file"`) {
		t.Errorf("checked without --tools: exit %d: %s %s", code, out, errOut)
	}
	// run on new data: the first item is now the salad, whose note is read
	_, url = newFakeOpenAI(t, fakeReply{content: `{"answer": ["salad"]}`})
	code, out, errOut = runPTK(t, "", "workflow", "run", flow, "--ptools", "testdata/workflow_ptools.json", "--tools", "read_file", "--workspace", ws,
		"--base-url", url, "--model", "local-model", "--no-trace")
	if code != 0 || !strings.Contains(out, "green") {
		t.Errorf("run: exit %d, out %q: %s", code, out, errOut)
	}
	// the same from the file ptk react --json writes
	code, _, errOut = runPTK(t, "", "workflow", "from-trajectory", "-", "--ptools", "testdata/workflow_ptools.json")
	if code != 2 {
		t.Errorf("an empty stdin: exit %d: %s", code, errOut)
	}

	// the stored trajectories, exported, are ptk react's --examples
	code, out, errOut = runPTK(t, "", "traces", "export", "--trajectories", "--trace-db", db)
	var trajs []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &trajs) != nil || len(trajs) != 1 || trajs[0]["final_answer"] != "hot and round" {
		t.Fatalf("export: exit %d: %s %s", code, out, errOut)
	}
	examples := filepath.Join(dir, "examples.json")
	os.WriteFile(examples, []byte(out), 0o644)
	fake, url := newFakeOpenAI(t, fakeReply{content: "<answer>done</answer>"})
	if code, out, errOut := runPTK(t, "", "react", "another goal", "--examples", examples, "--base-url", url, "--model", "local-model", "--no-trace"); code != 0 || out != "done\n" {
		t.Fatalf("react --examples: exit %d, out %q: %s", code, out, errOut)
	}
	if sys := toJSON(fake.request(0)["messages"]); !strings.Contains(sys, `Calling read_file(path=\"pizza\")...`) {
		t.Errorf("the example is not in the prompt: %s", sys)
	}
}

// TestWorkflowToolConsent: a step that calls a tool that changes things
// runs only with --yes.
func TestWorkflowToolConsent(t *testing.T) {
	dir := t.TempDir()
	flow := filepath.Join(dir, "flow.json")
	os.WriteFile(flow, []byte(`{"goal": "write", "steps": [{"ptool": "write_file", "args": {"path": "out.txt", "content": "hi"}}]}`), 0o644)
	code, _, errOut := runPTK(t, "", "workflow", "run", flow, "--ptools", "testdata/workflow_ptools.json", "--tools", "write_file", "--workspace", dir, "--no-trace")
	if code != 2 || !strings.Contains(errOut, "step_0 (write_file)") || !strings.Contains(errOut, "--yes") {
		t.Errorf("without --yes: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Error("the file was written without --yes")
	}
	code, _, errOut = runPTK(t, "", "workflow", "run", flow, "--ptools", "testdata/workflow_ptools.json", "--tools", "write_file", "--workspace", dir, "--no-trace", "--yes")
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); code != 0 || err != nil || string(b) != "hi" {
		t.Errorf("with --yes: exit %d, %v, %q: %s", code, err, b, errOut)
	}
}
