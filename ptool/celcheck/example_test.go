package celcheck_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/ptool/celcheck"
)

// A declarative ptool, as a ptools file declares it, whose checks are a
// range and a CEL expression over the input and the output.
func Example() {
	var def ptool.Def
	json.Unmarshal([]byte(`{"name": "find_span", "doc": "Find the span of the text that names a city.",
	  "input": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
	  "output": {"type": "object", "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
	             "required": ["start", "end"]},
	  "checks": [{"path": "/start", "min": 0},
	             {"expr": "output.start < output.end && output.end <= size(input.text)",
	              "message": "start and end must be offsets in the text, start before end"}]}`), &def)
	model := llmtest.New(
		llmtest.Text(`<answer>{"start": 9, "end": 3}</answer>`),
		llmtest.Text(`<answer>{"start": 9, "end": 14}</answer>`))
	span, err := def.New(ptool.WithLanguage(celcheck.Language{}), ptool.WithModel(model))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, rec, err := span.CallJSON(context.Background(), json.RawMessage(`{"text": "I flew to Paris."}`))
	fmt.Println(string(out), err)
	fmt.Println(rec.Attempts[0].Problems)
	// Output:
	// {"start":9,"end":14} <nil>
	// [check: start and end must be offsets in the text, start before end]
}
