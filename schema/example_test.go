package schema_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/lenient"
	"github.com/ptkit/ptk/schema"
)

func Example() {
	// BFCL-style types, as tools in the wild declare them.
	params := json.RawMessage(`{"type":"dict","properties":{"city":{"type":"String"},"days":{"type":"long","optional":true}},"required":["city","days"]}`)

	var b strings.Builder
	schema.WriteToolDef(&b, ptk.ToolInfo{Name: "get_weather", Parameters: params})
	fmt.Print(b.String())

	s, _ := schema.Compile(params)
	args, _, _ := lenient.Parse([]byte(`{"city": "Paris", "days": "3"}`))
	args, notes := s.Coerce(args, false)
	fmt.Println(string(lenient.AppendJSON(nil, args, nil)), notes[0].Message)
	fmt.Println(s.Validate(json.RawMessage(`{"days": 3}`)))
	// Output:
	// ## get_weather
	// - city (string, required)
	// - days (integer, optional)
	// {"city":"Paris","days":3} /days: "3" read as integer 3
	// missing required argument "city" (at /city)
}
