package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// line is one recorded call, one line of a recording.
type line struct {
	Key           string     `json:"key"`
	Request       request    `json:"request"`
	Stream        bool       `json:"stream,omitempty"`
	Response      *response  `json:"response,omitempty"`
	Chunks        []chunk    `json:"chunks,omitempty"`
	Error         *callError `json:"error,omitempty"`
	NoNativeTools bool       `json:"no_native_tools,omitempty"`
	Price         *llm.Price `json:"price,omitempty"`
	BaseURL       string     `json:"base_url,omitempty"`
	Time          string     `json:"time"`
}

type request struct {
	Model       string              `json:"model,omitempty"`
	Messages    []message           `json:"messages,omitempty"`
	Prompt      string              `json:"prompt,omitempty"`
	Tools       []tool              `json:"tools,omitempty"`
	ToolChoice  string              `json:"tool_choice,omitempty"`
	Temperature *float64            `json:"temperature,omitempty"`
	MaxTokens   int                 `json:"max_tokens,omitempty"`
	Stop        []string            `json:"stop,omitempty"`
	Extra       map[string]jsonText `json:"extra,omitempty"`
	// ResponseSchema is llm.Request.ResponseSchema.
	ResponseSchema jsonText `json:"response_schema,omitempty"`
}

// message, call and tool hold what may not be JSON as jsonText.
type message struct {
	ptk.Message
	Calls []call `json:"calls,omitempty"`
}

type call struct {
	ptk.Call
	Args jsonText `json:"args,omitempty"`
}

type tool struct {
	ptk.ToolInfo
	Parameters jsonText `json:"parameters,omitempty"`
}

type response struct {
	Content      string    `json:"content"`
	Reasoning    string    `json:"reasoning,omitempty"`
	Calls        []call    `json:"calls,omitempty"`
	Usage        ptk.Usage `json:"usage"`
	FinishReason string    `json:"finish_reason,omitempty"`
	Model        string    `json:"model,omitempty"`
	Cost         float64   `json:"cost,omitempty"`
}

type chunk struct {
	Text         string     `json:"text,omitempty"`
	Reasoning    string     `json:"reasoning,omitempty"`
	Call         *callDelta `json:"call,omitempty"`
	Usage        *ptk.Usage `json:"usage,omitempty"`
	FinishReason string     `json:"finish_reason,omitempty"`
	Model        string     `json:"model,omitempty"`
	Cost         float64    `json:"cost,omitempty"`
}

// callDelta is llm.CallDelta with JSON names.
type callDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Tool      string `json:"tool,omitempty"`
	ArgsDelta string `json:"args_delta,omitempty"`
}

