package turn_test

import (
	"context"
	"fmt"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/turn"
)

// One turn in the text protocol: the model's call is read from what it
// writes, checked against the tool's schema, and reported as it ends.
func ExampleTurn_Ask() {
	model := llmtest.New(llmtest.Text("Let me look.\n<PTK_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"go.mod\"}}\n</PTK_CALL>"))
	parser, err := protocol.NewParser(tools)
	if err != nil {
		panic(err)
	}
	h := turn.NewHistory(turn.PTK, nil, "", tools)
	h.Append(ptk.Message{Role: ptk.RoleUser, Content: "What is in go.mod?"})

	t := turn.Turn{Model: model, Parser: parser, Mode: turn.PTK, CallID: func(i int) string { return fmt.Sprint("call_", i+1) }}
	rep, err := t.Ask(context.Background(), llmRequest(h), func(e turn.Event) {
		if e.Kind == turn.EventCallEnd {
			fmt.Printf("call %s: %s %s\n", e.Call.ID, e.Call.Tool, e.Call.Args)
		}
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("text: %q\n", rep.Text)
	h.Append(rep.Message()) // the assistant turn, replayed as written next time
	fmt.Println("messages:", len(h.Rendered()))
	// Output:
	// call call_1: read_file {"path": "go.mod"}
	// text: "Let me look."
	// messages: 3
}
