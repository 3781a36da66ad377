package gateway

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic/wire"
)

// messagesAPI is Anthropic's Messages API: POST /v1/messages, what Claude
// Code and the Claude Agent SDK speak.
type messagesAPI struct {
	req wire.Request
	// thinking: the client asked for the model's thinking, which the
	// answer then carries as thinking blocks.
	thinking bool
	out      *messagesResponder
}

var _ api = (*messagesAPI)(nil)

// messages serves POST /v1/messages.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	s.handle(w, r, &messagesAPI{}, true)
}

// read decodes and checks the request.
func (a *messagesAPI) read(x *exchange, body []byte) *httpError {
	return a.decode(x, body, true)
}

// decode reads a request; count_tokens reads one that needs no max_tokens.
func (a *messagesAPI) decode(x *exchange, body []byte, needMax bool) *httpError {
	if err := wire.UnmarshalRequest(body, &a.req); err != nil {
		return badRequest("the request body is not a valid Messages request: %v", err)
	}
	r := &a.req
	x.asked, x.stream = r.Model, r.Stream
	a.thinking = r.Thinking.On()
	if needMax && r.MaxTokens < 1 {
		return badRequest("max_tokens: the request needs max_tokens, at least 1")
	}
	if len(r.Messages) == 0 {
		return badRequest("messages: at least one message is needed")
	}
	// Tools a tool search found (tool_reference blocks in tool results)
	// are shown to the model even when deferred.
	found := map[string]bool{}
	for i, m := range r.Messages {
		switch m.Role {
		case "user", "assistant", "system":
		default:
			return badRequest("messages.%d.role: %s is not user or assistant", i, strconv.Quote(m.Role))
		}
		for _, b := range m.Content.Blocks {
			switch b.Type {
			case "tool_use":
				x.toolTurns = true
			case "tool_result":
				x.toolTurns = true
				if b.ToolUseID == "" {
					return badRequest("messages.%d: a tool_result needs the tool_use_id of the tool_use it answers", i)
				}
				if b.Content != nil {
					for _, c := range b.Content.Blocks {
						if c.Type == "tool_reference" {
							found[c.ToolName] = true
						}
					}
				}
			}
		}
	}
	seen := make(map[string]bool, len(r.Tools))
	x.tools = slices.Grow(x.tools, len(r.Tools))
	for i, t := range r.Tools {
		if !t.Custom() {
			// Anthropic's own tools (web search, its bash and editor) run on
			// its servers or need its models' training: the model here is
			// not shown them, and the request goes on.
			x.s.cfg.Logger.Info("tool left out", slog.String("tool", t.Name), slog.String("type", t.Type),
				slog.String("why", "Anthropic's own tools have no schema to show another model"))
			continue
		}
		switch {
		case t.Name == "":
			return badRequest("tools.%d.name: the tool needs a name", i)
		case seen[t.Name]:
			return badRequest("tools.%d: the tool %s is declared twice", i, strconv.Quote(t.Name))
		}
		seen[t.Name] = true
		schema := bytes.TrimSpace(t.InputSchema)
		if len(schema) > 0 && schema[0] != '{' {
			return badRequest("tools.%d.input_schema: the input_schema of %s must be a JSON Schema object", i, strconv.Quote(t.Name))
		}
		if t.DeferLoading && !found[t.Name] {
			continue // not loaded until a tool search finds it
		}
		x.tools = append(x.tools, ptk.ToolInfo{Name: t.Name, Description: t.Description, Parameters: json.RawMessage(schema)})
	}
	x.choice = toolChoice{kind: "auto"}
	if c := r.ToolChoice; c != nil {
		x.single = c.DisableParallelToolUse
		switch c.Type {
		case "auto", "":
		case "none":
			x.choice.kind = "none"
		case "any":
			if len(seen) == 0 {
				return badRequest("tool_choice: type any needs tools")
			}
			x.choice.kind = "required"
		case "tool":
			if !seen[c.Name] {
				return badRequest("tool_choice.name: the tool %s is not in tools", strconv.Quote(c.Name))
			}
			x.choice = toolChoice{kind: "named", name: c.Name}
		default:
			return badRequest("tool_choice.type: %s is not auto, any, tool or none", strconv.Quote(c.Type))
		}
	}
	return nil
}

// request is the request for the model: max_tokens, temperature, top_p and
// the stop sequences.
func (a *messagesAPI) request(x *exchange, native bool) (llm.Request, *httpError) {
	r := &a.req
	req := llm.Request{Model: x.up.Name, Temperature: r.Temperature, MaxTokens: r.MaxTokens, Stop: r.StopSequences}
	if r.TopP != nil {
		req.Extra = map[string]json.RawMessage{"top_p": marshal(*r.TopP)}
	}
	return req, nil
}

