package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/openai/wire"
)

// How a request was served, as the log line says it.
const (
	modeNative      = "native"       // passed through as it came
	modeNativeText  = "native-text"  // passed through, calls the model wrote as text read out of the answer
	modeTranslated  = "native-llm"   // native tools through the llm.Model, calls written as text read too
	modePTK         = "ptk"          // tools taught as the text protocol
	modeServerTools = "server-tools" // the gateway ran its own tools
)

// chatAPI is the Chat Completions API: POST /v1/chat/completions. The body
// is kept as it came, to pass a request through to an OpenAI-compatible
// upstream, and to send the fields the gateway does not read.
type chatAPI struct {
	body []byte
	req  chatRequest
	// others are the members that name no field of req, found as it was
	// read in one pass (othersRead); else request finds them itself.
	others     []member
	othersRead bool
}

var (
	_ api       = (*chatAPI)(nil)
	_ forwarder = (*chatAPI)(nil)
)

// chat serves POST /v1/chat/completions.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) { s.handle(w, r, &chatAPI{}, false) }

// read decodes and checks the request.
func (c *chatAPI) read(x *exchange, body []byte) *httpError {
	c.body = body
	read, err := wire.UnmarshalRequestOthers(body, &c.req, func(key, value []byte) {
		c.others = append(c.others, member{key: memberKey(key), start: offset(value, body), end: offset(value, body) + len(value)})
	})
	if err != nil {
		return badRequest("the request body is not a valid chat completion request: %v", err)
	}
	c.othersRead = read
	r := &c.req
	x.stream = r.Stream
	x.single = r.ParallelToolCalls != nil && !*r.ParallelToolCalls
	if r.N != nil {
		x.choices = *r.N
	}
	if len(r.Messages) == 0 {
		return badRequest("messages must hold at least one message")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool", "function":
		default:
			return badRequest("messages[%d]: unknown role %s (want system, developer, user, assistant or tool)", i, strconv.Quote(m.Role))
		}
		if m.Role == "tool" || m.Role == "function" || len(m.ToolCalls) > 0 {
			x.toolTurns = true
		}
		if m.Role == "tool" && m.ToolCallID == "" {
			return badRequest("messages[%d]: a tool message needs the tool_call_id of the call it answers", i)
		}
	}
	seen := make(map[string]bool, len(r.Tools))
	x.tools = slices.Grow(x.tools, len(r.Tools))
	for i, t := range r.Tools {
		name := t.Function.Name
		if t.Type != "" && t.Type != "function" {
			// Only an upstream with native tools can take it.
			x.otherTool = "tools[" + strconv.Itoa(i) + "]: tools of type " + strconv.Quote(t.Type) + " cannot be taught in the text protocol (only \"function\")"
			continue
		}
		switch {
		case name == "":
			return badRequest("tools[%d]: the function needs a name", i)
		case seen[name]:
			return badRequest("tools[%d]: the function %s is declared twice", i, strconv.Quote(name))
		}
		seen[name] = true
		params := bytes.TrimSpace(t.Function.Parameters)
		if string(params) == "null" {
			params = nil
		}
		if len(params) > 0 && params[0] != '{' {
			return badRequest("tools[%d]: the parameters of %s must be a JSON Schema object", i, strconv.Quote(name))
		}
		x.tools = append(x.tools, ptk.ToolInfo{Name: name, Description: t.Function.Description, Parameters: json.RawMessage(params)})
	}
	choice, herr := parseToolChoice(r.ToolChoice, seen)
	if herr != nil {
		return herr
	}
	x.choice = choice
	x.asked = r.Model
	return nil
}

// mappedFields are the request fields the gateway reads itself; the others
// go upstream as they are (llm.Request.Extra).
var mappedFields = map[string]bool{"model": true, "messages": true, "tools": true, "tool_choice": true,
	"parallel_tool_calls": true, "stream": true, "stream_options": true, "temperature": true, "max_tokens": true,
	"max_completion_tokens": true, "stop": true, "n": true, "functions": true, "function_call": true}

// request is the request for the model: its sampling settings, and the
// fields the gateway does not read, as they came. native says whether the
// model gets native tools (and so parallel_tool_calls).
func (c *chatAPI) request(x *exchange, native bool) (llm.Request, *httpError) {
	r := &c.req
	req := llm.Request{Model: x.up.Name, Temperature: r.Temperature}
	ms := c.others
	if !c.othersRead || native && len(x.tools) > 0 && r.ParallelToolCalls != nil {
		// parallel_tool_calls, a field of req, is passed on too.
		ms = members(c.body)
	}
	for _, m := range ms {
		if !mappedFields[m.key] || native && m.key == "parallel_tool_calls" && len(x.tools) > 0 {
			if req.Extra == nil {
				req.Extra = make(map[string]json.RawMessage)
			}
			req.Extra[m.key] = c.body[m.start:m.end]
		}
	}
	switch {
	case r.MaxCompletionTokens != nil:
		req.MaxTokens = *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		req.MaxTokens = *r.MaxTokens
	}
	if len(r.Stop) > 0 && string(r.Stop) != "null" {
		var one string
		if json.Unmarshal(r.Stop, &one) == nil {
			req.Stop = []string{one}
		} else if json.Unmarshal(r.Stop, &req.Stop) != nil {
			return req, badRequest("stop must be a string or an array of strings")
		}
	}
	return req, nil
}

