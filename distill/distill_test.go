package distill

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/trace"
)

var target = Target{
	Name:      "classify",
	Doc:       "Classify the tone of a review.",
	Signature: "classify(text: string) -> positive | negative | neutral",
	Input:     json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	Output:    json.RawMessage(`{"type":"string","enum":["positive","negative","neutral"]}`),
}

// review is the i-th stored call: "love" is positive, "hate" negative, the
// rest a model's judgement (neutral or positive, by no rule code can see).
func review(i int) (text, want string) {
	text, want = fmt.Sprintf("item %d is fine", i), "neutral"
	switch i % 3 {
	case 0:
		text, want = fmt.Sprintf("I love item %d", i), "positive"
	case 1:
		text, want = fmt.Sprintf("I hate item %d", i), "negative"
	default:
		if i%2 == 0 {
			want = "positive"
		}
	}
	return text, want
}

// calls makes n stored calls, answered by a model.
func calls(n int) []trace.PtoolCall {
	var out []trace.PtoolCall
	for i := range n {
		text, want := review(i)
		in, _ := json.Marshal(map[string]string{"text": text})
		out = append(out, trace.PtoolCall{Ptool: "classify", Input: in, Output: json.RawMessage(`"` + want + `"`), Source: "model"})
	}
	return out
}

// splits are the splits of 90 calls every test distils.
func splits() Splits { return Split(calls(90), 0.2, 0.3, 1) }

func textOf(e Example) string {
	var in struct{ Text string }
	json.Unmarshal(e.Input, &in)
	return in.Text
}

const goodCode = `package distilled

import (
	"context"
	"strings"

	"github.com/ptkit/ptk/ptool"
)

// Distilled answers the reviews that say love or hate.
func Distilled(ctx context.Context, in In) (Out, error) {
	switch {
	case strings.Contains(in.Text, "love"):
		return "positive", nil
	case strings.Contains(in.Text, "hate"):
		return "negative", nil
	}
	return "", ptool.ErrFallback
}
`

// testFor is a table test of the cases given as input text and the answer
// expected ("" for a fallback).
func testFor(cases ...[2]string) string {
	var rows strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&rows, "\t\t{%q, %q},\n", c[0], c[1])
	}
	return `package distilled

import (
	"context"
	"errors"
	"testing"

	"github.com/ptkit/ptk/ptool"
)

func TestDistilled(t *testing.T) {
	for _, c := range []struct{ in, want string }{
` + rows.String() + `	} {
		got, err := Distilled(context.Background(), In{Text: c.in})
		if c.want == "" {
			if !errors.Is(err, ptool.ErrFallback) {
				t.Errorf("%q: %v, %v; want a fallback", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}
`
}

// firstOf returns the first training example whose text holds word.
func firstOf(s Splits, word string) Example {
	for _, e := range s.Train {
		if strings.Contains(textOf(e), word) {
			return e
		}
	}
	panic("no training example holds " + word)
}

// goodTest tries one training example of each pattern.
func goodTest(s Splits) string {
	return testFor([2]string{textOf(firstOf(s, "love")), "positive"}, [2]string{textOf(firstOf(s, "hate")), "negative"},
		[2]string{textOf(firstOf(s, "fine")), ""})
}

func answer(v any) llmtest.Reply {
	b, _ := json.Marshal(v)
	return llmtest.Text("<answer>" + string(b) + "</answer>")
}

func candidate(code, test string) llmtest.Reply {
	return answer(Candidate{Code: code, Test: test})
}

// patterns are the model's patterns of the training examples s shows: love,
// hate and the rest, each with the numbers of its examples.
func patterns(s Splits) llmtest.Reply {
	var love, hate, rest []int
	for i, e := range s.Train {
		switch t := textOf(e); {
		case strings.Contains(t, "love"):
			love = append(love, i+1)
		case strings.Contains(t, "hate"):
			hate = append(hate, i+1)
		default:
			rest = append(rest, i+1)
		}
	}
	return answer(patternsOut{Patterns: []Pattern{
		{Rule: "texts with love are positive", Examples: love},
		{Rule: "texts with hate are negative", Examples: hate},
		{Rule: "the rest is a judgement: neutral or positive", Examples: rest},
	}})
}

