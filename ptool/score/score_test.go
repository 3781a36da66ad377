package score_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/ptool/score"
	"github.com/ptkit/ptk/schema"
)

func TestEqualAndCanonical(t *testing.T) {
	for _, c := range []struct {
		a, b string
		eq   bool
	}{
		{`1`, `1.0`, true},
		{`{"a": 1, "b": [1, 2]}`, `{"b": [1, 2.00], "a": 1e0}`, true},
		{`[1, 2]`, `[2, 1]`, false},
		{`"1"`, `1`, false},
		{`{"a": null}`, `{}`, false},
		{`0.1`, `0.10000000000000001`, false},
		{`{`, `{`, false},
	} {
		if got := score.Equal(json.RawMessage(c.a), json.RawMessage(c.b)); got != c.eq {
			t.Errorf("Equal(%s, %s) = %v", c.a, c.b, got)
		}
		ca, ok1 := score.Canonical(json.RawMessage(c.a))
		cb, ok2 := score.Canonical(json.RawMessage(c.b))
		if ok1 && ok2 && (ca == cb) != c.eq {
			t.Errorf("Canonical(%s) = %s, Canonical(%s) = %s", c.a, ca, c.b, cb)
		}
	}
}

func TestJudgeAndDiff(t *testing.T) {
	out, err := schema.Compile(json.RawMessage(`{"type": "object", "properties": {"n": {"type": "integer"}, "tags": {"type": "array"}}, "required": ["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := json.RawMessage(`{"n": 2, "tags": ["a", "b"]}`)
	for _, c := range []struct{ got, verdict, why string }{
		{`{"tags": ["a", "b"], "n": 2.0}`, score.Correct, ""},
		{`{"n": 3, "tags": ["a", "b"]}`, score.Wrong, ""},
		{`{"tags": []}`, score.Wrong, "does not fit the output schema"},
	} {
		v, why := score.Judge(out, want, json.RawMessage(c.got))
		if v != c.verdict || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("Judge(%s) = %s, %q", c.got, v, why)
		}
	}
	got := score.Diff(want, json.RawMessage(`{"n": 3, "tags": ["a", "c"], "x": true}`), 0)
	wantDiff := []string{`/n: want 2, got 3`, `/tags/1: want "b", got "c"`, `/x: not wanted (got true)`}
	if strings.Join(got, "\n") != strings.Join(wantDiff, "\n") {
		t.Errorf("Diff:\n%s", strings.Join(got, "\n"))
	}
	if d := score.Diff(want, json.RawMessage(`{"n": 2}`), 0); len(d) != 1 || d[0] != `/tags: missing (want ["a","b"])` {
		t.Errorf("Diff of a missing member: %q", d)
	}
	if d := score.Diff(json.RawMessage(`"a"`), json.RawMessage(`"b"`), 0); len(d) != 1 || d[0] != `the output: want "a", got "b"` {
		t.Errorf("Diff of strings: %q", d)
	}
}

func TestReadDataset(t *testing.T) {
	for name, text := range map[string]string{
		"lines": "{\"input\": {\"q\": 1}, \"output\": \"a\"}\n\n{\"input\": {\"q\": 2}, \"expected\": [1]}\n",
		"array": `[{"input": {"q": 1}, "output": "a"}, {"input": {"q": 2}, "expected": [1]}]`,
	} {
		cases, err := score.ReadDataset(strings.NewReader(text))
		if err != nil || len(cases) != 2 || string(cases[1].Output) != "[1]" {
			t.Errorf("%s: %+v, %v", name, cases, err)
		}
	}
	for _, bad := range []string{"{\"input\": {}}\n", "{not json}\n", `[{"output": 1}]`} {
		if _, err := score.ReadDataset(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

type q struct {
	Q string `json:"q"`
}

// TestEvaluate: a scripted model wrong on a known case, and a judge.
func TestEvaluate(t *testing.T) {
	cases := []ptk.Example{
		{Input: json.RawMessage(`{"q":"1+1"}`), Output: json.RawMessage(`2`)},
		{Input: json.RawMessage(`{"q":"2+2"}`), Output: json.RawMessage(`4`)},
		{Input: json.RawMessage(`{"q":"3+3"}`), Output: json.RawMessage(`6`)},
		{Input: json.RawMessage(`{"q":"?"}`), Output: json.RawMessage(`0`)},
	}
	replies := map[string]string{"1+1": "<answer>2</answer>", "2+2": "<answer>5</answer>", "3+3": "<answer>\"6\"</answer>", "?": "<cannot_answer>no sum</cannot_answer>"}
	m := &byInput{replies: replies}
	p := ptool.New[q, int]("add", "Add.", ptool.WithModel(m), ptool.WithMaxAttempts(1))
	judge := ptool.New[struct {
		Input    json.RawMessage `json:"input"`
		Expected json.RawMessage `json:"expected"`
		Output   json.RawMessage `json:"output"`
	}, bool]("lenient", "Off by one is fine.", ptool.WithModel(llmtest.New(llmtest.Text("<answer>true</answer>"))))
	rep, err := score.Evaluate(context.Background(), p.Spec(), cases, []score.Target{{Name: "m", Call: p.CallJSON}},
		score.Options{Judge: score.JudgePTool(judge), Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Correct != 2 || r.Wrong != 1 || r.Abstained != 1 || r.Exact != 0.5 || r.Valid != 0.75 || *r.Judged != 0.75 {
		t.Errorf("result = %+v", r)
	}
	wrong := r.Cases[1]
	if wrong.Verdict != score.Wrong || len(wrong.Diff) != 1 || wrong.Diff[0] != "the output: want 4, got 5" || wrong.Judge == nil || !wrong.Judge.Pass {
		t.Errorf("the wrong case: %+v", wrong)
	}
	if v, ok := r.Metric(score.MetricJudge); !ok || v != 0.75 {
		t.Errorf("Metric(judge) = %v, %v", v, ok)
	}
}

// byInput is a model that answers by the question in its last message.
type byInput struct{ replies map[string]string }

func (m *byInput) Generate(_ context.Context, req llm.Request) (*llm.Response, error) {
	var in q
	json.Unmarshal([]byte(strings.TrimPrefix(req.Messages[len(req.Messages)-1].Content, "Input: ")), &in)
	return &llm.Response{Content: m.replies[in.Q]}, nil
}