// unseen stands in for content the model cannot be sent: ptk's messages
// carry text.
func unseen(kind string) string {
	return "[" + kind + " not shown: the model behind this gateway is sent text only]"
}

// conversation reads the conversation: the system prompt and the system
// messages as instructions; user text; tool results as tool turns, in
// order; assistant text and tool_use blocks as a turn with its calls.
// Thinking blocks passed back are left out; an image or a document is
// replaced by a line that says the model is not shown it.
func (a *messagesAPI) conversation(x *exchange) (string, []ptk.Message, *httpError) {
	var instr []string
	if s := a.req.System; s != nil {
		if t := strings.TrimSpace(blocksText(s.Text, s.Blocks, "\n\n")); t != "" {
			instr = append(instr, t)
		}
	}
	names := map[string]string{}
	msgs := make([]ptk.Message, 0, len(a.req.Messages))
	for _, m := range a.req.Messages {
		c := &m.Content
		switch m.Role {
		case "system":
			if t := strings.TrimSpace(blocksText(c.Text, c.Blocks, "\n\n")); t != "" {
				instr = append(instr, t)
			}
		case "assistant":
			msg := ptk.Message{Role: ptk.RoleAssistant, Content: c.Text}
			var text []string
			for _, b := range c.Blocks {
				switch b.Type {
				case "text":
					text = append(text, b.Text)
				case "tool_use":
					names[b.ID] = b.Name
					msg.Calls = append(msg.Calls, ptk.Call{ID: b.ID, Tool: b.Name, Args: b.Input})
				}
			}
			if c.Blocks != nil {
				msg.Content = strings.Join(text, "")
			}
			msgs = append(msgs, msg)
		default:
			if c.Blocks == nil {
				msgs = append(msgs, ptk.Message{Role: ptk.RoleUser, Content: c.Text})
				continue
			}
			var text []string
			flush := func() {
				if len(text) > 0 {
					msgs = append(msgs, ptk.Message{Role: ptk.RoleUser, Content: strings.Join(text, "\n\n")})
					text = text[:0]
				}
			}
			for _, b := range c.Blocks {
				switch b.Type {
				case "tool_result":
					flush()
					out := ""
					if b.Content != nil {
						out = blocksText(b.Content.Text, b.Content.Blocks, "\n")
					}
					msgs = append(msgs, ptk.Message{Role: ptk.RoleTool, CallID: b.ToolUseID, Tool: names[b.ToolUseID], Content: out, IsError: b.IsError})
				default:
					if t := blockText(b); t != "" {
						text = append(text, t)
					}
				}
			}
			flush()
		}
	}
	return strings.Join(instr, "\n\n"), msgs, nil
}

// blocksText is content as text: the string, or its blocks' text joined
// by sep.
func blocksText(s string, blocks []wire.Block, sep string) string {
	if blocks == nil {
		return s
	}
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if t := blockText(b); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, sep)
}

// blockText is a user's or a tool result's block as the model reads it.
func blockText(b wire.Block) string {
	switch b.Type {
	case "text":
		return b.Text
	case "image", "document":
		return unseen("an " + b.Type)
	case "tool_reference":
		return "The tool " + b.ToolName + " is loaded: it can be called now."
	case "search_result", "web_search_tool_result":
		if b.Content != nil {
			return blocksText(b.Content.Text, b.Content.Blocks, "\n")
		}
	}
	return ""
}

// writeError answers with an error in Anthropic's shape (its type from the
// status), or ends a stream that has begun with an error event.
func (a *messagesAPI) writeError(x *exchange, w http.ResponseWriter, e *httpError) {
	body := wire.NewError(e.status, e.msg)
	whole := func() {
		e.retryHeader(w)
		writeJSON(w, e.status, body)
	}
	if a.out == nil || !a.out.stream {
		whole()
		return
	}
	a.out.sse.fail(whole, func() { sseWrite(&a.out.sse, "error", body) })
}

