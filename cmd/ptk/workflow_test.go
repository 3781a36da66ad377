package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ptkit/ptk/trace"
)

func TestWorkflowCheck(t *testing.T) {
	code, out, errOut := runPTK(t, "", "workflow", "check", "testdata/workflow_bad.json", "--ptools", "testdata/workflow_ptools.json")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := `step_0 (describe), argument /item: refers to step_1, which comes later (step 1); a step can use only earlier steps' outputs
step_2 (summarize): no ptool "summarize" is registered (registered: describe, extract_items)
step_3 (describe), argument /item: step_1 is array, but the argument takes string
`
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	code, _, errOut = runPTK(t, "", "workflow", "check", "testdata/workflow_trace.json", "--ptools", "testdata/workflow_ptools.json")
	if code != 0 || !strings.Contains(errOut, "2 steps, no problems") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestWorkflowRun(t *testing.T) {
	fake, url := newFakeOpenAI(t, fakeReply{content: `{"answer": ["pizza", "salad"]}`}, fakeReply{content: `{"answer": "a round flatbread"}`})
	db := filepath.Join(t.TempDir(), "traces.db")
	code, out, errOut := runPTK(t, "", "workflow", "run", "testdata/workflow_trace.json", "--ptools", "testdata/workflow_ptools.json",
		"--base-url", url, "--model", "local-model", "--trace-db", db)
	if code != 0 || out != "a round flatbread\n" {
		t.Fatalf("exit %d, out %q, err %s", code, out, errOut)
	}
	// The run is in the trace store, with its steps' ptool calls.
	if runs := storedRuns(t, db, "workflow"); len(runs) != 1 || runs[0].Status != "ok" || len(runs[0].PtoolCalls) != 2 || len(runs[0].Detail) == 0 {
		t.Errorf("stored workflow runs: %+v", runs)
	}
	if !strings.Contains(errOut, "step_0 extract_items: completed (1 attempt(s)") || !strings.Contains(errOut, "step_1 describe: completed") {
		t.Errorf("progress: %s", errOut)
	}
	if msgs := fake.request(1)["messages"].([]any); !strings.Contains(toJSON(msgs[len(msgs)-1]), `pizza`) {
		t.Errorf("the reference was not resolved: %v", msgs[len(msgs)-1])
	}
	// a trace with problems: no request at all
	fake, url = newFakeOpenAI(t)
	code, _, errOut = runPTK(t, "", "workflow", "run", "testdata/workflow_bad.json", "--ptools", "testdata/workflow_ptools.json",
		"--base-url", url, "--model", "local-model")
	if code != 1 || !strings.Contains(errOut, "3 problems") || len(fake.requests) != 0 {
		t.Errorf("exit %d, %d requests: %s", code, len(fake.requests), errOut)
	}
}

// TestWorkflowFlags: ptk workflow run and plan take the flags ptk ptool
// call takes: --mode, --max-attempts, --stream, --record and --replay.
func TestWorkflowFlags(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "calls.jsonl")
	fake, url := newFakeOpenAI(t, fakeReply{content: `<answer>["pizza", "salad"]</answer>`}, fakeReply{content: `<answer>"a round flatbread"</answer>`})
	code, out, errOut := runPTK(t, "", "workflow", "run", "testdata/workflow_trace.json", "--ptools", "testdata/workflow_ptools.json",
		"--base-url", url, "--model", "local-model", "--mode", "protocol", "--stream", "--record", rec, "--no-trace")
	if code != 0 || out != "a round flatbread\n" {
		t.Fatalf("exit %d, out %q: %s", code, out, errOut)
	}
	for i := range 2 {
		if r := fake.request(i); r["response_format"] != nil || r["stream"] != true {
			t.Errorf("request %d: response_format %v, stream %v", i, r["response_format"], r["stream"])
		}
	}
	if data, err := os.ReadFile(rec); err != nil || strings.Count(string(data), "\n") != 2 {
		t.Fatalf("the recording: %v\n%s", err, data)
	}
	// replayed: no server at all
	code, out, errOut = runPTK(t, "", "workflow", "run", "testdata/workflow_trace.json", "--ptools", "testdata/workflow_ptools.json",
		"--base-url", "http://127.0.0.1:1/v1", "--model", "local-model", "--mode", "protocol", "--stream", "--replay", rec, "--no-trace")
	if code != 0 || out != "a round flatbread\n" {
		t.Errorf("replayed: exit %d, out %q: %s", code, out, errOut)
	}
	// --max-attempts 1: a wrong answer is not asked again
	fake, url = newFakeOpenAI(t, fakeReply{content: `<answer>{"not": "a list"}</answer>`})
	code, _, errOut = runPTK(t, "", "workflow", "run", "testdata/workflow_trace.json", "--ptools", "testdata/workflow_ptools.json",
		"--base-url", url, "--model", "local-model", "--mode", "protocol", "--max-attempts", "1", "--no-trace")
	if code != 1 || len(fake.requests) != 1 || !strings.Contains(errOut, "after 1 attempt(s)") {
		t.Errorf("--max-attempts 1: exit %d, %d requests: %s", code, len(fake.requests), errOut)
	}
	// plan, recorded and replayed, in the protocol
	plan := `<answer>{"steps": [{"ptool": "describe", "args": {"item": "pizza"}, "goal": "describe it"}]}</answer>`
	fake, url = newFakeOpenAI(t, fakeReply{content: plan})
	prec := filepath.Join(dir, "plan.jsonl")
	db := filepath.Join(dir, "traces.db")
	code, out, errOut = runPTK(t, "", "workflow", "plan", "describe a pizza", "--ptools", "testdata/workflow_ptools.json",
		"--base-url", url, "--model", "local-model", "--mode", "protocol", "--record", prec, "--trace-db", db)
	if code != 0 || !strings.Contains(out, `"ptool": "describe"`) || fake.request(0)["response_format"] != nil {
		t.Fatalf("plan: exit %d, %s %s", code, out, errOut)
	}
	if runs := storedRuns(t, db, "ptool"); len(runs) != 1 || runs[0].Name != "plan_workflow" {
		t.Errorf("the planner's call is not in the store: %+v", runs)
	}
	code, out2, errOut := runPTK(t, "", "workflow", "plan", "describe a pizza", "--ptools", "testdata/workflow_ptools.json",
		"--model", "local-model", "--mode", "protocol", "--replay", prec, "--no-trace")
	if code != 0 || stripIDs(out2) != stripIDs(out) {
		t.Errorf("plan replayed: exit %d, %s %s", code, out2, errOut)
	}
	// mistakes in the flags are usage errors
	for _, args := range [][]string{
		{"--mode", "telepathy"}, {"--record", rec, "--replay", rec}, {"--replay", filepath.Join(dir, "none.jsonl")},
	} {
		if code, _, errOut := runPTK(t, "", append([]string{"workflow", "run", "testdata/workflow_trace.json", "--ptools", "testdata/workflow_ptools.json"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

// stripIDs leaves out a printed trace's random id.
func stripIDs(s string) string {
	return regexp.MustCompile(`"id": "wf_[0-9a-f]+"`).ReplaceAllString(s, "")
}

func TestWorkflowPlanAndGo(t *testing.T) {
	plan := `{"answer": {"steps": [{"ptool": "extract_items", "args": {"order": "a pizza"}, "goal": "items"},
		{"ptool": "describe", "args": {"item": {"$ref": "step_0", "path": "/0"}}, "goal": "describe it"}]}}`
	_, url := newFakeOpenAI(t, fakeReply{content: plan})
	file := filepath.Join(t.TempDir(), "trace.json")
	code, _, errOut := runPTK(t, "", "workflow", "plan", "describe the first item of 'a pizza'", "--ptools", "testdata/workflow_ptools.json",
		"--base-url", url, "--model", "local-model", "-o", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Steps []struct{ PTool string }
	}
	if json.Unmarshal(data, &tr) != nil || len(tr.Steps) != 2 || tr.Steps[1].PTool != "describe" {
		t.Fatalf("trace: %s", data)
	}
	code, out, errOut := runPTK(t, "", "workflow", "go", file)
	if code != 0 || !strings.Contains(out, `workflow.At(s_step_0, "/0")`) {
		t.Errorf("exit %d: %s %s", code, out, errOut)
	}
}

func TestReact(t *testing.T) {
	_, url := newFakeOpenAI(t,
		fakeReply{content: "I list the items.\n<PTK_CALL>\n{\"tool\": \"extract_items\", \"args\": {\"order\": \"a pizza and a salad\"}}\n</PTK_CALL>"},
		fakeReply{content: `{"answer": ["pizza", "salad"]}`}, // the ptool's own call
		fakeReply{content: "Two items. <answer>2</answer>"},
	)
	db := filepath.Join(t.TempDir(), "traces.db")
	code, out, errOut := runPTK(t, "", "react", "How many items are in 'a pizza and a salad'?", "--ptools", "testdata/workflow_ptools.json",
		"--base-url", url, "--model", "local-model", "--echo", "--trace-db", db)
	if code != 0 || out != "2\n" {
		t.Fatalf("exit %d, out %q: %s", code, out, errOut)
	}
	if runs := storedRuns(t, db, "react"); len(runs) != 1 || runs[0].Output != "2" || len(runs[0].ToolCalls) != 1 || runs[0].ToolCalls[0].Tool != "extract_items" || !strings.Contains(string(runs[0].Detail), `"ptp":"Goal: How many items`) {
		t.Errorf("stored react runs: %+v", runs)
	}
	// the ptool action's call is stored with the run, where distillation
	// reads it, and its tokens count in the run's
	if runs := storedRuns(t, db, "react"); len(runs) == 1 && (len(runs[0].PtoolCalls) != 1 || runs[0].PtoolCalls[0].Ptool != "extract_items" ||
		string(runs[0].PtoolCalls[0].Output) != `["pizza","salad"]` || runs[0].Usage.PromptTokens != 3*120) {
		t.Errorf("the stored run's ptool calls: %+v, usage %+v", runs[0].PtoolCalls, runs[0].Usage)
	}
	if ex := storedExamples(t, db, "extract_items"); len(ex) != 1 {
		t.Errorf("examples for distillation: %+v", ex)
	}
	// the model flags, as for workflows: the agent's model and the ptools'
	// stream, the ptools answer in the protocol, and it all replays
	fake, url := newFakeOpenAI(t,
		fakeReply{content: "I list the items.\n<PTK_CALL>\n{\"tool\": \"extract_items\", \"args\": {\"order\": \"a pizza and a salad\"}}\n</PTK_CALL>"},
		fakeReply{content: `<answer>["pizza", "salad"]</answer>`},
		fakeReply{content: "Two items. <answer>2</answer>"},
	)
	rec := filepath.Join(t.TempDir(), "calls.jsonl")
	args := []string{"react", "How many items are in 'a pizza and a salad'?", "--ptools", "testdata/workflow_ptools.json", "--model", "local-model", "--no-trace",
		"--mode", "protocol", "--stream"}
	if code, out, errOut := runPTK(t, "", append(args, "--base-url", url, "--record", rec)...); code != 0 || out != "2\n" {
		t.Fatalf("--stream --record: exit %d, out %q: %s", code, out, errOut)
	}
	for i := range 3 {
		if r := fake.request(i); r["stream"] != true || r["response_format"] != nil {
			t.Errorf("request %d: stream %v, response_format %v", i, r["stream"], r["response_format"])
		}
	}
	if code, out, errOut := runPTK(t, "", append(args, "--replay", rec)...); code != 0 || out != "2\n" {
		t.Errorf("--replay: exit %d, out %q: %s", code, out, errOut)
	}
	for _, want := range []string{"Thought 1: I list the items.", `Action 1: extract_items(order="a pizza and a salad")`, `Observation 1: ["pizza","salad"]`, "Answer: 2", "2 steps"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
}

// storedRuns returns the runs of kind in the store at db, whole.
func storedRuns(t *testing.T, db, kind string) []*trace.Record {
	t.Helper()
	s, err := trace.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.List(context.Background(), trace.Filter{Kind: trace.Kind(kind)})
	if err != nil {
		t.Fatal(err)
	}
	var out []*trace.Record
	for _, r := range runs {
		rec, err := s.Get(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// storedExamples returns the stored calls of a ptool that ptk distill
// learns from.
func storedExamples(t *testing.T, db, name string) []trace.PtoolCall {
	t.Helper()
	s, err := trace.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ex, err := s.Examples(context.Background(), name, -1)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestReactToolsNeedApproval: ptk react --tools asks before a model-written
// bash runs, as ptk run does: without --yes or a terminal it is denied (the
// model is told how to allow it), a policy's allow rule or --yes lets it run.
func TestReactToolsNeedApproval(t *testing.T) {
	replies := func() []fakeReply {
		return []fakeReply{
			{content: "I make the file.\n<PTK_CALL>{\"tool\": \"bash\", \"args\": {\"command\": \"touch MADE\"}}</PTK_CALL>"},
			{content: "<answer>done</answer>"},
		}
	}
	ws := workspace(t)
	f, url := newFakeOpenAI(t, replies()...)
	code, out, errOut := runPTK(t, "", "react", "Make the file.", "--tools", "bash", "--workspace", ws, "--base-url", url, "--model", "m", "--echo")
	if code != 0 || out != "done\n" {
		t.Fatalf("exit %d, out %q: %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "MADE")); err == nil {
		t.Fatal("bash ran without approval")
	}
	second, _ := json.Marshal(f.request(1)["messages"])
	if !strings.Contains(string(second), "Denied: ptk is running without a terminal") || !strings.Contains(string(second), "--yes") {
		t.Errorf("the model is not told why and how to allow it:\n%s", second)
	}
	if !strings.Contains(errOut, "Observation 1 (failed): Denied:") {
		t.Errorf("stderr: %s", errOut)
	}

	pol := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(pol, []byte(`{"rules": [{"tool": "bash", "command": "touch", "action": "allow"}]}`), 0o644)
	for _, allow := range [][]string{{"--yes"}, {"--policy", pol}} {
		ws := workspace(t)
		_, url := newFakeOpenAI(t, replies()...)
		args := append([]string{"react", "Make the file.", "--tools", "bash", "--workspace", ws, "--base-url", url, "--model", "m"}, allow...)
		if code, out, errOut := runPTK(t, "", args...); code != 0 || out != "done\n" {
			t.Fatalf("%v: exit %d, out %q: %s", allow, code, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(ws, "MADE")); err != nil {
			t.Errorf("%v: bash did not run", allow)
		}
	}
}

// ptk react --sandbox runs bash as ptk run --sandbox does: without
// bubblewrap it refuses to start.
func TestReactSandboxNeedsBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, _, errOut := runPTK(t, "", "react", "hi", "--tools", "bash", "--sandbox", "--workspace", workspace(t), "--model", "m")
	if code != 2 || !strings.Contains(errOut, "apt install bubblewrap") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
