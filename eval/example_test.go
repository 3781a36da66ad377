package eval_test

import (
	"encoding/json"
	"fmt"

	"github.com/ptkit/ptk/eval"
)

// Check scores calls against a question's possible answer, as BFCL's AST
// checker does: strings are compared after BFCL's normalisation, an int is
// accepted for a float, and a parameter the answer does not list fails.
func ExampleCheck() {
	q := &eval.Question{
		ID:       "simple_python_0",
		Category: "simple_python",
		Functions: []eval.Function{{
			Name: "calculate_triangle_area",
			Parameters: json.RawMessage(`{"type": "dict", "properties": {
				"base": {"type": "float"}, "height": {"type": "float"}, "unit": {"type": "string"}},
				"required": ["base", "height"]}`),
		}},
		Answer: []eval.Expected{{Name: "calculate_triangle_area", Params: []eval.Param{
			{Name: "base", Acceptable: []any{10.0}},
			{Name: "height", Acceptable: []any{5.0}},
			{Name: "unit", Acceptable: []any{"square meters", ""}},
		}}},
	}
	for _, args := range []string{
		`{"base": 10, "height": 5}`,
		`{"base": 10, "height": 5, "unit": "Square-Meters"}`,
		`{"base": 10, "height": "5"}`,
		`{"base": 10, "height": 5, "precision": 2}`,
	} {
		v, _ := eval.Decode([]byte(args))
		verdict := eval.Check(q, []eval.Call{{Name: "calculate_triangle_area", Args: v.(*eval.Dict)}})
		if verdict.Correct {
			fmt.Println(args, "correct")
		} else {
			fmt.Println(args, verdict.ErrorType)
		}
	}
	// Output:
	// {"base": 10, "height": 5} correct
	// {"base": 10, "height": 5, "unit": "Square-Meters"} correct
	// {"base": 10, "height": "5"} type_error:simple
	// {"base": 10, "height": 5, "precision": 2} simple_function_checker:unexpected_param
}
