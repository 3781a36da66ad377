package gateway

import (
	"context"
	"net/http"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/turn"
)

// servePTK answers a request with tools for a model that has no native tool
// calling: the tools and the conversation are written in the text protocol,
// and the calls read from what the model writes are returned as standard
// tool_calls.
//
// A reply that must call a tool (tool_choice "required" or a named
// function) and does not, or whose calls all failed to read or validate, is
// asked again once: with a sharper instruction, or with the errors.
func (x *exchange) servePTK(ctx context.Context, w http.ResponseWriter) error {
	x.mode = modePTK
	if herr := x.translatable(); herr != nil {
		return herr
	}
	parser, err := x.toolsParser()
	if err != nil {
		return badRequest("tools: %v", err)
	}
	req, herr := x.api.request(x, false)
	if herr != nil {
		return herr
	}
	if req.Messages, herr = x.ptkConversation(); herr != nil {
		return herr
	}
	out := x.respond(w)
	var total ptk.Usage
	// A whole answer holds its text back until it is known to be the
	// answer; a stream does only when the reply must call a tool.
	hold := !out.streaming() || x.choice.forced()
	for reasked := false; ; reasked = true {
		rep, err := x.ask(ctx, req, parser, turn.PTK, out, hold)
		total = total.Add(rep.usage)
		x.usage = total
		if err != nil {
			return err
		}
		if rep.emitted == 0 && !reasked && rep.finish != "length" {
			again := ""
			switch {
			case len(rep.invalid) > 0 && x.choice.kind != "none":
				// The errors say what to fix, whatever the choice.
				again = protocol.PTK{}.Results(rep.invalid) + "\n\n" + prompt("reask-invalid", nil)
				if x.choice.kind == "named" {
					again += " " + prompt("named", x.choice.name)
				}
			case x.choice.kind == "named":
				again = prompt("reask-named", x.choice.name)
			case x.choice.kind == "required":
				again = prompt("reask-required", nil)
			case x.choice.kind == "none" && rep.skipped > 0 && rep.held.Len() == 0 && !out.hasText():
				// Nothing but a call the choice does not allow: no answer.
				again = prompt("reask-none", nil)
			}
			if again != "" {
				// Prose that was to be a call is replaced by the next
				// reply; other text stays, and the next reply's text
				// starts a new paragraph.
				if !x.choice.forced() {
					out.addText(rep.held.String())
				}
				out.separate()
				req.Messages = append(req.Messages,
					ptk.Message{Role: ptk.RoleAssistant, Content: rep.raw},
					ptk.Message{Role: ptk.RoleUser, Content: again})
				hold = false
				continue
			}
		}
		out.addText(rep.held.String())
		out.finish(rep.finish, total)
		return nil
	}
}

// reply is what one model answer gave.
type reply struct {
	raw     string // the text as the model wrote it
	finish  string
	usage   ptk.Usage
	emitted int          // calls given to the client
	skipped int          // valid calls not given: the tool choice does not allow them
	invalid []ptk.Result // the errors of the calls that could not be made
	held    strings.Builder
}

// ask makes one model call (turn.Turn) and gives the answer to out as it
// comes. With a parser, the text is read for calls; calls the tool choice
// allows are given to out, the rest is text. With hold, the text is kept in
// the reply until the first call is given.
func (x *exchange) ask(ctx context.Context, req llm.Request, p *protocol.Parser, mode turn.Mode, out responder, hold bool) (*reply, error) {
	rep := &reply{}
	single := x.single
	addText := func(s string) {
		if hold && rep.emitted == 0 {
			rep.held.WriteString(s)
			return
		}
		out.addText(s)
	}
	addCall := func(c ptk.Call, err *ptk.Error, native bool) {
		switch {
		case err != nil:
			rep.invalid = append(rep.invalid, ptk.Result{CallID: c.ID, Tool: c.Tool, Content: err.Message, IsError: true})
		case !x.choice.allows(c.Tool) || single && rep.emitted > 0:
			rep.skipped++
		default:
			if rep.emitted == 0 && rep.held.Len() > 0 {
				out.addText(rep.held.String())
				rep.held.Reset()
			}
			rep.emitted++
			if !native || c.ID == "" {
				c.ID = "call_" + randomID()
			}
			out.addCall(c)
		}
	}
	if _, ok := llm.As[llm.TextCompleter](x.up.Model); ok && mode == turn.PTK {
		req.Prompt = protocol.PTK{}.Transcript(req.Messages) // the protocol's own flattening
	}
	// What was written before this call (text held back from a reply that
	// is asked again) goes out before the model is waited for, and during
	// the stream what each piece of the answer writes goes out together.
	out.flush()
	t := turn.Turn{Model: x.up.Model, Parser: p, Mode: mode, Stream: out.streaming(), Pause: out.flush}
	r, err := t.Ask(ctx, req, func(e turn.Event) {
		switch e.Kind {
		case turn.EventText:
			addText(e.Text)
		case turn.EventReasoning:
			out.addReasoning(e.Text)
		case turn.EventCallStart, turn.EventCallDelta:
			if e.Native && p == nil {
				// No tools to check them against: the calls go to the
				// client as they come.
				id, name := "", ""
				if e.Call != nil {
					id, name = e.Call.ID, e.Call.Tool
				}
				out.addCallDelta(e.Index, id, name, e.Text)
				if id != "" || name != "" {
					rep.emitted++
				}
			}
		case turn.EventCallEnd:
			if !e.Native {
				addCall(*e.Call, e.Err, false)
			}
		}
	})
	rep.raw = r.Raw
	if err != nil {
		return rep, err
	}
	rep.usage, rep.finish = r.Usage, r.FinishReason
	if !r.Native {
		return rep, nil
	}
	for i, a := range r.Attempts {
		if p == nil {
			if r.Streamed {
				continue // given to out as they came
			}
			c := r.Made[i]
			if c.ID == "" {
				c.ID = "call_" + randomID()
			}
			rep.emitted++
			out.addCall(c)
			continue
		}
		// A native call, checked like one read from text (arguments coerced
		// to the schema) and keeping its id; one that fails the check goes
		// to the client as the model made it, as it would have without the
		// gateway.
		if a.Err != nil {
			addCall(r.Made[i], nil, true)
			continue
		}
		addCall(a.Call, nil, true)
	}
	return rep, nil
}

