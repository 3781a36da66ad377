package workflow_test

import (
	"context"
	"fmt"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/workflow"
)

func ExampleRun() {
	type Order struct {
		Text string `json:"text"`
	}
	type Item struct {
		Item string `json:"item"`
	}
	// scripted models; in a program, models from llm/openai, llm/catalog...
	reg := ptool.NewRegistry()
	_ = reg.Register(ptool.New[Order, []string]("extract_items", "List the food items ordered.",
		ptool.WithModel(llmtest.New(llmtest.Text(`<answer>["pizza", "salad"]</answer>`)))))
	_ = reg.Register(ptool.New[Item, string]("describe_item", "Describe the item in a few words.",
		ptool.WithModel(llmtest.New(llmtest.Text(`<answer>"a round flatbread"</answer>`)))))

	trace := &workflow.Trace{Goal: "describe the first item ordered", Steps: []workflow.Step{
		{PTool: "extract_items", Args: workflow.Args(Order{"a pizza and a salad"})},
		{PTool: "describe_item", Args: workflow.Args(map[string]any{"item": workflow.Ref("step_0", "/0")})},
	}}
	done, err := workflow.Run(context.Background(), trace, workflow.Options{Registry: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range done.Steps {
		fmt.Printf("%s %s %s -> %s\n", st.PTool, st.Status, st.Input, st.Result)
	}
	// Output:
	// extract_items completed {"text":"a pizza and a salad"} -> ["pizza","salad"]
	// describe_item completed {"item":"pizza"} -> "a round flatbread"
}

func ExampleCheck() {
	type Item struct {
		Item string `json:"item"`
	}
	reg := ptool.NewRegistry()
	_ = reg.Register(ptool.New[Item, []string]("split", "Split the item into its parts."))
	trace := &workflow.Trace{Goal: "g", Steps: []workflow.Step{
		{PTool: "split", Args: workflow.Args(map[string]any{"item": workflow.Ref("step_1")})},
		{PTool: "split", Args: workflow.Args(map[string]any{"item": workflow.Ref("step_0")})},
		{PTool: "join", Args: workflow.Args(map[string]any{})},
	}}
	for _, p := range workflow.Check(trace, reg) {
		fmt.Println(p)
	}
	// Output:
	// step_0 (split), argument /item: refers to step_1, which comes later (step 1); a step can use only earlier steps' outputs
	// step_1 (split), argument /item: step_0 is array, but the argument takes string
	// step_2 (join): no ptool "join" is registered (registered: split)
}
