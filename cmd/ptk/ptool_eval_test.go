package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptkit/ptk/trace"
)

// modelServer is an OpenAI-compatible server whose models answer by rule:
// answer is given the model asked for, the system prompt and the user's
// first message (a ptool's input), and returns the reply's text, an
// {"answer": …} object (between <answer> tags when the request asks in the
// protocol). It counts the requests by model.
type modelServer struct {
	url   string
	mu    sync.Mutex
	count map[string]int
}

func newModelServer(t *testing.T, answer func(model, system, user string) string) *modelServer {
	s := &modelServer{count: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model          string
			Messages       []struct{ Role, Content string }
			ResponseFormat any `json:"response_format"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) < 2 {
			http.Error(w, `{"error": {"message": "bad request"}}`, 400)
			return
		}
		s.mu.Lock()
		s.count[req.Model]++
		s.mu.Unlock()
		content := answer(req.Model, req.Messages[0].Content, req.Messages[1].Content)
		if req.ResponseFormat == nil && strings.HasPrefix(content, `{"answer": `) {
			// asked in the protocol: the answer between tags
			content = "<answer>" + strings.TrimSuffix(strings.TrimPrefix(content, `{"answer": `), "}") + "</answer>"
		}
		json.NewEncoder(w).Encode(map[string]any{"id": "1", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 10}})
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/v1"
	return s
}

// inputText is the "text" of a ptool's input in a user message "Input: {…}".
func inputText(user string) string {
	var in struct{ Text string }
	json.Unmarshal([]byte(strings.TrimPrefix(user, "Input: ")), &in)
	return in.Text
}

// TestPtoolEval: a dataset with known answers, and two scripted models
// wrong on known cases: the exact accuracy of each, their wrong cases with
// where they differ, the judge's metric, the JSON report and the exit
// status under --min.
func TestPtoolEval(t *testing.T) {
	dir := t.TempDir()
	labels := []string{"positive", "negative", "neutral", "positive", "negative", "neutral", "positive", "negative", "neutral", "positive"}
	var ds strings.Builder
	for i, l := range labels {
		fmt.Fprintf(&ds, "{\"input\": {\"text\": \"review %d\"}, \"output\": %q}\n", i+1, l)
	}
	dataset := filepath.Join(dir, "cases.jsonl")
	os.WriteFile(dataset, []byte(ds.String()), 0o644)
	ptools := filepath.Join(dir, "ptools.json")
	os.WriteFile(ptools, []byte(`{"ptools": [
	  {"name": "classify_sentiment", "doc": "Classify the tone.",
	   "input": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
	   "output": {"type": "string", "enum": ["positive", "negative", "neutral"]}},
	  {"name": "judge_tone", "doc": "Is the output acceptable for the input, given the expected output?",
	   "input": {"type": "object", "properties": {"input": {}, "expected": {}, "output": {}}},
	   "output": {"type": "boolean"}}]}`), 0o644)
	// "good" is wrong on review 3; "bad" on reviews 2, 5 and 8, and fails
	// on 9 (never an answer that fits)
	wrong := map[string]map[string]bool{"good": {"review 3": true}, "bad": {"review 2": true, "review 5": true, "review 8": true}}
	srv := newModelServer(t, func(model, system, user string) string {
		if strings.Contains(system, "judge_tone") {
			// the judge accepts what was answered for review 2
			return `{"answer": ` + fmt.Sprint(strings.Contains(user, `"review 2"`)) + `}`
		}
		text := inputText(user)
		if model == "bad" && text == "review 9" {
			return "I would rather not say."
		}
		var i int
		fmt.Sscanf(text, "review %d", &i)
		l := labels[i-1]
		if wrong[model][text] {
			l = map[string]string{"positive": "negative", "negative": "neutral", "neutral": "positive"}[l]
		}
		return `{"answer": "` + l + `"}`
	})
	report := filepath.Join(dir, "report.json")
	args := []string{"ptool", "eval", "classify_sentiment", "--ptools", ptools, "--dataset", dataset, "--base-url", srv.url,
		"--model", "good,bad", "--judge", "judge_tone", "--max-attempts", "2", "--report", report}
	code, out, errOut := runPTK(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	t.Log(out)
	for _, want := range []string{
		"classify_sentiment: 10 cases",
		"good   90.0%  100.0%  100.0%     90.0%",
		"bad    60.0%  90.0%   90.0%      70.0%",
		`case 3 {"text":"review 3"}: the output: want "neutral", got "positive"`,
		`case 9 {"text":"review 9"}: classify_sentiment: no valid answer after 2 attempt(s)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Cases   int
		Results []struct {
			Name                          string
			Total, Correct, Wrong, Failed int
			Exact, Valid                  float64
			Judge                         *float64
			Cost                          float64
			Cases                         []struct{ Verdict string }
		}
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.Cases != 10 || len(rep.Results) != 2 {
		t.Fatalf("report: %v\n%s", err, data)
	}
	good, bad := rep.Results[0], rep.Results[1]
	if good.Name != "good" || good.Correct != 9 || good.Exact != 0.9 || good.Valid != 1 || good.Judge == nil || *good.Judge != 0.9 {
		t.Errorf("good: %+v", good)
	}
	// bad's wrong answers: review 2 (the judge accepts it), 5, 8 and 9
	if bad.Correct != 6 || bad.Wrong != 4 || bad.Failed != 1 || bad.Exact != 0.6 || bad.Valid != 0.9 || *bad.Judge != 0.7 {
		t.Errorf("bad: %+v", bad)
	}
	// the judge was asked only of the answers that were not exact
	if n := srv.count["local"]; n != 0 {
		t.Errorf("%d requests for the default model", n)
	}

	// a threshold: bad is under 80% exact, good is not under 90%
	code, _, errOut = runPTK(t, "", append(args, "--min", "0.8")...)
	if code != 1 || !strings.Contains(errOut, "bad: exact 60.0% < 80.0%") || strings.Contains(errOut, "good:") {
		t.Errorf("--min 0.8: exit %d: %s", code, errOut)
	}
	code, _, errOut = runPTK(t, "", append(args, "--min", "0.7", "--metric", "judge")...)
	if code != 0 {
		t.Errorf("--min 0.7 on the judge: exit %d: %s", code, errOut)
	}
	// --json is the report on stdout
	code, out, _ = runPTK(t, "", append(args, "--json")...)
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Results[1].Correct != 6 {
		t.Errorf("--json: exit %d: %s", code, out)
	}
	// mistakes in how it is called
	for _, bad := range [][]string{
		{"ptool", "eval", "classify_sentiment", "--ptools", ptools},
		{"ptool", "eval", "classify_sentiment", "--ptools", ptools, "--dataset", dataset, "--from-store"},
		{"ptool", "eval", "nope", "--ptools", ptools, "--dataset", dataset},
		{"ptool", "eval", "classify_sentiment", "--ptools", ptools, "--dataset", dataset, "--metric", "judge"},
		{"ptool", "eval", "classify_sentiment", "--ptools", ptools, "--dataset", dataset, "--stored-examples", "x"},
		{"ptool", "eval", "classify_sentiment", "--ptools", ptools, "--dataset", filepath.Join(dir, "none.jsonl")},
	} {
		if code, _, errOut := runPTK(t, "", bad...); code != 2 {
			t.Errorf("%v: exit %d: %s", bad[3:], code, errOut)
		}
	}
}

// words are the lower-case words of s.
func words(s string) map[string]bool {
	w := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r < 'a' || r > 'z' }) {
		w[f] = true
	}
	return w
}

// knn answers as the example in its prompt whose text shares the most
// words with the input (the first of equals), and "neutral" when its
// prompt shows none: a scripted model that learns from its examples, so
// that which examples it is shown is what it is measured on.
func knn(_, system, user string) string {
	in := words(inputText(user))
	best, label := 0, "neutral"
	lines := strings.Split(system, "\n")
	for i := 0; i+1 < len(lines); i++ {
		ex, ok := strings.CutPrefix(lines[i], "Input: ")
		out, ok2 := strings.CutPrefix(lines[i+1], "Output: ")
		if !ok || !ok2 {
			continue
		}
		var e struct{ Text string }
		json.Unmarshal([]byte(ex), &e)
		var a struct{ Answer string }
		json.Unmarshal([]byte(out), &a)
		n := 0
		for w := range words(e.Text) {
			if in[w] {
				n++
			}
		}
		if n > best {
			best, label = n, a.Answer
		}
	}
	return `{"answer": "` + label + `"}`
}

// TestPtoolEvalStoredExamples measures WithStoredExamples with the eval
// command against no examples: the good calls of the store, shown as
// examples, make a model that learns from them right on 10 cases of 10,
// against 3 without; the calls that are not good (failed, answered by
// code) are never shown, nor a case's own input (a trap: the store holds
// one case's input with a wrong answer).
func TestPtoolEvalStoredExamples(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "traces.db")
	ctx := t.Context()
	s, err := trace.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour)
	for i, c := range []struct {
		text, label, source string
		failed              bool
	}{
		{"great sound, love it", "positive", "model", false},
		{"love the color, great fit", "positive", "model", false},
		{"broke after one day, awful", "negative", "model", false},
		{"awful battery, broke fast", "negative", "model", false},
		{"it is a chair, arrived on time", "neutral", "model", false},
		{"arrived on time, it works as described", "neutral", "model", false},
		{"love love love great deal", "negative", "code", false},  // the code's answer, wrong
		{"great great great", "", "model", true},                  // failed
		{"it works, arrived on time", "positive", "model", false}, // a case's own input, wrong
	} {
		pc := trace.PtoolCall{Ptool: "classify_sentiment", Input: json.RawMessage(`{"text":"` + c.text + `"}`), Source: c.source, IsError: c.failed}
		if c.label != "" {
			pc.Output = json.RawMessage(`"` + c.label + `"`)
		}
		if err := s.Write(ctx, &trace.Record{Run: trace.Run{ID: trace.NewID(), Kind: trace.KindPtool, Name: "classify_sentiment",
			StartedAt: start.Add(time.Duration(i) * time.Minute), Status: trace.StatusOK}, PtoolCalls: []trace.PtoolCall{pc}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	var ds strings.Builder
	for _, c := range [][2]string{
		{"love it, great price", "positive"}, {"great sound and I love the fit", "positive"}, {"the color is great, love", "positive"},
		{"awful, broke in a day", "negative"}, {"battery broke, awful", "negative"}, {"broke after one week, awful quality", "negative"},
		{"arrived on time, it is a lamp", "neutral"}, {"it works, arrived on time", "neutral"}, {"a chair that works as described", "neutral"},
		{"love love love great deal", "positive"},
	} {
		fmt.Fprintf(&ds, "{\"input\": {\"text\": %q}, \"output\": %q}\n", c[0], c[1])
	}
	dataset := filepath.Join(dir, "cases.jsonl")
	os.WriteFile(dataset, []byte(ds.String()), 0o644)
	ptools := filepath.Join(dir, "ptools.json")
	os.WriteFile(ptools, []byte(`{"ptools": [{"name": "classify_sentiment", "doc": "Classify the tone.",
	  "input": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
	  "output": {"type": "string", "enum": ["positive", "negative", "neutral"]}}]}`), 0o644)
	srv := newModelServer(t, knn)
	code, out, errOut := runPTK(t, "", "ptool", "eval", "classify_sentiment", "--ptools", ptools, "--dataset", dataset, "--trace-db", db,
		"--base-url", srv.url, "--model", "knn", "--stored-examples", "0,8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	var rep struct {
		Results []struct {
			Name  string
			Exact float64
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Results) != 2 {
		t.Fatalf("%v: %s", err, out)
	}
	if r := rep.Results[0]; r.Name != "knn" || r.Exact != 0.3 {
		t.Errorf("no examples: %+v", r)
	}
	if r := rep.Results[1]; r.Name != "knn +8 examples" || r.Exact != 1 {
		t.Errorf("stored examples: %+v", r)
	}
	// from the store: its good calls are the cases (6 good, the trap)
	code, out, errOut = runPTK(t, "", "ptool", "eval", "classify_sentiment", "--ptools", ptools, "--from-store", "--trace-db", db,
		"--base-url", srv.url, "--model", "knn", "--json")
	if code != 0 || !strings.Contains(out, `"cases": 7`) {
		t.Errorf("--from-store: exit %d: %s %s", code, out, errOut)
	}
}