type callError struct {
	Kind         string `json:"kind"`
	Status       int    `json:"status,omitempty"`
	Message      string `json:"message"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
}

// jsonText is text that is usually JSON: written as JSON when it reads back
// byte for byte (valid, compact, not a string), as a JSON string otherwise.
type jsonText []byte

func (t jsonText) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if len(t) > 0 && t[0] != '"' && json.Compact(&b, t) == nil && bytes.Equal(b.Bytes(), t) {
		return t, nil
	}
	return json.Marshal(string(t))
}

func (t *jsonText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		err := json.Unmarshal(b, &s)
		*t = jsonText(s)
		return err
	}
	*t = bytes.Clone(b)
	return nil
}

// canonical returns t re-encoded with sorted keys, or t when it is not JSON.
func (t jsonText) canonical() jsonText {
	if !json.Valid(t) {
		return t
	}
	d := json.NewDecoder(bytes.NewReader(t))
	d.UseNumber()
	var v any
	_ = d.Decode(&v) // valid: it cannot fail, nor can Marshal
	b, _ := json.Marshal(v)
	return b
}

// key is the request's key: see the package documentation.
func (r request) key() string {
	b, _ := json.Marshal(r.canonical())
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// canonical returns the part of r that is in its key.
func (r request) canonical() request {
	c := r
	c.Messages = make([]message, len(r.Messages))
	for i, m := range r.Messages {
		c.Messages[i].Role, c.Messages[i].Content, c.Messages[i].CallID = m.Role, m.Content, m.CallID
		c.Messages[i].Tool, c.Messages[i].IsError = m.Tool, m.IsError
		for _, k := range m.Calls {
			c.Messages[i].Calls = append(c.Messages[i].Calls, call{Call: ptk.Call{ID: k.ID, Tool: k.Tool}, Args: k.Args.canonical()})
		}
	}
	if len(r.Extra) > 0 {
		c.Extra = make(map[string]jsonText, len(r.Extra))
		for k, v := range r.Extra {
			c.Extra[k] = v.canonical()
		}
	}
	if len(r.ResponseSchema) > 0 {
		c.ResponseSchema = r.ResponseSchema.canonical()
	}
	c.Tools = make([]tool, len(r.Tools))
	for i, t := range r.Tools {
		c.Tools[i].Name, c.Tools[i].Description, c.Tools[i].Parameters = t.Name, t.Description, t.Parameters.canonical()
	}
	return c
}

func fromRequest(r llm.Request) request {
	q := request{Model: r.Model, Prompt: r.Prompt, ToolChoice: r.ToolChoice, Temperature: r.Temperature, MaxTokens: r.MaxTokens, Stop: r.Stop,
		ResponseSchema: jsonText(r.ResponseSchema)}
	for k, v := range r.Extra {
		if q.Extra == nil {
			q.Extra = make(map[string]jsonText, len(r.Extra))
		}
		q.Extra[k] = jsonText(v)
	}
	for _, m := range r.Messages {
		q.Messages = append(q.Messages, message{Message: m, Calls: fromCalls(m.Calls)})
	}
	for _, t := range r.Tools {
		q.Tools = append(q.Tools, tool{ToolInfo: t, Parameters: jsonText(t.Parameters)})
	}
	return q
}

func fromCalls(cs []ptk.Call) []call {
	var out []call
	for _, c := range cs {
		out = append(out, call{Call: c, Args: jsonText(c.Args)})
	}
	return out
}

func toCalls(cs []call) []ptk.Call {
	var out []ptk.Call
	for _, c := range cs {
		k := c.Call
		k.Args, k.Repairs = json.RawMessage(bytes.Clone(c.Args)), append([]string(nil), c.Repairs...)
		out = append(out, k)
	}
	return out
}

func fromResponse(r *llm.Response) *response {
	if r == nil {
		return nil
	}
	return &response{Content: r.Content, Reasoning: r.Reasoning, Calls: fromCalls(r.Calls), Usage: r.Usage,
		FinishReason: r.FinishReason, Model: r.Model, Cost: r.Cost}
}

func (r *response) llm() *llm.Response {
	if r == nil {
		return nil
	}
	return &llm.Response{Content: r.Content, Reasoning: r.Reasoning, Calls: toCalls(r.Calls), Usage: r.Usage,
		FinishReason: r.FinishReason, Model: r.Model, Cost: r.Cost}
}

func fromChunk(ch llm.Chunk) chunk {
	c := chunk{Text: ch.Text, Reasoning: ch.Reasoning, FinishReason: ch.FinishReason, Model: ch.Model, Cost: ch.Cost}
	if ch.Call != nil {
		d := callDelta(*ch.Call)
		c.Call = &d
	}
	if ch.Usage != nil {
		u := *ch.Usage
		c.Usage = &u
	}
	return c
}

func (c chunk) llm() llm.Chunk {
	ch := llm.Chunk{Text: c.Text, Reasoning: c.Reasoning, FinishReason: c.FinishReason, Model: c.Model, Cost: c.Cost}
	if c.Call != nil {
		d := llm.CallDelta(*c.Call)
		ch.Call = &d
	}
	if c.Usage != nil {
		u := *c.Usage
		ch.Usage = &u
	}
	return ch
}

// kinds names the errors a recording tells apart.
var kinds = []struct {
	name string
	err  error
}{
	{"auth", llm.ErrAuth},
	{"model_not_found", llm.ErrModelNotFound},
	{"tools_unsupported", llm.ErrToolsUnsupported},
	{"rate_limited", llm.ErrRateLimited},
	{"server", llm.ErrServer},
	{"connection", llm.ErrConnection},
	{"bad_request", llm.ErrBadRequest},
	{"bad_response", llm.ErrBadResponse},
	{"canceled", context.Canceled},
	{"deadline_exceeded", context.DeadlineExceeded},
}

func fromError(err error) *callError {
	var le *llm.Error
	isLLM := errors.As(err, &le)
	for _, k := range kinds {
		if isLLM && le.Kind == k.err {
			return &callError{Kind: k.name, Status: le.Status, Message: le.Message, RetryAfterMS: le.RetryAfter.Milliseconds()}
		}
		if !isLLM && errors.Is(err, k.err) {
			return &callError{Kind: k.name, Message: err.Error()}
		}
	}
	return &callError{Kind: "other", Message: err.Error()}
}

// err returns the recorded error as the kind of error it was; nil for an
// unknown kind.
func (ce *callError) err() error {
	for _, k := range kinds {
		switch {
		case k.name != ce.Kind:
		case k.err == context.Canceled || k.err == context.DeadlineExceeded:
			return k.err
		default:
			return &llm.Error{Kind: k.err, Status: ce.Status, Message: ce.Message, RetryAfter: time.Duration(ce.RetryAfterMS) * time.Millisecond}
		}
	}
	if ce.Kind == "other" {
		return errors.New(ce.Message)
	}
	return nil
}
