package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm/llmtest"
)

func ExampleRun() {
	weather := ptk.NewTool(ptk.ToolInfo{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		ReadOnly:    true,
	}, func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
		var a struct{ City string }
		if err := json.Unmarshal(args, &a); err != nil {
			return ptk.Result{}, err
		}
		return ptk.Result{Content: a.City + ": sunny, 21°C"}, nil
	})

	// A scripted model that writes its call the way Qwen does, then answers.
	// In a program this is openai.New("http://localhost:11434/v1").
	model := llmtest.New(
		llmtest.Text(`<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`),
		llmtest.Text("It is sunny in Paris, 21°C."),
	)
	res, err := agent.Run(context.Background(), agent.Prompt("What is the weather in Paris?"), agent.Options{
		Model: model,
		Mode:  agent.ModePTK,
		Tools: []ptk.Tool{weather},
	})
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	for _, c := range res.ToolCalls {
		fmt.Printf("%s %s -> %s\n", c.Call.Tool, c.Call.Args, c.Result.Content)
	}
	fmt.Println(res.Content)
	// Output:
	// get_weather {"city": "Paris"} -> Paris: sunny, 21°C
	// It is sunny in Paris, 21°C.
}

func ExampleStream() {
	model := llmtest.New(llmtest.Text("Hello!"))
	for e, err := range agent.Stream(context.Background(), agent.Prompt("Say hello."), agent.Options{Model: model}) {
		switch e.Kind {
		case agent.EventIteration:
			fmt.Println("model call", e.Iteration)
		case agent.EventFinal:
			fmt.Println("answer:", e.Text)
		case agent.EventDone:
			fmt.Println("success:", e.Run.Success, "error:", err)
		}
	}
	// Output:
	// model call 1
	// answer: Hello!
	// success: true error: <nil>
}

// A chat's /compact: the older messages of a conversation are replaced,
// for the model, by notes it writes; the latest turn stays as it was, and
// the next run continues from the notes.
func ExampleCompact() {
	var history []ptk.Message
	for _, task := range []string{"Rename greet to hello in main.go.", "Add a test for hello.", "Make hello greet in French."} {
		history = append(history,
			ptk.Message{Role: ptk.RoleUser, Content: task},
			ptk.Message{Role: ptk.RoleAssistant, Content: strings.Repeat("Done, and checked with go test. ", 40)})
	}
	// The model writes the notes; in a program, the chat's own model.
	model := llmtest.New(llmtest.Text("The user renamed greet to hello in main.go and had a test added (hello_test.go, passing)."))
	compacted, c, err := agent.Compact(context.Background(), history, agent.Options{Model: model})
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	notes := compacted[len(compacted)-1]
	fmt.Println(len(compacted), "messages; the notes stand for", notes.Compacted)
	fmt.Println(c.Replaced, "replaced,", c.Kept, "kept as they were")
	// Output:
	// 7 messages; the notes stand for 5
	// 5 replaced, 1 kept as they were
}