// workDir holds the tests' workspaces; cacheDir the seed of the build
// cache, the user's, so that a test that moves $HOME does not build one.
var workDir, cacheDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "distill-test-")
	if err != nil {
		panic(err)
	}
	workDir = d
	os.Chmod(d, 0o755) // the sandbox's user, nobody, enters it
	var o Options
	o.defaults()
	cacheDir = o.CacheDir
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// needBwrap skips a test without bubblewrap, or fails it when CI says it
// is installed (PTK_TEST_BWRAP_REQUIRED=1).
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("PTK_TEST_BWRAP_REQUIRED") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func options(t *testing.T, script *llmtest.Script) Options {
	return Options{Model: script, WorkDir: workDir, CacheDir: cacheDir, Timeout: 90 * time.Second,
		CaseTimeout: 500 * time.Millisecond, Log: t.Logf}
}

// run distils splits() with the scripted replies, one round per candidate.
func run(t *testing.T, replies ...llmtest.Reply) (*Report, error, *llmtest.Script) {
	t.Helper()
	needBwrap(t)
	script := llmtest.New(replies...)
	o := options(t, script)
	o.Rounds = len(replies) - 1
	return runWith(t, script, o)
}

func runWith(t *testing.T, script *llmtest.Script, o Options) (*Report, error, *llmtest.Script) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep, err := Run(ctx, target, splits(), o)
	if rep != nil {
		t.Log(rep.Summary())
	}
	return rep, err, script
}

// sentToModel is everything the model was sent.
func sentToModel(script *llmtest.Script) string {
	var b strings.Builder
	for _, r := range script.Requests() {
		for _, m := range r.Messages {
			fmt.Fprintf(&b, "%v\n", m)
		}
	}
	return b.String()
}

// noSealedInput fails the test if any sealed input reached the model.
func noSealedInput(t *testing.T, s Splits, script *llmtest.Script) {
	t.Helper()
	sent := sentToModel(script)
	for _, e := range s.Sealed {
		if strings.Contains(sent, textOf(e)+`\"`) || strings.Contains(sent, textOf(e)+`"`) {
			t.Errorf("the sealed input %s reached the model", e.Input)
		}
	}
}

func TestCorrect(t *testing.T) {
	s := splits()
	rep, err, script := run(t, patterns(s), candidate(goodCode, goodTest(s)))
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Final()
	if !rep.Accepted || !rep.Confined || f.Sealed.Wrong != 0 || f.Sealed.Correct == 0 || f.Sealed.Abstained == 0 ||
		f.Validation.Total != len(s.Validation) || f.Sealed.Total != len(s.Sealed) {
		t.Fatalf("accepted %v, sealed %+v, validation %+v", rep.Accepted, f.Sealed, f.Validation)
	}
	if !strings.Contains(rep.Summary(), "accepted") || len(rep.Patterns) != 3 {
		t.Error(rep.Summary())
	}
	noSealedInput(t, s, script)
}