// ptkConversation writes the conversation for a chat model taught the text
// protocol: the system prompt with the protocol and the tools, the user's
// turns, the assistant's turns with their calls written as the protocol
// writes them, and each run of tool results as one user message. What the
// tool choice asks is said at the end of the last user message.
func (x *exchange) ptkConversation() ([]ptk.Message, *httpError) {
	instructions, msgs, herr := x.api.conversation(x)
	if herr != nil {
		return nil, herr
	}
	h := x.ptkHistory(instructions)
	h.Append(msgs...)
	out := h.Rendered()
	var say []string
	switch x.choice.kind {
	case "required", "none":
		say = append(say, prompt(x.choice.kind, nil))
	case "named":
		say = append(say, prompt("named", x.choice.name))
	}
	if x.single && x.choice.kind != "none" {
		say = append(say, prompt("single", nil))
	}
	if len(say) > 0 {
		note := strings.Join(say, " ")
		if last := &out[len(out)-1]; last.Role == ptk.RoleUser {
			last.Content = strings.TrimRight(last.Content, "\n") + "\n\n" + note
		} else {
			out = append(out, ptk.Message{Role: ptk.RoleUser, Content: note})
		}
	}
	return out, nil
}

// ptkHistory returns an empty history of the conversation for a model
// taught the text protocol, with the tools the choice offers: the parser
// that makes its data inert is the cached one of those tools.
func (x *exchange) ptkHistory(instructions string) *turn.History {
	offered := x.choice.offered(x.tools)
	var p *protocol.Parser
	if x.choice.offersAll() {
		p, _ = x.toolsParser() // an error: protocol.Neutralize, as NewHistory does
	} else {
		p, _ = x.s.parsers.Parser(offered)
	}
	return turn.NewHistoryParser(turn.PTK, x.s.ptk, p, instructions, offered)
}

// toolsParser returns the parser of the request's tools, from the
// server's cache, looked up once a request: the lookup hashes and compares
// every tool's schema.
func (x *exchange) toolsParser() (*protocol.Parser, error) {
	if x.parser == nil && x.parserErr == nil {
		x.parser, x.parserErr = x.s.parsers.Parser(x.tools)
	}
	return x.parser, x.parserErr
}

// serveModel answers through the upstream's llm.Model with native tools:
// for a model in auto mode, and for an upstream that is not
// OpenAI-compatible (Anthropic, Gemini). Native calls are checked against
// the tools' schemas and keep their ids; calls the model wrote in its text
// instead, as models behind a server without a tool parser do, are read
// out of it.
func (x *exchange) serveModel(ctx context.Context, w http.ResponseWriter) error {
	x.mode = modeTranslated
	if herr := x.translatable(); herr != nil {
		return herr
	}
	req, herr := x.api.request(x, true)
	if herr != nil {
		return herr
	}
	instructions, msgs, herr := x.api.conversation(x)
	if herr != nil {
		return herr
	}
	if instructions != "" {
		req.Messages = append(req.Messages, ptk.Message{Role: ptk.RoleSystem, Content: instructions})
	}
	req.Messages = append(req.Messages, msgs...)
	var parser *protocol.Parser
	if len(x.tools) > 0 {
		req.Tools = x.choice.offered(x.tools)
		switch x.choice.kind {
		case "named":
			req.ToolChoice = x.choice.name
		default:
			req.ToolChoice = x.choice.kind
		}
		var err error
		if parser, err = x.toolsParser(); err != nil {
			return badRequest("tools: %v", err)
		}
	}
	out := x.respond(w)
	rep, err := x.ask(ctx, req, parser, turn.Native, out, !out.streaming())
	x.usage = rep.usage
	if err != nil {
		return err
	}
	out.addText(rep.held.String())
	out.finish(rep.finish, rep.usage)
	return nil
}
