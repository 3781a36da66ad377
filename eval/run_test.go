package eval

import (
	"bytes"
	"context"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/llm/openai"
	"github.com/ptkit/ptk/llm/replay"
)

func serve(t *testing.T, s *bfclServer) *openai.Client {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return openai.New(srv.URL+"/v1", openai.WithMaxRetries(0))
}

// TestRunPerfectModel asks every question of a model that answers with the
// reference answers, over the OpenAI wire format: 100% in every mode and
// prompt, both verdicts.
func TestRunPerfectModel(t *testing.T) {
	qs := answerable(t, questions(t, 20))
	s := &bfclServer{qs: qs}
	results, err := Run(context.Background(), qs, Options{Model: serve(t, s), ModelName: "perfect",
		Modes: []Mode{ModePTK, ModeNative, ModeAuto}, Prompts: []string{"ptk", "hermes", "pythonic"}, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(qs) * 7; len(results) != want { // native, and ptk and auto with each prompt
		t.Fatalf("%d results, want %d", len(results), want)
	}
	for _, r := range results {
		if r.Error != "" || !r.Correct || !r.Strict.Correct {
			t.Errorf("%s (%s/%s): error %q, verdict %+v, strict %+v, calls %s\n%s", r.ID, r.Mode, r.Prompt, r.Error, r.Verdict, r.Strict, callsText(r.Calls), r.Text)
		}
	}
	for _, sum := range Summarize(results) {
		if sum.Accuracy != 1 || sum.StrictAccuracy != 1 || sum.PromptTokens != 100*sum.Questions {
			t.Errorf("%s %s/%s: accuracy %v, strict %v, prompt tokens %d", sum.Category, sum.Mode, sum.Prompt, sum.Accuracy, sum.StrictAccuracy, sum.PromptTokens)
		}
	}
	t.Logf("%d questions, %d answers, %d requests", len(qs), len(results), s.requests.Load())
}

// TestRunKnownWrongAnswers answers every third question wrongly and checks
// the accuracy is exactly what that gives, per category and overall.
func TestRunKnownWrongAnswers(t *testing.T) {
	qs := answerable(t, questions(t, 20))
	wrongIDs := map[string]bool{}
	wrongIn := map[string]int{}
	for i, q := range qs {
		if i%3 == 0 {
			wrongIDs[q.ID] = true
			wrongIn[q.Category]++
		}
	}
	s := &bfclServer{qs: qs, wrongIDs: wrongIDs}
	results, err := Run(context.Background(), qs, Options{Model: serve(t, s), ModelName: "flawed", Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Correct == wrongIDs[r.ID] || r.Strict.Correct == wrongIDs[r.ID] {
			t.Errorf("%s (%s): correct %v, strict %v, on the wrong list %v", r.ID, r.Mode, r.Correct, r.Strict.Correct, wrongIDs[r.ID])
		}
	}
	for _, sum := range Summarize(results) {
		want := sum.Questions - wrongIn[sum.Category]
		if sum.Category == "all" {
			want = sum.Questions - len(wrongIDs)
		}
		if sum.Correct != want || sum.StrictCorrect != want {
			t.Errorf("%s %s: %d correct (strict %d), want %d of %d", sum.Category, sum.Mode, sum.Correct, sum.StrictCorrect, want, sum.Questions)
		}
	}
}

// TestRunAutoFallsBack asks in auto mode a server that rejects tools: the
// first question is refused natively and asked in the text protocol, and
// the model is remembered so that no other question is asked natively.
func TestRunAutoFallsBack(t *testing.T) {
	qs := answerable(t, questions(t, 1000))[:6]
	s := &bfclServer{qs: qs, noTools: true}
	results, err := Run(context.Background(), qs, Options{Model: serve(t, s), ModelName: "old", Modes: []Mode{ModeAuto}, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Used != ModePTK || !r.Correct || r.Error != "" {
			t.Errorf("%s: used %s, correct %v, error %q", r.ID, r.Used, r.Correct, r.Error)
		}
	}
	if got, want := s.requests.Load(), int64(len(qs)+1); got != want {
		t.Errorf("%d requests, want %d (one refused, then one per question)", got, want)
	}
}

// TestRunResumes skips the questions a previous run answered.
func TestRunResumes(t *testing.T) {
	qs := answerable(t, questions(t, 1000))[:8]
	s := &bfclServer{qs: qs}
	m := serve(t, s)
	first, err := Run(context.Background(), qs[:5], Options{Model: m, Modes: []Mode{ModeNative}})
	if err != nil {
		t.Fatal(err)
	}
	first[1].Error = "connection refused" // a failure is asked again
	all, err := Run(context.Background(), qs, Options{Model: m, Modes: []Mode{ModeNative}, Previous: first})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 8 || s.requests.Load() != 5+4 {
		t.Errorf("%d results, %d requests; want 8 and 9", len(all), s.requests.Load())
	}
}

// TestRunStreamed asks the same questions streamed: the same verdicts.
func TestRunStreamed(t *testing.T) {
	qs := answerable(t, questions(t, 1000))
	wrongIDs := map[string]bool{qs[0].ID: true, qs[len(qs)/2].ID: true}
	s := &bfclServer{qs: qs, wrongIDs: wrongIDs}
	results, err := Run(context.Background(), qs, Options{Model: serve(t, s), Stream: true, Prompts: []string{"hermes"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Error != "" || r.Correct == wrongIDs[r.ID] || r.Usage.PromptTokens != 100 {
			t.Errorf("%s (%s): error %q, correct %v, usage %+v\n%s", r.ID, r.Mode, r.Error, r.Correct, r.Usage, r.Text)
		}
	}
}

// TestRunRecordReplay records a run and replays it without the server:
// the same results, answer for answer.
func TestRunRecordReplay(t *testing.T) {
	qs := answerable(t, questions(t, 1000))
	s := &bfclServer{qs: qs, wrongIDs: map[string]bool{qs[1].ID: true}}
	var rec bytes.Buffer
	opts := Options{Modes: []Mode{ModePTK, ModeNative}, Prompts: []string{"ptk", "hermes"}, Concurrency: 4}
	opts.Model = replay.Record(serve(t, s), &rec)
	first, err := Run(context.Background(), qs, opts)
	if err != nil {
		t.Fatal(err)
	}
	asked := s.requests.Load()
	if opts.Model, err = replay.Load(&rec); err != nil {
		t.Fatal(err)
	}
	again, err := Run(context.Background(), qs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.requests.Load() != asked {
		t.Errorf("the replay asked the server %d more times", s.requests.Load()-asked)
	}
	for i := range first {
		first[i].LatencyMS, again[i].LatencyMS = 0, 0
		if !reflect.DeepEqual(first[i], again[i]) {
			t.Errorf("%s: replayed\n%+v\nrecorded\n%+v", first[i].ID, again[i], first[i])
		}
	}
}

// TestRunCountsWhatWentWrong scripts four answers, each wrong or odd in
// its own way, and checks each result and the summary count them.
func TestRunCountsWhatWentWrong(t *testing.T) {
	qs, err := Load("testdata/bfcl", []string{"simple_python"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	u := ptk.Usage{PromptTokens: 1000, CompletionTokens: 100}
	script := llmtest.New(
		llmtest.Reply{Content: `<PTK_CALL>{"tool": "calculate_triangle_area", "args": {"base": 10, "height": "5"}}</PTK_CALL>`, Usage: u},
		llmtest.Reply{Content: `<PTK_CALL>{"tool": "math.factorial", "args": {}}</PTK_CALL>`, Usage: u},
		llmtest.Reply{Content: `<PTK_CALL>{"tool": "math.hypot", "args": {"x": 4, "y": `, Usage: u},
		llmtest.Reply{Content: "I cannot solve equations.", Usage: u},
	)
	model := llm.Priced(script, llm.Price{Input: 1, Output: 10})
	results, err := Run(context.Background(), qs, Options{Model: model, Modes: []Mode{ModePTK}, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		correct, strict bool
		strictType      string
		notParsed       int
		invalid         string
		refusal         bool
	}
	for i, w := range []want{
		{correct: true, strictType: "type_error:simple"}, // "5" coerced to 5: right for ptk, not for BFCL
		{strictType: "simple_function_checker:missing_required", invalid: "missing_argument"},
		{strictType: "simple_function_checker:wrong_count", notParsed: 1},
		{strictType: "simple_function_checker:wrong_count", refusal: true},
	} {
		r := results[i]
		got := want{r.Correct, r.Strict.Correct, r.Strict.ErrorType, r.NotParsed, strings.Join(r.Invalid, ","), r.Refusal}
		if got != w {
			t.Errorf("%s: %+v, want %+v\n%s", r.ID, got, w, r.Text)
		}
		if r.Cost != 0.002 {
			t.Errorf("%s: cost %v, want 0.002", r.ID, r.Cost)
		}
	}
	if len(results[0].Calls) != 1 || len(results[0].Calls[0].Repairs) == 0 {
		t.Errorf("the coerced call records no repair: %+v", results[0].Calls)
	}
	sums := Summarize(results)
	s := sums[0]
	if s.Category != "simple_python" || s.Questions != 4 || s.Correct != 1 || s.StrictCorrect != 0 || s.NotParsed != 1 ||
		s.Invalid != 1 || s.InvalidRules["missing_argument"] != 1 || s.Refusals != 1 || s.PromptTokens != 4000 || s.Cost != 0.008 {
		t.Errorf("summary %+v", s)
	}
}

func TestPercentile(t *testing.T) {
	lat := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100}
	if p50, p95 := percentile(lat, 50), percentile(lat, 95); p50 != 10 || p95 != 19 {
		t.Errorf("p50 %d, p95 %d; want 10 and 19", p50, p95)
	}
	if percentile(nil, 50) != 0 || percentile([]int64{7}, 95) != 7 {
		t.Error("edge cases")
	}
}