func TestSplit(t *testing.T) {
	c := calls(60)
	c = append(c, c[0], trace.PtoolCall{Ptool: "classify", Input: json.RawMessage(`{"text":"x"}`), IsError: true})
	c = append(c, trace.PtoolCall{Ptool: "classify", Input: json.RawMessage(`{ "text" : "I love item 0" }`), Output: json.RawMessage(`"positive"`)})
	// the code's own answer is no example; a fallback's answer, a model's, is
	c = append(c, trace.PtoolCall{Ptool: "classify", Input: json.RawMessage(`{"text":"by code"}`), Output: json.RawMessage(`"positive"`), Source: "code"})
	c = append(c, trace.PtoolCall{Ptool: "classify", Input: json.RawMessage(`{"text":"fell back"}`), Output: json.RawMessage(`"neutral"`), Source: "model", Fallback: true})
	s := Split(c, 0.2, 0.3, 7)
	if len(s.Train)+len(s.Validation)+len(s.Sealed) != 61 || len(s.Sealed) != 18 || len(s.Validation) != 12 {
		t.Fatalf("%d train, %d validation, %d sealed; want 31, 12 and 18 (duplicates, failures and code answers left out)",
			len(s.Train), len(s.Validation), len(s.Sealed))
	}
	all := append(append(append([]Example(nil), s.Train...), s.Validation...), s.Sealed...)
	for _, e := range all {
		if textOf(e) == "by code" {
			t.Error("a call the code answered is an example")
		}
	}
	s2 := Split(c, 0.2, 0.3, 7)
	if string(s.Sealed[0].Input) != string(s2.Sealed[0].Input) || string(s.Validation[3].Input) != string(s2.Validation[3].Input) {
		t.Error("the same seed split differently")
	}
	s3 := Split(c, 0.2, 0.3, 8)
	same := 0
	for i := range s.Sealed {
		if string(s.Sealed[i].Input) == string(s3.Sealed[i].Input) {
			same++
		}
	}
	if same == len(s.Sealed) {
		t.Error("another seed split the same way")
	}
	// not by recency: the sealed set is not the last (or first) calls
	first := 0
	for _, e := range s.Sealed {
		var n int
		fmt.Sscanf(textOf(e)[strings.LastIndexAny(textOf(e), "m")+2:], "%d", &n)
		if n < 18 {
			first++
		}
	}
	if first == 18 || first == 0 {
		t.Errorf("%d of 18 sealed are among the first 18 calls: not at random", first)
	}
	if small := Split(calls(3), 0.2, 0.3, 1); len(small.Train) != 1 || len(small.Validation) != 1 || len(small.Sealed) != 1 {
		t.Errorf("3 calls: %d, %d, %d; want one in each split", len(small.Train), len(small.Validation), len(small.Sealed))
	}
}

func TestEqual(t *testing.T) {
	for _, c := range []struct {
		a, b string
		eq   bool
	}{
		{`1`, `1.0`, true}, {`{"a":1,"b":[1,2]}`, `{"b":[1,2.0],"a":1e0}`, true},
		{`[1,2]`, `[2,1]`, false}, {`"1"`, `1`, false}, {`{"a":1}`, `{"a":1,"b":null}`, false},
		{`0.1`, `0.10000000000000001`, false}, {`null`, `null`, true}, {`x`, `x`, false},
		{`"true"`, `true`, false}, {`"null"`, `null`, false}, {`{"a":"1"}`, `{"a":1}`, false}, {`[true,null]`, `[true,null]`, true},
	} {
		if got := Equal(json.RawMessage(c.a), json.RawMessage(c.b)); got != c.eq {
			t.Errorf("Equal(%s, %s) = %v, want %v", c.a, c.b, got, c.eq)
		}
		ka, oka := canonical(json.RawMessage(c.a))
		kb, okb := canonical(json.RawMessage(c.b))
		if (oka && okb && ka == kb) != c.eq {
			t.Errorf("canonical(%s) = %q, canonical(%s) = %q: equal %v, want %v", c.a, ka, c.b, kb, ka == kb, c.eq)
		}
	}
}

func TestGoTypes(t *testing.T) {
	got, err := GoTypes(json.RawMessage(`{"type":"object","properties":{"user_id":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},
		"kind":{"type":"string","enum":["a","b"],"description":"the kind"},"loc":{"type":"object","properties":{"lat":{"type":"number"}}}},"required":["user_id"]}`),
		target.Output)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"UserId int64 `json:\"user_id\"`", "Tags []string `json:\"tags,omitempty\"`",
		"Kind string `json:\"kind,omitempty\" enum:\"a,b\"`", "// the kind.", "Lat float64 `json:\"lat,omitempty\"`", "type Out = string"} {
		if !strings.Contains(got, want) {
			t.Errorf("GoTypes lacks %q:\n%s", want, got)
		}
	}
}

