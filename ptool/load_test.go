package ptool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
)

func TestLoad(t *testing.T) {
	m := llmtest.New(
		llmtest.Text(`<answer>{"sentiment": "POSITIVE", "confidence": 1}</answer>`),
		llmtest.Text("```json\n[\"pizza\", \"salad\"]\n```"))
	ps, err := ptool.Load("testdata/ptools.json", ptool.WithModel(m))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Spec().Signature() != `classify_sentiment(text string) -> {sentiment: "positive"|"negative"|"neutral", confidence: number}` ||
		ps[1].Spec().Signature() != "extract_items(order string) -> []string" {
		t.Fatalf("loaded %v", ps)
	}
	out, err := ps[0].Call(context.Background(), map[string]any{"text": "Great"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(out); string(b) != `{"confidence":1,"sentiment":"positive"}` {
		t.Errorf("classify = %s", b)
	}
	raw, rec, err := ps[1].CallJSON(context.Background(), json.RawMessage(`{"order": "a pizza and a salad"}`))
	if err != nil || string(raw) != `["pizza","salad"]` || rec.Mode != ptool.ModeProtocol {
		t.Errorf("extract = %s, %v", raw, err)
	}
	if _, err := ps[1].Call(context.Background(), map[string]any{"text": "x"}); err == nil || !strings.Contains(err.Error(), "invalid input") {
		t.Errorf("a wrong input: err = %v", err)
	}
	if len(m.Requests()) != 2 {
		t.Errorf("the model was asked %d times; a wrong input must not reach it", len(m.Requests()))
	}
	if sys := m.Requests()[0].Messages[0].Content; !strings.Contains(sys, `Output: <answer>{"sentiment":"negative","confidence":0.95}</answer>`) {
		t.Errorf("the example is not in the prompt:\n%s", sys)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"unknown field": `{"ptools": [{"name": "a", "doc": "x", "output": {"type": "string"}, "colour": 1}]}`,
		"twice":         `{"ptools": [{"name": "a", "output": {"type": "string"}}, {"name": "a", "output": {"type": "string"}}]}`,
		"no output":     `{"ptools": [{"name": "a", "doc": "x"}]}`,
		"bad name":      `{"ptools": [{"name": "a b", "output": {"type": "string"}}]}`,
		"bad example":   `{"ptools": [{"name": "a", "output": {"type": "string"}, "examples": [{"input": {}, "output": 3}]}]}`,
		"unknown model": `{"ptools": [{"name": "a", "output": {"type": "string"}, "model": "no-such-model"}]}`,
	} {
		file := filepath.Join(dir, "p.json")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ptool.Load(file); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
