package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/openai/responses"
)

// responsesAPI is OpenAI's Responses API: POST /v1/responses, what the
// Codex CLI and the OpenAI Agents SDK speak.
type responsesAPI struct {
	r   *http.Request
	req responses.Request
	// all is the conversation to store with the answer: the previous
	// response's, then this request's input, system and developer
	// messages in place (RoleSystem).
	all []ptk.Message
	// namespaces maps a tool that came in a namespace to its namespace.
	namespaces map[string]string
	out        *responsesResponder
}

var _ api = (*responsesAPI)(nil)

// responsesEndpoint serves POST /v1/responses.
func (s *Server) responsesEndpoint(w http.ResponseWriter, r *http.Request) {
	s.handle(w, r, &responsesAPI{r: r}, true)
}

// read decodes and checks the request, and loads the conversation of the
// previous response it continues.
func (a *responsesAPI) read(x *exchange, body []byte) *httpError {
	if err := responses.UnmarshalRequest(body, &a.req); err != nil {
		return badRequest("the request body is not a valid Responses request: %v", err)
	}
	r := &a.req
	x.asked, x.stream = r.Model, r.Stream
	x.single = r.ParallelToolCalls != nil && !*r.ParallelToolCalls
	if r.PreviousResponseID != "" {
		prev, err := x.s.conversations().Load(a.r.Context(), a.storeID(x, r.PreviousResponseID))
		switch {
		case err != nil:
			return &httpError{status: http.StatusBadGateway, typ: "server_error", msg: "loading the previous response: " + err.Error()}
		case prev == nil:
			return &httpError{status: http.StatusNotFound, typ: "invalid_request_error", code: "previous_response_not_found",
				msg: "previous response " + strconv.Quote(r.PreviousResponseID) + " not found: it was made with store false, by another key, or has been forgotten"}
		}
		a.all = prev
	}
	if r.Input.Items == nil && r.Input.Text == "" && r.PreviousResponseID == "" {
		return badRequest("input: the request needs input")
	}
	if herr := a.input(x); herr != nil {
		return herr
	}
	seen := make(map[string]bool, len(r.Tools))
	x.tools = slices.Grow(x.tools, len(r.Tools))
	// add adds tools[i] (a function), or the function tools[i].tools[j]
	// of a namespace (j >= 0).
	add := func(i, j int, t responses.Tool, namespace string) *httpError {
		where := func() string {
			if j < 0 {
				return "tools[" + strconv.Itoa(i) + "]"
			}
			return "tools[" + strconv.Itoa(i) + "].tools[" + strconv.Itoa(j) + "]"
		}
		switch {
		case t.Name == "":
			return badRequest("%s.name: the function needs a name", where())
		case seen[t.Name]:
			return badRequest("%s: the function %s is declared twice", where(), strconv.Quote(t.Name))
		}
		seen[t.Name] = true
		params := bytes.TrimSpace(t.Parameters)
		if string(params) == "null" {
			params = nil
		}
		if len(params) > 0 && params[0] != '{' {
			return badRequest("%s.parameters: the parameters of %s must be a JSON Schema object", where(), strconv.Quote(t.Name))
		}
		if namespace != "" {
			if a.namespaces == nil {
				a.namespaces = map[string]string{}
			}
			a.namespaces[t.Name] = namespace
		}
		x.tools = append(x.tools, ptk.ToolInfo{Name: t.Name, Description: t.Description, Parameters: json.RawMessage(params)})
		return nil
	}
	for i, t := range r.Tools {
		switch t.Type {
		case "function":
			if herr := add(i, -1, t, ""); herr != nil {
				return herr
			}
		case "namespace":
			for j, f := range t.Tools {
				if f.Type != "function" && f.Type != "" {
					continue
				}
				if herr := add(i, j, f, t.Name); herr != nil {
					return herr
				}
			}
		default:
			// Built-in tools (web_search, file_search...) run on OpenAI's
			// servers, custom tools take free text: the model here is not
			// shown them, and the request goes on.
			x.s.cfg.Logger.Info("tool left out", slog.String("tool", cmpOr(t.Name, t.Type)), slog.String("type", t.Type),
				slog.String("why", "only function tools can be shown to the model"))
		}
	}
	c, herr := parseResponsesChoice(r.ToolChoice, seen)
	if herr != nil {
		return herr
	}
	x.choice = c
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// input reads the input items into a.all: messages, calls, their outputs.
// Reasoning items passed back are left out; an image or a file is replaced
// by a line that says the model is not shown it.
func (a *responsesAPI) input(x *exchange) *httpError {
	r := &a.req
	if r.Input.Items == nil {
		if r.Input.Text != "" {
			a.all = append(a.all, ptk.Message{Role: ptk.RoleUser, Content: r.Input.Text})
		}
		return nil
	}
	names := map[string]string{}
	for _, m := range a.all {
		for _, c := range m.Calls {
			names[c.ID] = c.Tool
		}
	}
	// call adds a call to the assistant turn that ends the conversation,
	// or to a new one.
	call := func(c ptk.Call) {
		x.toolTurns = true
		names[c.ID] = c.Tool
		if n := len(a.all); n > 0 && a.all[n-1].Role == ptk.RoleAssistant {
			a.all[n-1].Calls = append(a.all[n-1].Calls, c)
			return
		}
		a.all = append(a.all, ptk.Message{Role: ptk.RoleAssistant, Calls: []ptk.Call{c}})
	}
	for i, it := range r.Input.Items {
		where := "input[" + strconv.Itoa(i) + "]"
		switch it.Type {
		case "message", "":
			text := partsText(it.Content)
			switch it.Role {
			case "system", "developer":
				a.all = append(a.all, ptk.Message{Role: ptk.RoleSystem, Content: text})
			case "user":
				a.all = append(a.all, ptk.Message{Role: ptk.RoleUser, Content: text})
			case "assistant":
				a.all = append(a.all, ptk.Message{Role: ptk.RoleAssistant, Content: text})
			default:
				return badRequest("%s.role: %s is not user, assistant, system or developer", where, strconv.Quote(it.Role))
			}
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return badRequest("%s: a function_call needs its call_id and name", where)
			}
			call(ptk.Call{ID: it.CallID, Tool: it.Name, Args: json.RawMessage(it.Arguments)})
		case "custom_tool_call":
			call(ptk.Call{ID: it.CallID, Tool: it.Name, Args: marshal(map[string]string{"input": it.Input})})
		case "function_call_output", "custom_tool_call_output":
			if it.CallID == "" {
				return badRequest("%s: a %s needs the call_id of the call it answers", where, it.Type)
			}
			x.toolTurns = true
			a.all = append(a.all, ptk.Message{Role: ptk.RoleTool, CallID: it.CallID, Tool: names[it.CallID], Content: partsText(it.Output)})
		case "item_reference":
			return badRequest("%s: item references are not supported here; send the item itself, or continue with previous_response_id", where)
		}
	}
	return nil
}