// wrongCode says "fine" is neutral, which it is only half the time.
var wrongCode = strings.Replace(goodCode, `return "", ptool.ErrFallback`, `if strings.Contains(in.Text, "fine") {
		return "neutral", nil
	}
	return "", ptool.ErrFallback`, 1)

// firstWith returns the first training example whose text holds word and
// whose output is want.
func firstWith(s Splits, word, want string) Example {
	for _, e := range s.Train {
		if strings.Contains(textOf(e), word) && string(e.Output) == `"`+want+`"` {
			return e
		}
	}
	panic("no training example")
}

// wrongTest passes with wrongCode: its "fine" example is a neutral one.
func wrongTest(s Splits) string {
	return testFor([2]string{textOf(firstOf(s, "love")), "positive"}, [2]string{textOf(firstOf(s, "hate")), "negative"},
		[2]string{textOf(firstWith(s, "fine", "neutral")), "neutral"})
}

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with the file testdata/name.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update to rewrite it):\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

// request is what one request sent the model, as the golden files show it.
func request(script *llmtest.Script, i int) string {
	var b strings.Builder
	for _, m := range script.Requests()[i].Messages {
		fmt.Fprintf(&b, "--- %s\n%s\n", m.Role, m.Content)
	}
	return b.String()
}

// TestWrongOnValidationThenRight: a candidate wrong on some inputs is
// rejected by the gate on the sealed split; the model is told the wrong
// validation cases, never a sealed input or a sealed number; the prompts
// are the golden files.
// TestWrongOnValidationThenRight: a candidate wrong on validation and on
// the sealed split is rejected, the next round told the validation cases
// and not the sealed ones; the observer is told each round, check and
// model call as they happen, in the report's order, and no sealed input.
func TestWrongOnValidationThenRight(t *testing.T) {
	s := splits()
	needBwrap(t)
	script := llmtest.New(patterns(s), candidate(wrongCode, wrongTest(s)), candidate(goodCode, goodTest(s)))
	o := options(t, script)
	o.Rounds = 2
	var events []Event
	o.Observe = func(e Event) { events = append(events, e) }
	rep, err, script := runWith(t, script, o)
	if err != nil || !rep.Accepted || len(rep.Rounds) != 2 {
		t.Fatalf("err %v, accepted %v", err, rep.Accepted)
	}
	var kinds []string
	var checks [3][]Check
	for _, e := range events {
		k := fmt.Sprintf("%s:%d", e.Kind, e.Round)
		switch e.Kind {
		case EventCheck:
			k += ":" + e.Check.Name
			checks[e.Round] = append(checks[e.Round], *e.Check)
		case EventRoundEnd:
			k += fmt.Sprintf(":%v", e.Accepted)
		}
		kinds = append(kinds, k)
	}
	if got, want := strings.Join(kinds, " "), "call:0 round:1 call:1 check:1:screen check:1:compile check:1:tests check:1:validation check:1:sealed round_end:1:false "+
		"round:2 call:2 check:2:screen check:2:compile check:2:tests check:2:validation check:2:sealed round_end:2:true"; got != want {
		t.Errorf("events:\n%s\nwant\n%s", got, want)
	}
	for i, r := range rep.Rounds {
		if !reflect.DeepEqual(checks[i+1], r.Checks) {
			t.Errorf("round %d: the checks told %+v, the report's %+v", r.N, checks[i+1], r.Checks)
		}
	}
	told, _ := json.Marshal(events)
	for _, e := range s.Sealed {
		if strings.Contains(string(told), textOf(e)) {
			t.Errorf("the observer was told the sealed input %s", e.Input)
		}
	}
	r := rep.Rounds[0]
	if r.Validation.Wrong == 0 || r.Sealed == nil || r.Sealed.Wrong == 0 || !strings.Contains(r.Rejected, "of the sealed inputs") {
		t.Fatalf("round 1: validation %+v, sealed %+v, rejected %q", r.Validation, r.Sealed, r.Rejected)
	}
	feedback := request(script, 2)
	for _, c := range r.Validation.WrongCases {
		if !strings.Contains(feedback, textOf(Example{Input: c.Input})) {
			t.Errorf("the second round was not told of %s", c.Input)
		}
	}
	if !strings.Contains(feedback, "the gate on the sealed inputs, which you are never shown, rejected it") ||
		strings.Contains(feedback, fmt.Sprintf("%.1f%%", 100*r.Sealed.WrongRate)) {
		t.Errorf("the feedback on the sealed split:\n%s", feedback)
	}
	noSealedInput(t, s, script)
	golden(t, "prompts/patterns.golden", request(script, 0))
	golden(t, "prompts/code.golden", request(script, 1))
	golden(t, "prompts/feedback.golden", feedback)
}

