package protocol_test

import (
	"encoding/json"
	"fmt"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/protocol"
)

// A server makes its parsers through one ParserCache: requests that bring
// the same tools, as an agent's do on every turn, share one parser.
func ExampleParserCache() {
	parsers := protocol.NewParserCache(0)
	request := func() []ptk.ToolInfo {
		// Each request decodes its own copy of the tools.
		return []ptk.ToolInfo{{Name: weather.Name, Description: weather.Description, Parameters: json.RawMessage(string(weather.Parameters))}}
	}
	p1, err := parsers.Parser(request())
	if err != nil {
		panic(err)
	}
	p2, _ := parsers.Parser(request())
	fmt.Println(p1 == p2, parsers.Len())
	res := p2.Parse(`<PTK_CALL>{"tool": "get_weather", "args": {"city": "Oslo"}}</PTK_CALL>`)
	fmt.Println(res.Calls[0].Tool, string(res.Calls[0].Args))
	// Output:
	// true 1
	// get_weather {"city": "Oslo"}
}
