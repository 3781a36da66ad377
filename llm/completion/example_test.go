package completion_test

import (
	"context"
	"fmt"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/completion"
)

func Example() {
	// A model behind a plain function: here a stand-in for a local binary
	// or a browser-driven chat, which reads the prompt and, as completion
	// models do, writes on past the end of its turn.
	model := completion.Func(func(ctx context.Context, prompt string) (string, error) {
		fmt.Print(prompt)
		return "Paris.\nUSER: And Italy?", nil
	})
	// In a program: completion.LlamaCpp("http://localhost:8080"), or
	// completion.OpenAI("http://localhost:8000/v1") for vLLM.

	resp, err := model.Generate(context.Background(), llm.Request{Messages: []ptk.Message{
		{Role: ptk.RoleSystem, Content: "Answer in one word."},
		{Role: ptk.RoleUser, Content: "What is the capital of France?"},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", resp.Content)
	// Output:
	// SYSTEM:
	// Answer in one word.
	//
	// USER:
	// What is the capital of France?
	//
	// ASSISTANT:
	// "Paris."
}