func TestCompileErrorThenFixed(t *testing.T) {
	s := splits()
	bad := strings.Replace(goodCode, `return "positive", nil`, `return "positive", nil, 1`, 1)
	rep, err, script := run(t, patterns(s), candidate(bad, goodTest(s)), candidate(goodCode, goodTest(s)))
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Rounds[0]
	if r.Compiled || r.Accepted || !strings.Contains(r.Build, "too many return values") {
		t.Fatalf("round 1: compiled %v accepted %v, build output:\n%s", r.Compiled, r.Accepted, r.Build)
	}
	if len(rep.Rounds) != 2 || !rep.Accepted {
		t.Fatalf("%d rounds, accepted %v", len(rep.Rounds), rep.Accepted)
	}
	if !strings.Contains(request(script, 2), "too many return values") {
		t.Error("the second round was not told the compiler's message")
	}
}

// TestTestsRequired: a candidate with no test file, with tests that never
// call Distilled, that try no example of a pattern, or that pass when the
// code always falls back, is rejected (on main, the first "passed its
// tests").
func TestTestsRequired(t *testing.T) {
	s := splits()
	noCall := "package distilled\n\nimport \"testing\"\n\nfunc TestNothing(t *testing.T) {}\n"
	partial := testFor([2]string{textOf(firstOf(s, "love")), "positive"}, [2]string{textOf(firstOf(s, "hate")), "negative"})
	loose := strings.Replace(goodTest(s), `if err != nil || got != c.want {`, `if err == nil && got != c.want {`, 1)
	loose = strings.Replace(loose, `if !errors.Is(err, ptool.ErrFallback) {`, `if err != nil && !errors.Is(err, ptool.ErrFallback) {`, 1)
	rep, err, script := run(t, patterns(s), candidate(goodCode, ""), candidate(goodCode, noCall), candidate(goodCode, partial), candidate(goodCode, loose))
	if !errors.Is(err, ErrRejected) || len(rep.Rounds) != 4 {
		t.Fatalf("%v, %d rounds", err, len(rep.Rounds))
	}
	for i, want := range []string{"the check before compiling rejected it", "its tests never call Distilled",
		"its tests try no example of 1 of the 3 patterns", "its tests do not check the answers"} {
		if r := rep.Rounds[i]; !strings.HasPrefix(r.Rejected, want) {
			t.Errorf("round %d: rejected %q, want %q", i+1, r.Rejected, want)
		}
	}
	if !strings.Contains(strings.Join(rep.Rounds[0].Screen, "\n"), "there is no test file") {
		t.Errorf("round 1: %v", rep.Rounds[0].Screen)
	}
	if rep.Rounds[2].Uncovered[0] != 2 || !strings.Contains(request(script, 4), "- the rest is a judgement: neutral or positive (for instance") {
		t.Errorf("round 3: uncovered %v; the feedback:\n%s", rep.Rounds[2].Uncovered, request(script, 4))
	}
}

