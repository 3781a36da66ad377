package ptool

import (
	"encoding/json"
	"time"

	"github.com/ptkit/ptk"
)

// Source says what answered a call.
type Source string

// The sources of an answer.
const (
	// SourceModel: a model answered (a ptool, or a distilled function that
	// fell back).
	SourceModel Source = "model"
	// SourceCode: the code of a distilled function answered.
	SourceCode Source = "code"
)

// Record is what one call did, for a trace store or a log: what it was
// given, what it returned, each model attempt with its problems, and what it
// cost. The feedback sent for a retry is not part of Input.
type Record struct {
	// PTool is the function's name.
	PTool string `json:"ptool"`
	// Input is the input as JSON, as the caller gave it.
	Input json.RawMessage `json:"input"`
	// Output is the answer as JSON (nil when the call failed).
	Output json.RawMessage `json:"output,omitempty"`
	// Err is the error the call returned, if any.
	Err string `json:"error,omitempty"`
	// Abstained is the model's reason when it abstained.
	Abstained string `json:"abstained,omitempty"`
	// Source says whether code or a model answered; FellBack reports a
	// distilled function whose code was not sure.
	Source   Source `json:"source"`
	FellBack bool   `json:"fell_back,omitempty"`
	// Mode is how the model's answers were read (empty when code answered).
	Mode Mode `json:"mode,omitempty"`
	// Model is the model that answered, as the provider named it;
	// Provider who serves it, as the GenAI conventions name providers
	// (llm.ProviderOf: "openai", "anthropic", "gcp.gemini", "ollama").
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
	// Attempts are the model calls, in order.
	Attempts []Attempt `json:"attempts,omitempty"`
	// Usage and Cost (US dollars) are the sums over the attempts.
	Usage ptk.Usage `json:"usage"`
	Cost  float64   `json:"cost"`
	// Start is when the call began; Latency how long it took in all.
	Start   time.Time     `json:"start"`
	Latency time.Duration `json:"latency_ns"`
}

// Attempt is one model call of a ptool call.
type Attempt struct {
	// Mode is how this attempt's answer was read.
	Mode Mode `json:"mode"`
	// Raw is the answer as the model wrote it (a structured answer's JSON).
	Raw string `json:"raw"`
	// Repairs are what reading the answer repaired or converted, each said
	// in words ("trailing comma removed", "/confidence: \"0.9\" read as
	// number 0.9").
	Repairs []string `json:"repairs,omitempty"`
	// Problems say why the answer does not fit the output schema; none for
	// the attempt that answered.
	Problems []string `json:"problems,omitempty"`
	// Usage, Cost and Latency are this model call's.
	Usage   ptk.Usage     `json:"usage"`
	Cost    float64       `json:"cost"`
	Latency time.Duration `json:"latency_ns"`
}
