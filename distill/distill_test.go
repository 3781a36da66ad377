package distill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// calls makes n stored calls: "love" is positive, "hate" negative, the
// rest a model's judgement (neutral or positive, by no rule code can see).
func calls(n int) []trace.PtoolCall {
	var out []trace.PtoolCall
	for i := range n {
		text, want := fmt.Sprintf("item %d is fine", i), "neutral"
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
		in, _ := json.Marshal(map[string]string{"text": text})
		out = append(out, trace.PtoolCall{Ptool: "classify", Input: in, Output: json.RawMessage(`"` + want + `"`)})
	}
	return out
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

const goodTest = `package distilled

import (
	"context"
	"errors"
	"testing"

	"github.com/ptkit/ptk/ptool"
)

func TestDistilled(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"I love item 0", "positive"}, {"I hate item 1", "negative"}, {"item 2 is fine", ""}} {
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

func answer(v any) llmtest.Reply {
	b, _ := json.Marshal(v)
	return llmtest.Text("<answer>" + string(b) + "</answer>")
}

func candidate(code, test string) llmtest.Reply {
	return answer(Candidate{Code: code, Test: test})
}

var patterns = answer("Texts with love are positive, with hate negative; the rest varies.")

var workDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "distill-test-")
	if err != nil {
		panic(err)
	}
	workDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

func options(t *testing.T, script *llmtest.Script) Options {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return Options{Model: script, Module: root, WorkDir: workDir, Timeout: 90 * time.Second,
		CaseTimeout: 500 * time.Millisecond, Log: t.Logf}
}

func TestSplit(t *testing.T) {
	c := calls(60)
	c = append(c, c[0], trace.PtoolCall{Ptool: "classify", Input: json.RawMessage(`{"text":"x"}`), IsError: true})
	c = append(c, trace.PtoolCall{Ptool: "classify", Input: json.RawMessage(`{ "text" : "I love item 0" }`), Output: json.RawMessage(`"positive"`)})
	train, held := Split(c, 0.25, 7)
	if len(train)+len(held) != 60 || len(held) != 15 {
		t.Fatalf("%d train, %d held out; want 45 and 15 (duplicates and failures left out)", len(train), len(held))
	}
	train2, held2 := Split(c, 0.25, 7)
	if string(held[0].Input) != string(held2[0].Input) || string(train[3].Input) != string(train2[3].Input) {
		t.Error("the same seed split differently")
	}
	_, held3 := Split(c, 0.25, 8)
	same := 0
	for i := range held {
		if string(held[i].Input) == string(held3[i].Input) {
			same++
		}
	}
	if same == len(held) {
		t.Error("another seed split the same way")
	}
	// not by recency: the held-out set is not the last (or first) calls
	first := 0
	for _, e := range held {
		var in struct{ Text string }
		json.Unmarshal(e.Input, &in)
		var n int
		fmt.Sscanf(in.Text[strings.LastIndexAny(in.Text, "m")+2:], "%d", &n)
		if n < 15 {
			first++
		}
	}
	if first == 15 || first == 0 {
		t.Errorf("%d of 15 held out are among the first 15 calls: not at random", first)
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

func run(t *testing.T, replies ...llmtest.Reply) (*Report, error, *llmtest.Script) {
	t.Helper()
	script := llmtest.New(replies...)
	o := options(t, script)
	o.Rounds = len(replies) - 1
	train, held := Split(calls(60), 0.3, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rep, err := Run(ctx, target, train, held, o)
	if rep != nil {
		t.Log(rep.Summary())
	}
	return rep, err, script
}

func TestCorrect(t *testing.T) {
	rep, err, _ := run(t, patterns, candidate(goodCode, goodTest))
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Final().Score
	if !rep.Accepted || s.Wrong != 0 || s.Correct == 0 || s.Abstained == 0 || s.Correct+s.Abstained != s.Total {
		t.Fatalf("accepted %v, score %+v", rep.Accepted, s)
	}
	if !strings.Contains(rep.Summary(), "accepted") {
		t.Error(rep.Summary())
	}
}

func TestCompileErrorThenFixed(t *testing.T) {
	bad := strings.Replace(goodCode, `return "positive", nil`, `return "positive", nil, 1`, 1)
	rep, err, script := run(t, patterns, candidate(bad, goodTest), candidate(goodCode, goodTest))
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
	reqs := script.Requests()
	last := reqs[len(reqs)-1].Messages
	if !strings.Contains(fmt.Sprint(last), "too many return values") {
		t.Error("the second round was not told the compiler's message")
	}
}

func TestWrongOnHeldOut(t *testing.T) {
	// "fine" is not always neutral: this code is wrong on some held-out inputs
	wrong := strings.Replace(goodCode, `return "", ptool.ErrFallback`, `if strings.Contains(in.Text, "fine") {
		return "neutral", nil
	}
	return "", ptool.ErrFallback`, 1)
	rep, err, script := run(t, patterns, candidate(wrong, ""), candidate(goodCode, goodTest))
	if err != nil || !rep.Accepted || len(rep.Rounds) != 2 {
		t.Fatalf("err %v, accepted %v", err, rep.Accepted)
	}
	s := rep.Rounds[0].Score
	if s.Wrong == 0 || len(s.WrongCases) != s.Wrong || !strings.Contains(rep.Rounds[0].Rejected, "wrong on") {
		t.Fatalf("score %+v, rejected %q", s, rep.Rounds[0].Rejected)
	}
	for _, c := range s.WrongCases {
		if string(c.Got) != `"neutral"` || string(c.Want) != `"positive"` {
			t.Errorf("wrong case %s: got %s, want %s", c.Input, c.Got, c.Want)
		}
		reqs := script.Requests()
		var in struct{ Text string }
		json.Unmarshal(c.Input, &in)
		if !strings.Contains(fmt.Sprint(reqs[len(reqs)-1].Messages), in.Text) {
			t.Errorf("the second round was not told of %s", c.Input)
		}
	}
	if !strings.Contains(rep.Summary(), "fine") {
		t.Errorf("the summary does not list the wrong inputs:\n%s", rep.Summary())
	}
}

func TestAlwaysFallsBack(t *testing.T) {
	code := "package distilled\n\nimport (\n\t\"context\"\n\n\t\"github.com/ptkit/ptk/ptool\"\n)\n\nfunc Distilled(ctx context.Context, in In) (Out, error) { return \"\", ptool.ErrFallback }\n"
	rep, err, _ := run(t, patterns, candidate(code, ""))
	if !errors.Is(err, ErrRejected) {
		t.Fatal(err)
	}
	s := rep.Rounds[0].Score
	if s.Coverage != 0 || s.Correct != 0 || s.Abstained != s.Total || !strings.Contains(rep.Rounds[0].Rejected, "answers 0.0%") {
		t.Fatalf("score %+v, rejected %q", s, rep.Rounds[0].Rejected)
	}
}

func TestLoopsAndNetwork(t *testing.T) {
	code := `package distilled

import (
	"context"
	"net/http"
	"strings"

	"github.com/ptkit/ptk/ptool"
)

func Distilled(ctx context.Context, in In) (Out, error) {
	if strings.Contains(in.Text, "hate") {
		resp, err := http.Get("http://example.com/")
		if err != nil {
			return "", err
		}
		resp.Body.Close()
		return "negative", nil
	}
	if strings.Contains(in.Text, "love") {
		for {
		}
	}
	return "", ptool.ErrFallback
}
`
	rep, err, _ := run(t, patterns, candidate(code, ""))
	if !errors.Is(err, ErrRejected) {
		t.Fatal(err)
	}
	s := rep.Rounds[0].Score
	text := fmt.Sprint(s.WrongCases)
	if s.Correct != 0 || s.Wrong == 0 || !strings.Contains(text, "no answer within") {
		t.Fatalf("score %+v", s)
	}
	if strings.HasPrefix(rep.Sandbox, "bubblewrap") && !strings.Contains(text, "dial tcp") && !strings.Contains(text, "lookup") {
		t.Errorf("the network call did not fail in the sandbox: %s", text)
	}
}

func TestFile(t *testing.T) {
	rep := &Report{Ptool: "classify", Train: 42, HeldOut: 18, Accepted: true, Code: goodCode,
		Rounds: []Round{{Accepted: true, Score: &Score{Total: 18, Correct: 12, Abstained: 6, Coverage: 12.0 / 18}}}}
	rep.Types, _ = GoTypes(target.Input, target.Output)
	src, err := File("classify", target, rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package classify", "type In struct", "func Distilled(ctx context.Context, in In) (Out, error)",
		`ptool.WithOutputEnum("positive", "negative", "neutral")`, "ptool.Distill(Distilled, ptool.New[In, Out](Name, Doc, opts...))",
		"// Distilled answers the reviews that say love or hate."} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the file lacks %q:\n%s", want, src)
		}
	}
	if _, err := File("classify", target, &Report{Accepted: true, Code: goodCode}); err == nil {
		t.Error("a file was written without accepted code")
	}
}

func TestNoSandbox(t *testing.T) {
	script := llmtest.New(patterns, candidate(goodCode, goodTest))
	o := options(t, script)
	o.NoSandbox = true
	train, held := Split(calls(60), 0.3, 1)
	rep, err := Run(context.Background(), target, train, held, o)
	if err != nil || !rep.Accepted || !strings.HasPrefix(rep.Sandbox, "none:") || !strings.Contains(rep.Summary(), "not confined") {
		t.Fatalf("err %v, report %+v", err, rep)
	}
}
