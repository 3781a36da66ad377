package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPtoolList(t *testing.T) {
	code, out, errOut := runPTK(t, "", "ptool", "list", "--ptools", "testdata/ptools.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`classify_sentiment(text string) -> "positive"|"negative"|"neutral"  gpt-4o-mini`,
		"rate(text string) -> {stars: integer, why?: string}",
		"    From 1 to 5.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the list does not say %q:\n%s", want, out)
		}
	}
	code, out, _ = runPTK(t, "", "ptool", "list", "--ptools", "testdata/ptools.json", "--json")
	var items []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &items) != nil || len(items) != 2 || items[1]["signature"] != "rate(text string) -> {stars: integer, why?: string}" {
		t.Errorf("--json: exit %d, %s", code, out)
	}
}

func TestPtoolCall(t *testing.T) {
	// auto mode on an OpenAI-compatible server: structured output
	fake, url := newFakeOpenAI(t, fakeReply{content: `{"answer": "Positive"}`})
	code, out, errOut := runPTK(t, "", "ptool", "call", "classify_sentiment", "--ptools", "testdata/ptools.json",
		"--input", `{"text": "I love it"}`, "--base-url", url, "--model", "local-model")
	if code != 0 || out != "positive\n" {
		t.Fatalf("exit %d, out %q, err %s", code, out, errOut)
	}
	if rf, _ := fake.request(0)["response_format"].(map[string]any); rf["type"] != "json_schema" {
		t.Errorf("response_format = %v", fake.request(0)["response_format"])
	}
	if !strings.Contains(errOut, "1 attempt(s), structured mode, 120+30 tokens") {
		t.Errorf("stderr = %q", errOut)
	}

	// protocol mode, a wrong answer asked again, the record as JSON
	fake, url = newFakeOpenAI(t, fakeReply{content: "<answer>{\"stars\": \"five\"}</answer>"}, fakeReply{content: "```json\n{\"stars\": 5, \"why\": \"loves it\",}\n```"})
	code, out, errOut = runPTK(t, `{"text": "I love it"}`, "ptool", "call", "rate", "--ptools", "testdata/ptools.json",
		"--input", "-", "--base-url", url, "--model", "local-model", "--mode", "protocol", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rec struct {
		Output   map[string]any
		Mode     string
		Attempts []struct{ Problems, Repairs []string }
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rec.Output["stars"] != 5.0 || rec.Mode != "protocol" || len(rec.Attempts) != 2 || len(rec.Attempts[0].Problems) != 1 || len(rec.Attempts[1].Repairs) == 0 {
		t.Errorf("record = %s", out)
	}
	if _, ok := fake.request(0)["response_format"]; ok {
		t.Error("protocol mode sent response_format")
	}

	// mistakes in how it is called
	for _, args := range [][]string{
		{"ptool", "call", "nope", "--ptools", "testdata/ptools.json", "--input", "{}"},
		{"ptool", "call", "rate", "--ptools", "testdata/ptools.json", "--input", "{not json"},
		{"ptool", "list", "--ptools", "testdata/missing.json"},
	} {
		if code, _, _ := runPTK(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	// an input that does not fit the schema fails before the model is asked
	_, url = newFakeOpenAI(t)
	code, _, errOut = runPTK(t, "", "ptool", "call", "rate", "--ptools", "testdata/ptools.json", "--input", `{"txt": 1}`, "--base-url", url, "--model", "m")
	if code != 1 || !strings.Contains(errOut, "invalid input") {
		t.Errorf("a wrong input: exit %d, %s", code, errOut)
	}
}

// TestPtoolCallChecks: the checks of a ptools file, a CEL expression among
// them, ask the model again with what failed.
func TestPtoolCallChecks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ptools.json")
	os.WriteFile(file, []byte(`{"ptools": [{"name": "quote", "doc": "Quote the words that say why.",
	  "input": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
	  "output": {"type": "object", "properties": {"quote": {"type": "string"}, "score": {"type": "number"}}, "required": ["quote", "score"]},
	  "checks": [{"expr": "input.text.contains(output.quote)", "message": "quote the text word for word"},
	             {"path": "/score", "min": 0, "max": 1}]}]}`), 0o644)
	fake, url := newFakeOpenAI(t, fakeReply{content: `<answer>{"quote": "it burns", "score": 2}</answer>`},
		fakeReply{content: `<answer>{"quote": "on fire", "score": 0.9}</answer>`})
	code, out, errOut := runPTK(t, "", "ptool", "call", "quote", "--ptools", file, "--input", `{"text": "the printer is on fire"}`,
		"--base-url", url, "--model", "m", "--mode", "protocol", "--no-trace")
	if code != 0 || !strings.Contains(out, `"quote": "on fire"`) {
		t.Fatalf("exit %d, out %q: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "attempt 1: check: quote the text word for word") || !strings.Contains(errOut, "attempt 1: check: /score: 2 is above the maximum 1") {
		t.Errorf("stderr: %s", errOut)
	}
	msgs := fake.request(1)["messages"].([]any)
	if fb := toJSON(msgs[len(msgs)-1]); !strings.Contains(fb, "quote the text word for word") {
		t.Errorf("feedback: %s", fb)
	}
	// a check that does not compile is a usage error
	os.WriteFile(file, []byte(`{"ptools": [{"name": "q", "output": {"type": "object"}, "checks": [{"expr": "output.a >"}]}]}`), 0o644)
	if code, _, errOut := runPTK(t, "", "ptool", "list", "--ptools", file); code != 2 || !strings.Contains(errOut, "check 1") {
		t.Errorf("a bad check: exit %d: %s", code, errOut)
	}
}
