package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk/llm/llmtest"
)

func TestPlanAskedAgainWithProblems(t *testing.T) {
	reg := orders(t, answer(`{}`), answer(`""`), answer(`1`))
	planner := llmtest.New(
		llmtest.Text(`<answer>{"steps": [
			{"ptool": "extract_items", "args": {"text": "a pizza"}, "goal": "items"},
			{"ptool": "describe_item", "args": {"item": {"$ref": "step_0", "path": "/items"}}, "goal": "describe"}]}</answer>`),
		llmtest.Text(`<answer>{"steps": [
			{"ptool": "extract_items", "args": {"text": "a pizza"}, "goal": "items"},
			{"ptool": "describe_item", "args": {"item": {"$ref": "step_0", "path": "/items/0"}}, "goal": "describe"}]}</answer>`),
	)
	tr, err := Plan(context.Background(), "describe the first item of 'a pizza'", reg, PlanOptions{Model: planner})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Steps) != 2 || string(tr.Steps[1].Args) != `{"item":{"$ref":"step_0","path":"/items/0"}}` {
		t.Fatalf("plan %+v", tr.Steps)
	}
	reqs := planner.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d planning calls", len(reqs))
	}
	first := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	if !strings.Contains(first, "describe_item(item string) -> string") {
		t.Errorf("the planner was not given the signatures:\n%s", first)
	}
	again := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	if !strings.Contains(again, "step_1 (describe_item), argument /item: step_0/items is array, but the argument takes string") {
		t.Errorf("the planner was not told the problem:\n%s", again)
	}
}

func TestPlanGivesUp(t *testing.T) {
	reg := orders(t, answer(`{}`), answer(`""`), answer(`1`))
	bad := `<answer>{"steps": [{"ptool": "describe_item", "args": {}, "goal": "g"}]}</answer>`
	planner := llmtest.New(llmtest.Text(bad), llmtest.Text(bad))
	tr, err := Plan(context.Background(), "g", reg, PlanOptions{Model: planner, Rounds: 2})
	if !errors.Is(err, ErrCheck) || tr == nil || len(planner.Requests()) != 2 {
		t.Fatalf("err %v, %d calls", err, len(planner.Requests()))
	}
}

func TestGoProgramCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	tr := threeSteps()
	tr.ID = "wf_test"
	tr.Steps = append([]Step{{PTool: "describe_item", Args: Args(Item{"unused `quote`"}), Goal: "a step nothing uses"}}, tr.Steps...)
	for i := range tr.Steps {
		tr.Steps[i].ID = []string{"warmup", "step_0", "step_1", "step_2"}[i]
	}
	src, err := GoProgram(tr)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	for _, want := range []string{
		`s_step_0, err := workflow.Call(ctx, reg, "extract_items", map[string]any{"text": json.RawMessage("\"a pizza and a salad\"")})`,
		`s_step_1_0, err := workflow.At(s_step_0, "/items/0")`,
		`"note": s_step_2_1`,
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("missing %q in\n%s", want, src)
		}
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	dir := t.TempDir()
	gomod := "module generated\n\ngo 1.26.0\n\nrequire github.com/ptkit/ptk v0.0.0\n\nreplace github.com/ptkit/ptk => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "-mod=mod", "-o", filepath.Join(dir, "prog"), ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the program does not compile: %v\n%s\n%s", err, out, src)
	}

	// The program runs against the model its flags, or its environment,
	// point it at.
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model    string
			Messages []struct{ Content string }
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		mu.Lock()
		seen = append(seen, body.Model+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		answer := `"hot"`
		switch sys := body.Messages[0].Content; {
		case strings.Contains(sys, "function extract_items("):
			answer = `{"items": ["pizza", "salad"]}`
		case strings.Contains(sys, "function count_items("):
			answer = `2`
		}
		content, _ := json.Marshal(`{"answer": ` + answer + `}`)
		io.WriteString(w, `{"id": "1", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
			"message": {"role": "assistant", "content": `+string(content)+`}}]}`)
	}))
	defer srv.Close()
	ptools := filepath.Join(dir, "ptools.json")
	os.WriteFile(ptools, []byte(`{"ptools": [
	  {"name": "extract_items", "doc": "List the items.", "model": "gpt-4o",
	   "input": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
	   "output": {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}, "required": ["items"]}},
	  {"name": "describe_item", "doc": "Describe it.",
	   "input": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}, "output": {"type": "string"}},
	  {"name": "count_items", "doc": "Count them.",
	   "input": {"type": "object", "properties": {"items": {"type": "array"}, "note": {"type": "string"}}, "required": ["items"]}, "output": {"type": "integer"}}]}`), 0o644)
	for _, c := range []struct {
		name string
		args []string
		env  []string
	}{
		{"flags", []string{"-model", "my-model", "-base-url", srv.URL, "-api-key", "k1"}, nil},
		{"environment", nil, []string{"PTK_MODEL=my-model", "PTK_BASE_URL=" + srv.URL, "PTK_API_KEY=k1"}},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		run := exec.Command(filepath.Join(dir, "prog"), append(c.args, ptools)...)
		run.Env = append(os.Environ(), c.env...)
		out, err := run.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "2" {
			t.Errorf("%s: the program said %q, %v", c.name, out, err)
		}
		mu.Lock()
		if len(seen) != 4 || seen[0] != "my-model Bearer k1" {
			t.Errorf("%s: the server saw %q", c.name, seen)
		}
		mu.Unlock()
	}
	if out, err := exec.Command(filepath.Join(dir, "prog")).CombinedOutput(); err == nil || !strings.Contains(string(out), "usage:") {
		t.Errorf("no arguments: %v, %s", err, out)
	}
}
