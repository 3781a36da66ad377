package ptool_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
)

var update = flag.Bool("update", false, "rewrite the golden files")

type review struct {
	Text string `json:"text" jsonschema:"the review, as the customer wrote it"`
}

type sentiment struct {
	Sentiment  string  `json:"sentiment" enum:"positive,negative,neutral" jsonschema:"the tone of the review"`
	Confidence float64 `json:"confidence" jsonschema:"how sure, from 0 to 1"`
}

const classifyDoc = "Classify the emotional tone of a product review."

func classifier(m llm.Model, opts ...ptool.Option) *ptool.PTool[review, sentiment] {
	return ptool.New[review, sentiment]("classify_sentiment", classifyDoc, append([]ptool.Option{ptool.WithModel(m)}, opts...)...)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update to rewrite it):\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestSignature(t *testing.T) {
	p := classifier(nil)
	want := `classify_sentiment(text string) -> {sentiment: "positive"|"negative"|"neutral", confidence: number}`
	if got := p.Spec().Signature(); got != want {
		t.Errorf("Signature()\n got %s\nwant %s", got, want)
	}
	type opt struct {
		Items []string       `json:"items"`
		Lang  *string        `json:"lang"`
		Attrs map[string]int `json:"attrs,omitempty"`
		Tags  []string       `json:"tags,omitempty" enum:"a,b"`
	}
	q := ptool.New[opt, []string]("extract", "Extract.")
	want = `extract(items []string, lang? string|null, attrs? map[string]integer, tags? []"a"|"b") -> []string`
	if got := q.Spec().Signature(); got != want {
		t.Errorf("Signature()\n got %s\nwant %s", got, want)
	}
	e := ptool.New[review, string]("label", "Label.", ptool.WithOutputEnum("spam", "ham"))
	if got, want := e.Spec().Signature(), `label(text string) -> "spam"|"ham"`; got != want {
		t.Errorf("Signature()\n got %s\nwant %s", got, want)
	}
}

func TestPromptGolden(t *testing.T) {
	p := classifier(nil,
		ptool.WithExample(review{Text: "Broke after a day."}, sentiment{Sentiment: "negative", Confidence: 0.95}),
		ptool.WithExample(review{Text: "It is a chair."}, sentiment{Sentiment: "neutral", Confidence: 0.7}))
	got, err := p.Spec().Prompt(review{Text: "I love it! <b>Best</b> purchase & more."})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "classify.golden", got)
	bare := ptool.New[review, string]("label", "Label the review as spam or not.", ptool.WithOutputEnum("spam", "ham"))
	got, err = bare.Spec().Prompt(review{Text: "Buy now"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "label.golden", got)
}

func TestPromptTemplate(t *testing.T) {
	m := llmtest.New(llmtest.Text("<answer>positive</answer>"))
	p := ptool.New[review, string]("tone", "The tone.", ptool.WithModel(m), ptool.WithOutputEnum("positive", "negative"),
		ptool.WithTemplate("Is this {{.Input.Text | printf \"%q\"}} positive or negative? {{.Instructions}}"))
	got, err := p.Call(context.Background(), review{Text: "great"})
	if err != nil || got != "positive" {
		t.Fatalf("Call = %q, %v", got, err)
	}
	msgs := m.Requests()[0].Messages
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0].Content, `Is this "great" positive or negative? Write the output as JSON between <answer>`) {
		t.Errorf("messages = %+v", msgs)
	}
}