// partsText is a message's content or a call's output as text.
func partsText(c *responses.Content) string {
	if c == nil {
		return ""
	}
	if c.Parts == nil {
		return c.Text
	}
	var b strings.Builder
	for _, p := range c.Parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			b.WriteString(p.Text)
		case "refusal":
			b.WriteString(p.Refusal)
		case "input_image":
			b.WriteString(unseen("an image"))
		case "input_file":
			b.WriteString(unseen("the file " + p.Filename))
		}
	}
	return b.String()
}

// parseResponsesChoice reads a Responses tool_choice: "auto", "none",
// "required", {"type": "function", "name": …} or {"type": "allowed_tools",
// "mode": …, "tools": [{"type": "function", "name": …}]}. A built-in tool's
// choice ({"type": "web_search"}) is auto: the model is not shown that tool.
func parseResponsesChoice(raw json.RawMessage, declared map[string]bool) (toolChoice, *httpError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return parseToolChoice(raw, declared)
	}
	var v struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Mode  string `json:"mode"`
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return toolChoice{}, badRequest("tool_choice: %v", err)
	}
	switch v.Type {
	case "function":
		if !declared[v.Name] {
			return toolChoice{}, badRequest("tool_choice names the function %s, which is not in tools", strconv.Quote(v.Name))
		}
		return toolChoice{kind: "named", name: v.Name}, nil
	case "allowed_tools":
		var names []string
		for _, t := range v.Tools {
			if t.Type == "function" {
				names = append(names, t.Name)
			}
		}
		return allowedTools(v.Mode, names, declared)
	}
	return toolChoice{kind: "auto"}, nil
}

