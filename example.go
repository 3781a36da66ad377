package ptk

import "encoding/json"

// Example is an input and the output a function gives for it, as JSON: a
// ptool's few-shot example, a call recorded in the trace store, a case of
// a dataset.
type Example struct {
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}