// TestShapes: the same answer, written in each way models write it.
func TestShapes(t *testing.T) {
	want := sentiment{Sentiment: "positive", Confidence: 0.9}
	tests := []struct {
		name, reply string
		repairs     []string
	}{
		{"tagged", `<answer>{"sentiment": "positive", "confidence": 0.9}</answer>`, nil},
		{"tag case", "<ANSWER>\n{\"sentiment\": \"positive\", \"confidence\": 0.9}\n</Answer>", nil},
		{"fenced", "```json\n{\"sentiment\": \"positive\", \"confidence\": 0.9}\n```", []string{"read from a code fence"}},
		{"fence in tags", "<answer>\n```json\n{\"sentiment\": \"positive\", \"confidence\": 0.9}\n```\n</answer>", []string{"read from a code fence"}},
		{"prose around", `Sure! The answer is {"sentiment": "positive", "confidence": 0.9}. Hope that helps.`, []string{"the prose around the JSON left out"}},
		{"single quotes, trailing comma", `<answer>{'sentiment': 'positive', 'confidence': 0.9,}</answer>`,
			[]string{"json: single-quoted strings read as JSON strings", "json: trailing comma removed"}},
		{"number as string", `<answer>{"sentiment": "positive", "confidence": "0.9"}</answer>`,
			[]string{`/confidence: "0.9" read as number 0.9`}},
		{"enum case", `<answer>{"sentiment": "Positive", "confidence": 0.9}</answer>`,
			[]string{`/sentiment: "Positive" read as "positive"`}},
		{"think first", `<think>maybe <answer>{"sentiment": "negative"}</answer></think><answer>{"sentiment": "positive", "confidence": 0.9}</answer>`, nil},
		{"no closing tag", `<answer>{"sentiment": "positive", "confidence": 0.9}`, []string{"the closing </answer> is missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := classifier(llmtest.New(llmtest.Text(tt.reply)), ptool.WithMaxAttempts(1))
			got, rec, err := p.CallRecord(context.Background(), review{Text: "I love it"})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if g := strings.Join(rec.Attempts[0].Repairs, "; "); g != strings.Join(tt.repairs, "; ") {
				t.Errorf("repairs = %q, want %q", rec.Attempts[0].Repairs, tt.repairs)
			}
			if rec.Mode != ptool.ModeProtocol || string(rec.Output) != `{"sentiment":"positive","confidence":0.9}` {
				t.Errorf("record: mode %q, output %s", rec.Mode, rec.Output)
			}
		})
	}
}

type question struct {
	Q string `json:"q"`
}

// TestNoGuess: words are not numbers or booleans.
func TestNoGuess(t *testing.T) {
	count := ptool.New[question, int]("count", "Count.", ptool.WithModel(llmtest.New(
		llmtest.Text("3 out of 5"), llmtest.Text("<answer>\"3\"</answer>"))))
	n, rec, err := count.CallRecord(context.Background(), question{"how many?"})
	if err != nil || n != 3 {
		t.Fatalf("Call = %d, %v", n, err)
	}
	if p := rec.Attempts[0].Problems; len(p) != 1 || !strings.Contains(p[0], "expected integer, got string") {
		t.Errorf("first attempt's problems = %q", p)
	}
	if r := rec.Attempts[1].Repairs; len(r) != 1 || r[0] != `the output: "3" read as integer 3` {
		t.Errorf("second attempt's repairs = %q", r)
	}
	yes := ptool.New[question, bool]("yes", "Yes or no.", ptool.WithMaxAttempts(1), ptool.WithModel(llmtest.New(llmtest.Text("maybe"))))
	if _, err := yes.Call(context.Background(), question{"?"}); !errors.Is(err, ptool.ErrAttempts) {
		t.Errorf("maybe as a bool: err = %v", err)
	}
	num := ptool.New[question, float64]("num", "A number.", ptool.WithModel(llmtest.New(llmtest.Text("0.95"))))
	if f, err := num.Call(context.Background(), question{"?"}); err != nil || f != 0.95 {
		t.Errorf("0.95 = %v, %v", f, err)
	}
	words := ptool.New[question, []string]("words", "Words.", ptool.WithModel(llmtest.New(llmtest.Text("Here: ['a', 'b']"))))
	if w, err := words.Call(context.Background(), question{"?"}); err != nil || strings.Join(w, ",") != "a,b" {
		t.Errorf("a list in prose = %q, %v", w, err)
	}
}

