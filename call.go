package ptk

import "encoding/json"

// Call is one tool call a model asked for.
type Call struct {
	// ID identifies the call within a run; a result names the call it answers.
	ID string `json:"id"`
	// Tool is the name of the tool to call.
	Tool string `json:"tool"`
	// Args holds the arguments as JSON, normally an object. When the model
	// wrote valid JSON that needed no change, Args is exactly what it wrote.
	Args json.RawMessage `json:"args"`
	// Reasoning is the model's stated reason for the call, when it gave one.
	Reasoning string `json:"reasoning,omitempty"`
	// Repairs lists, in order, every change made to what the model wrote to
	// make it a valid call: JSON repairs, coercions, a corrected tool name.
	Repairs []string `json:"repairs,omitempty"`
}

// Result is what a tool returned for one call.
type Result struct {
	// CallID is the [Call.ID] this result answers.
	CallID string `json:"call_id,omitempty"`
	// Tool is the name of the tool that ran.
	Tool string `json:"tool,omitempty"`
	// Content is the text the model sees.
	Content string `json:"content"`
	// IsError marks a result the model should read as a failure to correct.
	IsError bool `json:"is_error,omitempty"`
}
