package eval

import (
	"bytes"
	"context"
	"net/http/httptest"
	"reflect"
	"testing"

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