// messagesResponder writes an answer in the Messages shape: a message with
// its content blocks, or the stream of events that builds it. In a stream a
// block is begun only when its first piece is known: a tool_use block when
// its call has been read and checked, so that a block never changes once
// sent; its input then comes as one input_json_delta.
type messagesResponder struct {
	x        *exchange
	a        *messagesAPI
	w        http.ResponseWriter
	stream   bool
	thinking bool
	id       string
	model    string

	// blocks is the whole answer's content; in a stream, open is the
	// type of the block being written ("" when none), index its index,
	// and calls maps a native call's index to its block.
	blocks      []wire.Block
	open        string
	index       int
	nativeCalls map[int]int
	calls       int
	texted, sep bool

	sse sseWriter
}

var _ responder = (*messagesResponder)(nil)

func (a *messagesAPI) respond(x *exchange, w http.ResponseWriter) responder {
	r := &messagesResponder{x: x, a: a, w: w, stream: x.stream, thinking: a.thinking, id: "msg_" + randomID(), model: x.name, index: -1}
	if r.stream {
		r.sse.init(x, w, x.s.cfg.KeepAlive, r.opening(), pingEvent, minSSEBuf)
	}
	a.out = r
	return r
}

func (r *messagesResponder) streaming() bool { return r.stream }

// flush sends what the answer wrote since the last flush, in a stream.
func (r *messagesResponder) flush() {
	if r.stream {
		r.sse.flush()
	}
}
func (r *messagesResponder) hasText() bool  { return r.texted }
func (r *messagesResponder) callCount() int { return r.calls }
func (r *messagesResponder) separate()      { r.sep = true }

func (r *messagesResponder) stop() {
	if r.stream {
		r.sse.stop()
	}
}

// opening is a stream's message_start: the message with no content yet,
// and no count of its tokens yet (message_delta has them).
func (r *messagesResponder) opening() []byte {
	return sseEvent("message_start", wire.MessageStart{Type: "message_start", Message: &wire.Response{
		ID: r.id, Type: "message", Role: "assistant", Model: r.model, Content: []wire.Block{}}})
}

var pingEvent = []byte("event: ping\ndata: " + string(wire.Ping) + "\n\n")

// block makes typ the open block, beginning it (start) unless it is open.
func (r *messagesResponder) block(typ string, start wire.Block) {
	if r.open == typ && typ != "tool_use" {
		return
	}
	r.closeBlock()
	r.open = typ
	r.index++
	if r.stream {
		sseSend(&r.sse, "content_block_start", wire.BlockStart{Type: "content_block_start", Index: r.index, ContentBlock: start})
		return
	}
	r.blocks = append(r.blocks, start)
}

// closeBlock ends the open block, if any.
func (r *messagesResponder) closeBlock() {
	if r.open == "" {
		return
	}
	r.open = ""
	if r.stream {
		sseSend(&r.sse, "content_block_stop", wire.BlockStop{Type: "content_block_stop", Index: r.index})
	}
}

func (r *messagesResponder) delta(d wire.Delta) {
	if r.stream {
		sseSend(&r.sse, "content_block_delta", wire.BlockDelta{Type: "content_block_delta", Index: r.index, Delta: d})
		return
	}
	b := &r.blocks[len(r.blocks)-1]
	switch d.Type {
	case "text_delta":
		b.Text += d.Text
	case "thinking_delta":
		b.Thinking += d.Thinking
	case "input_json_delta":
		b.Input = append(b.Input, d.PartialJSON...)
	}
}

func (r *messagesResponder) addText(s string) {
	if s == "" {
		return
	}
	if r.sep && r.texted {
		s = "\n\n" + s
	}
	r.sep, r.texted = false, true
	r.block("text", wire.Block{Type: "text"})
	r.delta(wire.Delta{Type: "text_delta", Text: s})
}

// addReasoning passes the model's reasoning on as thinking, when the
// client asked for thinking.
func (r *messagesResponder) addReasoning(s string) {
	if s == "" || !r.thinking {
		return
	}
	r.block("thinking", wire.Block{Type: "thinking"})
	r.delta(wire.Delta{Type: "thinking_delta", Thinking: s})
}

func (r *messagesResponder) addCall(c ptk.Call) {
	r.x.calls++
	r.calls++
	r.block("tool_use", wire.Block{Type: "tool_use", ID: c.ID, Name: c.Tool, Input: json.RawMessage{}})
	r.delta(wire.Delta{Type: "input_json_delta", PartialJSON: objectJSON(c.Args)})
	r.closeBlock()
}