func TestRetryWithFeedback(t *testing.T) {
	m := llmtest.New(
		llmtest.Text(`<answer>{"sentiment": "happy", "confidence": 0.9}</answer>`),
		llmtest.Text(`<answer>{"sentiment": "positive", "confidence": 0.9}</answer>`))
	var seen []*ptool.Record
	p := classifier(m, ptool.WithObserver(func(r *ptool.Record) { seen = append(seen, r) }), ptool.WithTemperature(0), ptool.WithMaxTokens(64))
	got, err := p.Call(context.Background(), review{Text: "I love it"})
	if err != nil || got.Sentiment != "positive" {
		t.Fatalf("Call = %+v, %v", got, err)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if r := reqs[1]; r.Temperature == nil || *r.Temperature != 0 || r.MaxTokens != 64 {
		t.Errorf("temperature %v, max tokens %d", r.Temperature, r.MaxTokens)
	}
	msgs := reqs[1].Messages
	if len(msgs) != 4 || msgs[2].Role != ptk.RoleAssistant || msgs[2].Content != `<answer>{"sentiment": "happy", "confidence": 0.9}</answer>` {
		t.Fatalf("retry messages = %+v", msgs)
	}
	fb := msgs[3].Content
	for _, want := range []string{"/sentiment", `"positive"`, `"negative"`, `"neutral"`, "<answer>"} {
		if !strings.Contains(fb, want) {
			t.Errorf("the feedback does not say %s:\n%s", want, fb)
		}
	}
	if len(seen) != 1 {
		t.Fatalf("observer saw %d records", len(seen))
	}
	r := seen[0]
	if string(r.Input) != `{"text":"I love it"}` || len(r.Attempts) != 2 || len(r.Attempts[0].Problems) != 1 || r.Attempts[1].Problems != nil {
		t.Errorf("record = %+v", r)
	}
}

func TestAbstain(t *testing.T) {
	p := classifier(llmtest.New(llmtest.Text("I can't.\n<cannot_answer>the review is in Klingon</cannot_answer>")))
	_, rec, err := p.CallRecord(context.Background(), review{Text: "Qapla'"})
	var ae *ptool.AbstainedError
	if !errors.Is(err, ptool.ErrAbstained) || !errors.As(err, &ae) || ae.Reason != "the review is in Klingon" {
		t.Fatalf("err = %v", err)
	}
	if rec.Abstained != "the review is in Klingon" || len(rec.Attempts) != 1 {
		t.Errorf("record = %+v", rec)
	}
}

func TestExhausted(t *testing.T) {
	m := llmtest.New(llmtest.Text("no idea"), llmtest.Text(`<answer>{"sentiment": "positive"}</answer>`), llmtest.Text(`<answer>{"confidence": "high"}</answer>`))
	p := classifier(m)
	_, err := p.Call(context.Background(), review{Text: "hm"})
	var ae *ptool.AttemptsError
	if !errors.Is(err, ptool.ErrAttempts) || !errors.As(err, &ae) || len(ae.Attempts) != 3 {
		t.Fatalf("err = %v", err)
	}
	for i, a := range ae.Attempts {
		if len(a.Problems) == 0 {
			t.Errorf("attempt %d has no problem", i+1)
		}
	}
	if !strings.Contains(err.Error(), "attempt 3:") {
		t.Errorf("the error does not list the attempts: %v", err)
	}
}

func TestBudgetAndCost(t *testing.T) {
	bad := llmtest.Reply{Content: "no idea", Usage: ptk.Usage{PromptTokens: 1000, CompletionTokens: 100}}
	m := llm.Priced(llmtest.New(bad, bad, bad), llm.Price{Input: 1, Output: 10}) // $0.002 a call
	p := classifier(m, ptool.WithBudget(0.003))
	_, rec, err := p.CallRecord(context.Background(), review{Text: "hm"})
	if !errors.Is(err, ptool.ErrBudget) || len(rec.Attempts) != 2 {
		t.Fatalf("err = %v after %d attempts", err, len(rec.Attempts))
	}
	if rec.Cost < 0.00399 || rec.Cost > 0.00401 || rec.Usage.PromptTokens != 2000 {
		t.Errorf("cost %v, usage %+v", rec.Cost, rec.Usage)
	}
}

func TestConcurrent(t *testing.T) {
	const n = 40
	replies := make([]llmtest.Reply, n)
	for i := range replies {
		replies[i] = llmtest.Text(fmt.Sprintf(`<answer>{"sentiment": "neutral", "confidence": %d}</answer>`, i))
	}
	var mu sync.Mutex
	count := 0
	p := classifier(llmtest.New(replies...), ptool.WithObserver(func(*ptool.Record) { mu.Lock(); count++; mu.Unlock() }))
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := p.Call(context.Background(), review{Text: "x"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if count != n {
		t.Errorf("observer saw %d calls, want %d", count, n)
	}
}

func TestModelError(t *testing.T) {
	boom := &llm.Error{Kind: llm.ErrServer, Message: "down"}
	p := classifier(llmtest.New(llmtest.Reply{Err: boom}))
	_, rec, err := p.CallRecord(context.Background(), review{Text: "x"})
	if !errors.Is(err, llm.ErrServer) || rec.Err == "" {
		t.Errorf("err = %v, record err %q", err, rec.Err)
	}
}

// TestStream: a streamed answer reads as the whole one.
func TestStream(t *testing.T) {
	reply := "Sure.\n```json\n{\"sentiment\": \"negative\", \"confidence\": \"0.25\"}\n```"
	m := llmtest.New(llmtest.Text(reply))
	m.ChunkSize = 1
	got, rec, err := classifier(m, ptool.WithStream(true)).CallRecord(context.Background(), review{Text: "bad"})
	if err != nil || got != (sentiment{"negative", 0.25}) || rec.Attempts[0].Raw != reply {
		t.Errorf("Call = %+v, %v; raw %q", got, err, rec.Attempts[0].Raw)
	}
}

func TestOutputKinds(t *testing.T) {
	counts := ptool.New[question, map[string]int]("counts", "Count each word.", ptool.WithModel(llmtest.New(
		llmtest.Text(`<answer>{"a": 2, "b": "3"}</answer>`))))
	got, err := counts.Call(context.Background(), question{"a a b b b"})
	if err != nil || got["a"] != 2 || got["b"] != 3 {
		t.Errorf("map output = %v, %v", got, err)
	}
	if sig := counts.Spec().Signature(); sig != "counts(q string) -> map[string]integer" {
		t.Errorf("Signature() = %s", sig)
	}
	for name, f := range map[string]func(){
		"enum on a number": func() { ptool.New[question, int]("n", "N.", ptool.WithOutputEnum("1")) },
		"input not struct": func() { ptool.New[string, int]("n", "N.") },
		"bad name":         func() { ptool.New[question, int]("two words", "N.") },
		"example type":     func() { ptool.New[question, int]("n", "N.", ptool.WithExample(question{"x"}, "1")) },
		"unknown model":    func() { ptool.New[question, int]("n", "N.", ptool.WithModelName("no-such-model")) },
		"bad template":     func() { ptool.New[question, int]("n", "N.", ptool.WithTemplate("{{.Input")) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: New did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestDefaultRegistry(t *testing.T) {
	p := ptool.New[question, int]("default_registry_test", "N.")
	if err := ptool.Register(p); err != nil {
		t.Fatal(err)
	}
	if f, ok := ptool.DefaultRegistry.Lookup("default_registry_test"); !ok || f != p {
		t.Error("not in DefaultRegistry")
	}
}