// request is the request for the model: max_output_tokens, temperature,
// top_p, and text.format as Chat Completions' response_format.
func (a *responsesAPI) request(x *exchange, native bool) (llm.Request, *httpError) {
	r := &a.req
	req := llm.Request{Model: x.up.Name, Temperature: r.Temperature}
	if r.MaxOutputTokens != nil {
		req.MaxTokens = *r.MaxOutputTokens
	}
	extra := map[string]json.RawMessage{}
	if r.TopP != nil {
		extra["top_p"] = marshal(*r.TopP)
	}
	if r.Text != nil && len(r.Text.Format) > 0 {
		var f struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		}
		if err := json.Unmarshal(r.Text.Format, &f); err != nil {
			return req, badRequest("text.format: %v", err)
		}
		switch f.Type {
		case "json_object":
			extra["response_format"] = json.RawMessage(`{"type":"json_object"}`)
		case "json_schema":
			js := map[string]any{"name": cmpOr(f.Name, "answer"), "schema": f.Schema}
			if f.Strict != nil {
				js["strict"] = *f.Strict
			}
			extra["response_format"] = marshal(map[string]any{"type": "json_schema", "json_schema": js})
		}
	}
	if len(extra) > 0 {
		req.Extra = extra
	}
	return req, nil
}

// conversation is the stored conversation and the input: the instructions
// and the system and developer messages as instructions, the rest as turns.
func (a *responsesAPI) conversation(x *exchange) (string, []ptk.Message, *httpError) {
	var instr []string
	if s := strings.TrimSpace(a.req.Instructions); s != "" {
		instr = append(instr, s)
	}
	msgs := make([]ptk.Message, 0, len(a.all))
	for _, m := range a.all {
		if m.Role == ptk.RoleSystem {
			if s := strings.TrimSpace(m.Content); s != "" {
				instr = append(instr, s)
			}
			continue
		}
		msgs = append(msgs, m)
	}
	return strings.Join(instr, "\n\n"), msgs, nil
}

// writeError answers with an error in OpenAI's shape, or ends a stream
// that has begun with response.failed.
func (a *responsesAPI) writeError(x *exchange, w http.ResponseWriter, e *httpError) {
	if a.out == nil || !a.out.stream {
		e.write(w)
		return
	}
	out := a.out
	out.sse.fail(func() { e.write(w) }, func() {
		resp := out.response("failed")
		resp.Error = &responses.Error{Code: cmpOr(e.code, e.typ), Message: e.msg}
		sseWrite(&out.sse, "response.failed", responses.ResponseEvent{Type: "response.failed", SequenceNumber: out.next(), Response: resp, Echo: out.echo})
	})
}

// storeID is the id a response's conversation is stored under: its own,
// behind a digest of the client's key, so that a client with another key
// cannot continue it.
func (a *responsesAPI) storeID(x *exchange, id string) string {
	owner := "open"
	if len(x.s.cfg.APIKeys) > 0 {
		sum := sha256.Sum256([]byte(clientKey(a.r)))
		owner = hex.EncodeToString(sum[:8])
	}
	return "response:" + owner + ":" + id
}

