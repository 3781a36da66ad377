package protocol_test

import (
	"encoding/json"
	"fmt"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/protocol"
)

var weather = ptk.ToolInfo{
	Name:        "get_weather",
	Description: "Current weather for a city.",
	Parameters:  json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}`),
}

func ExampleParser_Parse() {
	p, err := protocol.NewParser([]ptk.ToolInfo{weather})
	if err != nil {
		panic(err)
	}
	res := p.Parse("Let me look that up.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call>")
	fmt.Println(res.Text)
	for _, c := range res.Calls {
		fmt.Println(c.ID, c.Tool, string(c.Args))
		fmt.Println(c.Repairs)
	}
	// Output:
	// Let me look that up.
	// call_1 get_weather {"city":"Paris","days":3}
	// [/days: "3" read as integer 3]
}

func ExampleParser_Parse_invalid() {
	p, _ := protocol.NewParser([]ptk.ToolInfo{weather})
	res := p.Parse(`<PTK_CALL>{"tool": "get_wether", "args": {"city": "Paris"}}</PTK_CALL>`)
	for _, a := range res.Attempts {
		fmt.Println(a.Err.Code)
		fmt.Println(a.Err.Message)
	}
	// Output:
	// TOOL_NOT_FOUND
	// unknown tool "get_wether"; did you mean "get_weather"? Available tools: get_weather.
}

func ExampleParser_NewStream() {
	p, _ := protocol.NewParser([]ptk.ToolInfo{weather})
	s := p.NewStream(func(e protocol.Event) {
		switch e.Kind {
		case protocol.EventText:
			fmt.Printf("text %q\n", e.Text)
		case protocol.EventCallEnd:
			fmt.Println("call", e.Attempt.Call.Tool, string(e.Attempt.Call.Args))
		}
	})
	for _, chunk := range []string{"Checking.\n<PTK_", "CALL>{\"tool\": \"get_weather\", ", "\"args\": {\"city\": \"Oslo\"}}</PTK_CALL>"} {
		s.WriteString(chunk)
	}
	res := s.Finish()
	fmt.Println(len(res.Calls), "call")
	// Output:
	// text "Checking."
	// call get_weather {"city": "Oslo"}
	// 1 call
}

func ExampleRepairJSON() {
	out, repairs, err := protocol.RepairJSON([]byte(`{'path': 'it's.txt', recursive: True,}`))
	fmt.Println(string(out), err)
	for _, r := range repairs {
		fmt.Println(r)
	}
	// Output:
	// {"path":"it's.txt","recursive":true} <nil>
	// json: single-quoted strings read as JSON strings
	// json: unescaped quote inside a string kept as text
	// json: unquoted object key quoted
	// json: Python literal True/False/None read as true/false/null
	// json: trailing comma removed
}
