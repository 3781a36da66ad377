package ollama

import "encoding/json"

// The request and answer of POST /api/chat, as Ollama's API documents them.

type chatRequest struct {
	Model    string          `json:"model"`
	Messages []message       `json:"messages"`
	Tools    []tool          `json:"tools,omitempty"`
	Format   json.RawMessage `json:"format,omitempty"`
	Options  map[string]any  `json:"options,omitempty"`
	Stream   bool            `json:"stream"`
	// Think is true, false, or "high"/"medium"/"low" for the models that
	// take a level (gpt-oss).
	Think     json.RawMessage `json:"think,omitempty"`
	KeepAlive json.RawMessage `json:"keep_alive,omitempty"`
}

type message struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	Thinking  string     `json:"thinking,omitempty"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
	// ToolName names the tool whose result a tool message is.
	ToolName string `json:"tool_name,omitempty"`
}

type toolCall struct {
	Function struct {
		Index     *int            `json:"index,omitempty"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type tool struct {
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// chatResponse is a whole answer, or one line of a streamed one (the last
// with Done and the counts).
type chatResponse struct {
	Model           string  `json:"model"`
	Message         message `json:"message"`
	Done            bool    `json:"done"`
	DoneReason      string  `json:"done_reason"`
	PromptEvalCount int     `json:"prompt_eval_count"`
	EvalCount       int     `json:"eval_count"`
	Error           string  `json:"error"`
}

// showResponse is what POST /api/show says of a model.
type showResponse struct {
	// Parameters are the Modelfile's PARAMETER lines: "num_ctx 8192\nstop …".
	Parameters string                     `json:"parameters"`
	ModelInfo  map[string]json.RawMessage `json:"model_info"`
	// Capabilities: "completion", "tools", "thinking", "vision"…
	Capabilities []string `json:"capabilities"`
}

// psResponse is GET /api/ps: the models loaded, with the context each was
// loaded with.
type psResponse struct {
	Models []struct {
		Name          string `json:"name"`
		Model         string `json:"model"`
		ContextLength int    `json:"context_length"`
	} `json:"models"`
}