// responsesResponder writes an answer in the Responses shape: a response
// with its output items, or the stream of events that builds it. A
// function_call item is begun when its call has been read and checked, so
// that an item never changes once sent; its arguments then come as one
// delta.
type responsesResponder struct {
	x       *exchange
	a       *responsesAPI
	w       http.ResponseWriter
	stream  bool
	id      string
	created int64
	model   string

	output []responses.Item
	// open is the index of the item being written in output (-1: none),
	// text its text so far.
	open        int
	text        strings.Builder
	calls       int
	texted, sep bool
	seq         int

	// echo is what the response repeats of the request, encoded once for
	// the three events of a stream that carry the response (nil: written
	// each time, as for a field left to encoding/json).
	echo *responses.Echo
	sse  sseWriter
}

var _ responder = (*responsesResponder)(nil)

func (a *responsesAPI) respond(x *exchange, w http.ResponseWriter) responder {
	r := &responsesResponder{x: x, a: a, w: w, stream: x.stream, id: "resp_" + rand.Text(), created: time.Now().Unix(), model: x.name, open: -1}
	if r.stream {
		// response.completed repeats the tools too.
		r.sse.init(x, w, x.s.cfg.KeepAlive, r.opening(), keepAliveComment, r.sizeHint()+1024)
	}
	a.out = r
	return r
}

func (r *responsesResponder) streaming() bool { return r.stream }

// flush sends what the answer wrote since the last flush, in a stream.
func (r *responsesResponder) flush() {
	if r.stream {
		r.sse.flush()
	}
}
func (r *responsesResponder) hasText() bool  { return r.texted }
func (r *responsesResponder) callCount() int { return r.calls }
func (r *responsesResponder) separate()      { r.sep = true }

func (r *responsesResponder) stop() {
	if r.stream {
		r.sse.stop()
	}
}

func (r *responsesResponder) next() int {
	n := r.seq
	r.seq++
	return n
}

// response is the response in its state: its output so far.
func (r *responsesResponder) response(status string) *responses.Response {
	q := &r.a.req
	resp := &responses.Response{ID: r.id, Object: "response", CreatedAt: r.created, Status: status, Model: r.model,
		Output: r.output, ParallelToolCalls: !r.x.single, ToolChoice: q.ToolChoice, Tools: q.Tools,
		Temperature: q.Temperature, TopP: q.TopP, MaxOutputTokens: q.MaxOutputTokens, Store: q.Stored(), Metadata: q.Metadata}
	if resp.Output == nil {
		resp.Output = []responses.Item{}
	}
	if resp.Tools == nil {
		resp.Tools = []responses.Tool{}
	}
	if len(resp.ToolChoice) == 0 {
		resp.ToolChoice = json.RawMessage(`"auto"`)
	}
	if len(resp.Metadata) == 0 {
		resp.Metadata = json.RawMessage(`{}`)
	}
	if q.Instructions != "" {
		resp.Instructions = &q.Instructions
	}
	if q.PreviousResponseID != "" {
		resp.PreviousID = &q.PreviousResponseID
	}
	return resp
}