// conversation reads the conversation: the system and developer messages'
// text as instructions, the other turns as ptk messages. A tool message
// gets the name of the call it answers.
func (c *chatAPI) conversation(x *exchange) (instructions string, msgs []ptk.Message, herr *httpError) {
	var instr []string
	names := map[string]string{}
	for i, m := range c.req.Messages {
		text, err := contentText(m.Content)
		if err != nil {
			return "", nil, badRequest("messages[%d]: %v", i, err)
		}
		switch m.Role {
		case "system", "developer":
			if strings.TrimSpace(text) != "" {
				instr = append(instr, text)
			}
		case "assistant":
			msg := ptk.Message{Role: ptk.RoleAssistant, Content: text}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Function.Name
				msg.Calls = append(msg.Calls, ptk.Call{ID: c.ID, Tool: c.Function.Name, Args: json.RawMessage(c.Function.Arguments)})
			}
			msgs = append(msgs, msg)
		case "tool":
			msgs = append(msgs, ptk.Message{Role: ptk.RoleTool, CallID: m.ToolCallID, Tool: names[m.ToolCallID], Content: text})
		case "function":
			msgs = append(msgs, ptk.Message{Role: ptk.RoleTool, Tool: m.Name, Content: text})
		default:
			msgs = append(msgs, ptk.Message{Role: ptk.RoleUser, Content: text})
		}
	}
	return strings.Join(instr, "\n\n"), msgs, nil
}

// writeError answers with an error in OpenAI's shape, or ends a stream
// that has begun with it.
func (c *chatAPI) writeError(x *exchange, w http.ResponseWriter, e *httpError) {
	if x.wrote.Load() {
		writeStreamError(w, e)
		return
	}
	e.write(w)
}

// setModel returns body with its "model" set to name.
func setModel(body []byte, name string) ([]byte, error) {
	return setFields(body, obj{"model": marshal(name)})
}

// readStats reads a whole answer's, or a chunk's, usage and new calls.
func (x *exchange) readStats(data []byte) {
	if !hasStats(data) {
		return
	}
	// In one pass when the answer reads as a completion (whatever reads as
	// one reads the same below); below, what can be read of anything else.
	var c completion
	if wire.UnmarshalCompletion(data, &c) == nil {
		x.countStats(&c)
		return
	}
	x.readOtherStats(data)
}

// readChunkStats is readStats for a chunk of a stream, read with r.
func (x *exchange) readChunkStats(r *wire.ChunkReader, data []byte) {
	if !hasStats(data) {
		return
	}
	if c, err := r.Read(data); err == nil {
		x.countStats(c)
		return
	}
	x.readOtherStats(data)
}

// hasStats reports whether data may hold a usage or calls: most chunks of a
// stream hold neither, and are not read.
func hasStats(data []byte) bool {
	return bytes.Contains(data, []byte(`"usage"`)) || bytes.Contains(data, []byte(`"tool_calls"`))
}

// countStats counts a completion's, or a chunk's, new calls and reads its
// usage.
func (x *exchange) countStats(c *completion) {
	for _, ch := range c.Choices {
		if ch.Message != nil {
			x.calls += len(ch.Message.ToolCalls)
		}
		if ch.Delta != nil {
			for _, d := range ch.Delta.ToolCalls {
				if d.ID != "" {
					x.calls++
				}
			}
		}
	}
	if u := c.Usage; u != nil {
		x.usage = ptk.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	}
}

// readOtherStats reads what can be read of an answer that does not read
// as a completion.
func (x *exchange) readOtherStats(data []byte) {
	var v struct {
		Choices []struct {
			Message struct {
				ToolCalls []json.RawMessage `json:"tool_calls"`
			} `json:"message"`
			Delta struct {
				ToolCalls []struct {
					ID string `json:"id"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(data, &v) != nil {
		return
	}
	for _, c := range v.Choices {
		x.calls += len(c.Message.ToolCalls)
		for _, d := range c.Delta.ToolCalls {
			if d.ID != "" {
				x.calls++
			}
		}
	}
	x.readUsage(v.Usage)
}

// readUsage reads a usage object, when there is one, for the log line.
func (x *exchange) readUsage(raw json.RawMessage) {
	var u struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	}
	if hasValue(raw) && json.Unmarshal(raw, &u) == nil {
		x.usage = ptk.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	}
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(int(n>>20)) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(int(n>>10)) + " KiB"
	}
	return strconv.Itoa(int(n)) + " bytes"
}