// addCallDelta passes on a piece of a native call: the first piece begins
// its tool_use block.
func (r *messagesResponder) addCallDelta(index int, id, name, args string) {
	if id != "" || name != "" {
		r.x.calls++
		r.calls++
		r.block("tool_use", wire.Block{Type: "tool_use", ID: id, Name: name, Input: json.RawMessage{}})
		if r.nativeCalls == nil {
			r.nativeCalls = map[int]int{}
		}
		r.nativeCalls[index] = r.index
	}
	if args == "" {
		return
	}
	if b, ok := r.nativeCalls[index]; !ok || b != r.index || r.open != "tool_use" {
		return // a piece of a call whose block has ended: the API cannot add to it
	}
	r.delta(wire.Delta{Type: "input_json_delta", PartialJSON: args})
}

// objectJSON is a call's arguments as a tool_use's input: a compact JSON
// object ({} when they are not one).
func objectJSON(args json.RawMessage) string {
	s := compactArgs(args)
	if !strings.HasPrefix(s, "{") {
		return "{}"
	}
	return s
}

// stopReason is the stop_reason of an answer.
func stopReason(upstream string, calls bool) string {
	switch {
	case calls:
		return "tool_use"
	case upstream == "length" || upstream == "max_tokens":
		return "max_tokens"
	case upstream == "stop_sequence":
		return "stop_sequence"
	case upstream == "content_filter" || upstream == "refusal":
		return "refusal"
	}
	return "end_turn"
}

// anthropicUsage is ptk's count as the API writes it: its input_tokens
// leave out the cached ones.
func anthropicUsage(u ptk.Usage) wire.Usage {
	return wire.Usage{InputTokens: max(0, u.PromptTokens-u.CacheReadTokens-u.CacheWriteTokens), OutputTokens: u.CompletionTokens,
		CacheReadInputTokens: u.CacheReadTokens, CacheCreationInputTokens: u.CacheWriteTokens}
}

func (r *messagesResponder) finish(upstream string, u ptk.Usage) {
	reason := stopReason(upstream, r.calls > 0)
	usage := anthropicUsage(u)
	if !r.stream {
		r.x.wrote.Store(true)
		for i := range r.blocks {
			if b := &r.blocks[i]; b.Type == "tool_use" && len(b.Input) == 0 {
				b.Input = emptyObject
			}
		}
		if r.blocks == nil {
			r.blocks = []wire.Block{}
		}
		writeJSON(r.w, http.StatusOK, &wire.Response{ID: r.id, Type: "message", Role: "assistant", Model: r.model,
			Content: r.blocks, StopReason: &reason, Usage: usage})
		return
	}
	r.closeBlock()
	r.sse.last(func() {
		sseWrite(&r.sse, "message_delta", wire.MessageDelta{Type: "message_delta", Delta: wire.StopDelta{StopReason: reason}, Usage: usage})
		r.sse.writeRaw("message_stop", wire.MessageStop)
	})
}

var emptyObject = json.RawMessage("{}")

// countTokens serves POST /v1/messages/count_tokens: an estimate of the
// tokens of the prompt the model would be sent (in the text protocol, the
// protocol's system prompt and the tools as it writes them), at one token
// for four bytes, since the gateway has no tokenizer of the model's. The
// answer says it is an estimate in its Ptk-Token-Count header.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	a := &messagesAPI{}
	x := &exchange{s: s, api: a, status: http.StatusOK}
	defer func() { Annotate(w, x.status, x.err, slog.String("model", x.name)) }()
	body, herr := s.readBody(r.Context(), w, r)
	if herr == nil {
		herr = a.decode(x, body, false)
	}
	if herr == nil {
		herr = x.resolve(true)
	}
	var n int
	if herr == nil {
		n, herr = x.promptBytes()
	}
	if herr != nil {
		x.fail(w, herr)
		return
	}
	w.Header().Set("Ptk-Token-Count", "estimate: 1 token per 4 bytes of the prompt the model is sent")
	writeJSON(w, http.StatusOK, wire.CountTokens{InputTokens: (n + 3) / 4})
}

// promptBytes is the size of the prompt the model would be sent for the
// request, in the mode it would be served in.
func (x *exchange) promptBytes() (int, *httpError) {
	instructions, msgs, herr := x.api.conversation(x)
	if herr != nil {
		return 0, herr
	}
	n := 0
	if (len(x.tools) > 0 || x.toolTurns) && x.usePTK() {
		h := x.ptkHistory(instructions)
		h.Append(msgs...)
		for _, m := range h.Rendered() {
			n += len(m.Content)
		}
		return n, nil
	}
	n = len(instructions)
	for _, m := range msgs {
		n += len(m.Content) + len(m.Role)
		for _, c := range m.Calls {
			n += len(c.Tool) + len(c.Args)
		}
	}
	for _, t := range x.tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n, nil
}