// sizeHint is about the length of the response's JSON before its output:
// it repeats the request's instructions and tools.
func (r *responsesResponder) sizeHint() int {
	q := &r.a.req
	n := 512 + len(q.Instructions) + len(q.Metadata)
	for _, t := range q.Tools {
		n += 64 + len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n
}

// opening is a stream's response.created and response.in_progress.
func (r *responsesResponder) opening() []byte {
	resp := r.response("in_progress")
	r.echo, _ = resp.Echo(false)
	// Both events repeat the request's tools: room for them at once.
	b := bytes.NewBuffer(sseBuf(2 * r.sizeHint()))
	appendSSEEvent(b, nil, "response.created", responses.ResponseEvent{Type: "response.created", SequenceNumber: r.next(), Response: resp, Echo: r.echo})
	appendSSEEvent(b, nil, "response.in_progress", responses.ResponseEvent{Type: "response.in_progress", SequenceNumber: r.next(), Response: resp, Echo: r.echo})
	return b.Bytes()
}

// keepAliveComment is an event-stream comment, which clients skip.
var keepAliveComment = []byte(": keep-alive\n\n")

// item begins an output item of the type (a message or reasoning), unless
// one is open.
func (r *responsesResponder) item(typ string) {
	if r.open >= 0 && r.output[r.open].Type == typ {
		return
	}
	r.closeItem()
	it := responses.Item{Type: typ, Status: "in_progress"}
	part := responses.Part{Type: "reasoning_text"}
	switch typ {
	case "message":
		it.ID, it.Role = "msg_"+randomID(), "assistant"
		it.Content = &responses.Content{Parts: []responses.Part{}}
		part = responses.OutputText("")
	case "reasoning":
		it.ID = "rs_" + randomID()
	}
	r.output = append(r.output, it)
	r.open = len(r.output) - 1
	r.text.Reset()
	if r.stream {
		added := it
		sseSend(&r.sse, "response.output_item.added", responses.ItemEvent{Type: "response.output_item.added", SequenceNumber: r.next(), OutputIndex: r.open, Item: &added})
		sseSend(&r.sse, "response.content_part.added", responses.PartEvent{Type: "response.content_part.added", SequenceNumber: r.next(), ItemID: it.ID, OutputIndex: r.open, Part: part})
	}
}

// closeItem ends the open item, if any.
func (r *responsesResponder) closeItem() {
	if r.open < 0 {
		return
	}
	it := &r.output[r.open]
	text := r.text.String()
	if it.Type == "function_call" {
		it.Arguments, it.Status = text, "completed"
		if r.stream {
			sseSend(&r.sse, "response.function_call_arguments.done", responses.ArgsDone{Type: "response.function_call_arguments.done", SequenceNumber: r.next(),
				ItemID: it.ID, OutputIndex: r.open, Name: it.Name, Arguments: text})
			done := *it
			sseSend(&r.sse, "response.output_item.done", responses.ItemEvent{Type: "response.output_item.done", SequenceNumber: r.next(), OutputIndex: r.open, Item: &done})
		}
		r.open = -1
		return
	}
	part := responses.OutputText(text)
	if it.Type == "reasoning" {
		part = responses.Part{Type: "reasoning_text", Text: text}
	}
	it.Content = &responses.Content{Parts: []responses.Part{part}}
	it.Status = "completed"
	if it.Type == "reasoning" {
		it.Status = ""
	}
	if r.stream {
		done := "response.output_text.done"
		if it.Type == "reasoning" {
			done = "response.reasoning_text.done"
		}
		sseSend(&r.sse, done, responses.TextDone{Type: done, SequenceNumber: r.next(), ItemID: it.ID, OutputIndex: r.open, Text: text})
		sseSend(&r.sse, "response.content_part.done", responses.PartEvent{Type: "response.content_part.done", SequenceNumber: r.next(), ItemID: it.ID, OutputIndex: r.open, Part: part})
		done2 := *it
		sseSend(&r.sse, "response.output_item.done", responses.ItemEvent{Type: "response.output_item.done", SequenceNumber: r.next(), OutputIndex: r.open, Item: &done2})
	}
	r.open = -1
}

func (r *responsesResponder) addText(s string) {
	if s == "" {
		return
	}
	if r.sep && r.texted {
		s = "\n\n" + s
	}
	r.sep, r.texted = false, true
	r.item("message")
	r.text.WriteString(s)
	if r.stream {
		sseSend(&r.sse, "response.output_text.delta", responses.TextDelta{Type: "response.output_text.delta", SequenceNumber: r.next(),
			ItemID: r.output[r.open].ID, OutputIndex: r.open, Delta: s})
	}
}

// addReasoning passes the model's reasoning on as a reasoning item's
// reasoning_text.
func (r *responsesResponder) addReasoning(s string) {
	if s == "" {
		return
	}
	r.item("reasoning")
	r.text.WriteString(s)
	if r.stream {
		sseSend(&r.sse, "response.reasoning_text.delta", responses.TextDelta{Type: "response.reasoning_text.delta", SequenceNumber: r.next(),
			ItemID: r.output[r.open].ID, OutputIndex: r.open, Delta: s})
	}
}

func (r *responsesResponder) addCall(c ptk.Call) {
	r.closeItem()
	r.x.calls++
	r.calls++
	it := responses.Item{Type: "function_call", ID: "fc_" + randomID(), Status: "in_progress", CallID: c.ID, Name: c.Tool,
		Namespace: r.a.namespaces[c.Tool]}
	args := compactArgs(c.Args)
	idx := len(r.output)
	if r.stream {
		added := it
		sseSend(&r.sse, "response.output_item.added", responses.ItemEvent{Type: "response.output_item.added", SequenceNumber: r.next(), OutputIndex: idx, Item: &added})
		sseSend(&r.sse, "response.function_call_arguments.delta", responses.ArgsDelta{Type: "response.function_call_arguments.delta", SequenceNumber: r.next(), ItemID: it.ID, OutputIndex: idx, Delta: args})
		sseSend(&r.sse, "response.function_call_arguments.done", responses.ArgsDone{Type: "response.function_call_arguments.done", SequenceNumber: r.next(), ItemID: it.ID, OutputIndex: idx, Name: c.Tool, Arguments: args})
	}
	it.Arguments, it.Status = args, "completed"
	r.output = append(r.output, it)
	if r.stream {
		done := it
		sseSend(&r.sse, "response.output_item.done", responses.ItemEvent{Type: "response.output_item.done", SequenceNumber: r.next(), OutputIndex: idx, Item: &done})
	}
}

// addCallDelta passes on a piece of a native call: the first piece begins
// its function_call item, which stays open for its arguments' pieces.
func (r *responsesResponder) addCallDelta(index int, id, name, args string) {
	if id != "" || name != "" {
		r.closeItem()
		r.x.calls++
		r.calls++
		r.output = append(r.output, responses.Item{Type: "function_call", ID: "fc_" + randomID(), Status: "in_progress", CallID: id, Name: name,
			Namespace: r.a.namespaces[name]})
		r.open = len(r.output) - 1
		r.text.Reset()
		if r.stream {
			added := r.output[r.open]
			sseSend(&r.sse, "response.output_item.added", responses.ItemEvent{Type: "response.output_item.added", SequenceNumber: r.next(), OutputIndex: r.open, Item: &added})
		}
	}
	if args == "" || r.open < 0 || r.output[r.open].Type != "function_call" {
		return
	}
	r.text.WriteString(args)
	if r.stream {
		sseSend(&r.sse, "response.function_call_arguments.delta", responses.ArgsDelta{Type: "response.function_call_arguments.delta", SequenceNumber: r.next(),
			ItemID: r.output[r.open].ID, OutputIndex: r.open, Delta: args})
	}
}

func (r *responsesResponder) finish(upstream string, u ptk.Usage) {
	r.closeItem()
	status := "completed"
	var incomplete *responses.Incomplete
	switch upstream {
	case "length", "max_tokens":
		if r.calls == 0 {
			status, incomplete = "incomplete", &responses.Incomplete{Reason: "max_output_tokens"}
		}
	case "content_filter":
		status, incomplete = "incomplete", &responses.Incomplete{Reason: "content_filter"}
	}
	r.save()
	resp := r.response(status)
	resp.IncompleteDetails = incomplete
	resp.Usage = &responses.Usage{InputTokens: u.PromptTokens, InputTokensDetails: responses.InputDetails{CachedTokens: u.CacheReadTokens},
		OutputTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	if !r.stream {
		r.x.wrote.Store(true)
		writeJSON(r.w, http.StatusOK, resp)
		return
	}
	ev := "response." + status
	r.sse.last(func() {
		sseWrite(&r.sse, ev, responses.ResponseEvent{Type: ev, SequenceNumber: r.next(), Response: resp, Echo: r.echo})
	})
}

// save stores the conversation with the answer under the response's id,
// unless the request said store false.
func (r *responsesResponder) save() {
	q := &r.a.req
	if !q.Stored() {
		return
	}
	reply := ptk.Message{Role: ptk.RoleAssistant}
	var text []string
	for _, it := range r.output {
		switch it.Type {
		case "message":
			text = append(text, partsText(it.Content))
		case "function_call":
			reply.Calls = append(reply.Calls, ptk.Call{ID: it.CallID, Tool: it.Name, Args: json.RawMessage(it.Arguments)})
		}
	}
	reply.Content = strings.Join(text, "\n\n")
	msgs := append(r.a.all[:len(r.a.all):len(r.a.all)], reply)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.a.r.Context()), 10*time.Second)
	defer cancel()
	if err := r.x.s.conversations().Save(ctx, r.a.storeID(r.x, r.id), msgs); err != nil {
		r.x.s.cfg.Logger.Warn("the response is not stored: a request that continues it will not find it",
			slog.String("response", r.id), slog.String("error", err.Error()))
	}
}

