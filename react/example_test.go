package react_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/react"
	"github.com/ptkit/ptk/tool"
)

func ExampleRun() {
	type Item struct {
		Item string `json:"item"`
	}
	price := tool.New("price", "The price of an item, in dollars.", func(_ context.Context, in Item) (int, error) {
		return map[string]int{"pizza": 9}[in.Item], nil
	})
	// a scripted model; in a program, a model from llm/openai, llm/catalog...
	model := llmtest.New(
		llmtest.Text("I look the price up.\n<PTK_CALL>\n{\"tool\": \"price\", \"args\": {\"item\": \"pizza\"}}\n</PTK_CALL>"),
		llmtest.Text("It costs 9 dollars. <answer>9</answer>"),
	)
	res, err := react.Run(context.Background(), "What does a pizza cost?",
		react.Options{Model: model, Tools: []ptk.Tool{price}, Echo: os.Stdout})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Trajectory.PTP())
	// Output:
	// Thought 1: I look the price up.
	// Action 1: price(item="pizza")
	// Observation 1: 9
	// Thought 2: It costs 9 dollars.
	// Answer: 9
	// Goal: What does a pizza cost?
	// Calling price(item="pizza")...
	// ...price returned 9
	// Final answer: 9
}
