package ptool_test

import (
	"context"
	"fmt"
	"regexp"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
)

func ExampleNew() {
	type Review struct {
		Text string `json:"text" jsonschema:"the review"`
	}
	type Sentiment struct {
		Sentiment  string  `json:"sentiment" enum:"positive,negative,neutral"`
		Confidence float64 `json:"confidence"`
	}
	// a scripted model; in a program, a model from llm/openai, llm/catalog...
	model := llmtest.New(llmtest.Text(`<answer>{"sentiment": "Positive", "confidence": "0.95"}</answer>`))

	classify := ptool.New[Review, Sentiment]("classify_sentiment",
		"Classify the emotional tone of the review.", ptool.WithModel(model))
	fmt.Println(classify.Spec().Signature())

	s, rec, err := classify.CallRecord(context.Background(), Review{Text: "I love it!"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", s)
	for _, r := range rec.Attempts[0].Repairs {
		fmt.Println("repaired:", r)
	}
	// Output:
	// classify_sentiment(text string) -> {sentiment: "positive"|"negative"|"neutral", confidence: number}
	// {Sentiment:positive Confidence:0.95}
	// repaired: /sentiment: "Positive" read as "positive"
	// repaired: /confidence: "0.95" read as number 0.95
}

func ExamplePTool_Call() {
	type Question struct {
		Question string `json:"question"`
	}
	model := llmtest.New(
		llmtest.Text("About 3 out of 5, I think."), // not an integer: asked again
		llmtest.Text("<answer>3</answer>"))
	count := ptool.New[Question, int]("count_primes", "Count the prime numbers the question asks about.", ptool.WithModel(model))
	n, err := count.Call(context.Background(), Question{"How many primes are there below 6?"})
	fmt.Println(n, err)
	fmt.Println(model.Requests()[1].Messages[3].Content)
	// Output:
	// 3 <nil>
	// Your answer does not fit the output's schema:
	// - the output: expected integer, got string
	// Answer again with the whole output, corrected. Write the output as JSON between <answer> and </answer>, and nothing else. If the input does not let you answer, write <cannot_answer>why</cannot_answer> instead. Never invent an answer.
}

func ExampleDistill() {
	type Order struct {
		Text string `json:"text"`
	}
	model := llmtest.New(llmtest.Text(`<answer>["sushi"]</answer>`))
	extract := ptool.New[Order, []string]("extract_items", "List the food items ordered.", ptool.WithModel(model))

	known := regexp.MustCompile(`\b(pizza|salad|burger)\b`)
	fast := ptool.Distill(func(_ context.Context, o Order) ([]string, error) {
		items := known.FindAllString(o.Text, -1)
		if len(items) == 0 {
			return nil, ptool.ErrFallback // not sure: let the model answer
		}
		return items, nil
	}, extract)

	for _, text := range []string{"a pizza and a salad", "sushi for two"} {
		items, err := fast.Call(context.Background(), Order{text})
		fmt.Println(items, err)
	}
	fmt.Printf("%+v\n", fast.Stats())
	// Output:
	// [pizza salad] <nil>
	// [sushi] <nil>
	// {Calls:2 Code:1 FellBack:1 Model:1 Failed:0}
}