func TestAlwaysFallsBack(t *testing.T) {
	s := splits()
	code := "package distilled\n\nimport (\n\t\"context\"\n\n\t\"github.com/ptkit/ptk/ptool\"\n)\n\nfunc Distilled(ctx context.Context, in In) (Out, error) { return \"\", ptool.ErrFallback }\n"
	rep, err, _ := run(t, patterns(s), candidate(code, testFor([2]string{textOf(firstOf(s, "love")), ""},
		[2]string{textOf(firstOf(s, "hate")), ""}, [2]string{textOf(firstOf(s, "fine")), ""})))
	if !errors.Is(err, ErrRejected) {
		t.Fatal(err)
	}
	r := rep.Rounds[0]
	if r.Validation.Coverage != 0 || !r.Unchecked || r.Sealed != nil {
		t.Fatalf("validation %+v, unchecked %v, rejected %q", r.Validation, r.Unchecked, r.Rejected)
	}
}

func TestFile(t *testing.T) {
	rep := &Report{Ptool: "classify", Train: 45, Validation: 18, Sealed: 27, Accepted: true, Code: goodCode,
		Rounds: []Round{{Accepted: true, Sealed: &Score{Total: 27, Correct: 18, Abstained: 9, Coverage: 18.0 / 27}}}}
	rep.Types, _ = GoTypes(target.Input, target.Output)
	src, err := File("classify", target, rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package classify", "type In struct", "func Distilled(ctx context.Context, in In) (Out, error)",
		`ptool.WithOutputEnum("positive", "negative", "neutral")`, "ptool.Distill(Distilled, ptool.New[In, Out](Name, Doc, opts...))",
		"// Distilled answers the reviews that say love or hate.", "27 sealed examples; on the sealed ones, never shown to the model, the code answered 67%"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the file lacks %q:\n%s", want, src)
		}
	}
	if _, err := File("classify", target, &Report{Accepted: true, Code: goodCode}); err == nil {
		t.Error("a file was written without accepted code")
	}
}

// TestNoSandbox: without bubblewrap, Run refuses (on main it ran the code
// unconfined, saying so only in the report); with NoSandbox it runs the
// code unconfined and the report says it was asked to.
func TestNoSandbox(t *testing.T) {
	gobin, _, err := goTool()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	os.Symlink(gobin, filepath.Join(bin, "go"))
	t.Setenv("PATH", bin) // the go command, and no bwrap
	s := splits()
	script := llmtest.New(patterns(s), candidate(goodCode, goodTest(s)))
	_, err, _ = runWith(t, script, options(t, script))
	if !errors.Is(err, ErrNoSandbox) || !strings.Contains(err.Error(), "bubblewrap") || !strings.Contains(err.Error(), "NoSandbox") {
		t.Fatalf("without bubblewrap: %v", err)
	}
	if len(script.Requests()) != 0 {
		t.Error("the model was asked for code that could not be confined")
	}
	o := options(t, script)
	o.NoSandbox = true
	rep, err, _ := runWith(t, script, o)
	if err != nil || !rep.Accepted || rep.Confined || !strings.HasPrefix(rep.Sandbox, "none: --no-sandbox was given") {
		t.Fatalf("err %v, report %+v", err, rep)
	}
}

// TestSummaryShowsControlCharacters: what a candidate's tests printed is
// shown with its escape sequences visible, never acted on by a terminal.
func TestSummaryShowsControlCharacters(t *testing.T) {
	rep := &Report{Ptool: "classify", Rounds: []Round{{N: 1, Compiled: true, Rejected: "its tests fail",
		Tests: "\x1b[2J\x1b[Hall good\r\n\u202eevil\x00", FailedTests: failedTests("--- FAIL: Test\x1b[31mX (0.00s)\n")}}}
	sum := rep.Summary()
	if strings.ContainsAny(sum, "\x1b\r\x00\u202e") || !strings.Contains(sum, `\x1b[2J\x1b[Hall good\x0d`) || !strings.Contains(sum, `\u202eevil\x00`) {
		t.Errorf("the summary:\n%q", sum)
	}
	if !strings.Contains(sum, "tests failed: Test[31mX") {
		t.Errorf("the failed test's name: %q", sum)
	}
}
