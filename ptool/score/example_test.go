package score_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/ptool/score"
)

// Two models scored on a dataset with known answers, as 'ptk ptool eval'
// does: the second is wrong on one case.
func ExampleEvaluate() {
	type Review struct {
		Text string `json:"text"`
	}
	cases, _ := score.ReadDataset(strings.NewReader(`{"input": {"text": "I love it"}, "output": "positive"}
{"input": {"text": "Broke in a day"}, "output": "negative"}
`))
	target := func(name string, replies ...string) score.Target {
		var script []llmtest.Reply
		for _, r := range replies {
			script = append(script, llmtest.Text("<answer>"+r+"</answer>"))
		}
		p := ptool.New[Review, string]("classify", "Classify the tone.",
			ptool.WithModel(llmtest.New(script...)), ptool.WithOutputEnum("positive", "negative", "neutral"))
		return score.Target{Name: name, Call: p.CallJSON}
	}
	spec := ptool.New[Review, string]("classify", "Classify the tone.", ptool.WithOutputEnum("positive", "negative", "neutral")).Spec()
	rep, err := score.Evaluate(context.Background(), spec, cases, []score.Target{
		target("good", `"positive"`, `"negative"`),
		target("poor", `"positive"`, `"neutral"`),
	}, score.Options{Concurrency: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rep.Results {
		fmt.Printf("%s: exact %.2f, valid %.2f\n", r.Name, r.Exact, r.Valid)
		for _, c := range r.Cases {
			if c.Verdict != "correct" {
				fmt.Println("  ", string(c.Input), c.Diff)
			}
		}
	}
	// Output:
	// good: exact 1.00, valid 1.00
	// poor: exact 0.50, valid 1.00
	//    {"text": "Broke in a day"} [the output: want "negative", got "neutral"]
}