// conversations is where responses are stored: Config.Conversations, or
// the server's memory.
func (s *Server) conversations() agent.Store {
	if s.cfg.Conversations != nil {
		return s.cfg.Conversations
	}
	return s.memory
}

// memoryResponses keeps the conversations of stored responses in memory,
// the oldest forgotten past a total size: the default when the gateway has
// no store.
type memoryResponses struct {
	mu    sync.Mutex
	max   int
	size  int
	msgs  map[string][]ptk.Message
	sizes map[string]int
	order []string
}

var _ agent.Store = (*memoryResponses)(nil)

// DefaultMemoryResponses is the size of the conversations a gateway
// without Config.Conversations keeps in memory, in bytes of text.
const DefaultMemoryResponses = 64 << 20

func (m *memoryResponses) Load(_ context.Context, id string) ([]ptk.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.msgs[id], nil
}

// Append adds msgs after base, in one step under the lock.
func (m *memoryResponses) Append(_ context.Context, id string, base, msgs []ptk.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.msgs[id]
	if !agent.HasPrefix(cur, base) {
		return agent.ErrConversationChanged
	}
	return m.saveLocked(id, append(slices.Clip(cur), msgs...))
}

func (m *memoryResponses) Save(_ context.Context, id string, msgs []ptk.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saveLocked(id, msgs)
}

// saveLocked keeps msgs as the conversation id; m.mu is held.
func (m *memoryResponses) saveLocked(id string, msgs []ptk.Message) error {
	n := 0
	for _, msg := range msgs {
		n += len(msg.Content) + len(msg.Raw) + 64
		for _, c := range msg.Calls {
			n += len(c.Args) + len(c.Tool) + len(c.ID)
		}
	}
	if n > m.max {
		return errors.New("the conversation is larger than the gateway keeps in memory")
	}
	if m.msgs == nil {
		m.msgs, m.sizes = map[string][]ptk.Message{}, map[string]int{}
	}
	if _, ok := m.msgs[id]; !ok {
		m.order = append(m.order, id)
	}
	m.size += n - m.sizes[id]
	m.msgs[id], m.sizes[id] = msgs, n
	for m.size > m.max && len(m.order) > 0 {
		old := m.order[0]
		m.order = m.order[1:]
		m.size -= m.sizes[old]
		delete(m.msgs, old)
		delete(m.sizes, old)
	}
	return nil
}
