package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/llm/replay"
)

func Example() {
	weather := ptk.NewTool(ptk.ToolInfo{
		Name:       "get_weather",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}, func(_ context.Context, args json.RawMessage) (ptk.Result, error) {
		return ptk.Result{Content: "sunny, 21°C"}, nil
	})
	run := func(m llm.Model, prompt string) (*agent.Result, error) {
		return agent.Run(context.Background(), agent.Prompt(prompt), agent.Options{Model: m, Mode: agent.ModePTK, Tools: []ptk.Tool{weather}})
	}

	// Record a run once. In a program: replay.RecordFile(openai.New(url), path).
	var recording bytes.Buffer
	model := replay.Record(llmtest.New(
		llmtest.Text(`<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`),
		llmtest.Text("It is sunny in Paris."),
	), &recording)
	res, err := run(model, "Weather in Paris?")
	fmt.Println("recorded:", res.Content, err)

	// Replay it, without the model. In a test: replay.Open(path).
	player, err := replay.Load(&recording)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err = run(player, "Weather in Paris?")
	fmt.Println("replayed:", res.Content, err)

	// A run that asks something else is not in the recording.
	_, err = run(player, "Weather in Rome?")
	fmt.Println("missed:", errors.Is(err, replay.ErrMiss))
	// Output:
	// recorded: It is sunny in Paris. <nil>
	// replayed: It is sunny in Paris. <nil>
	// missed: true
}
