package ptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/anthropic"
	"github.com/ptkit/ptk/llm/gemini"
	"github.com/ptkit/ptk/llm/openai"
	"github.com/ptkit/ptk/turn"
)

// fn is a ptool without its Go types: JSON in, JSON out. PTool and the
// declarative ptools of Load are both made of one.
type fn struct {
	spec *Spec
	cfg  config
	// envelope is the schema of a structured answer, {"answer": …} or
	// {"cannot_answer": "why"}; responseFormat is OpenAI's request field
	// that asks for it.
	envelope       json.RawMessage
	responseFormat map[string]json.RawMessage
	answerTool     []ptk.ToolInfo
	// stored holds the examples read from the ptool's ExampleStore.
	stored *stored
}

// structuredMemoryName is the name under which a memory remembers that a
// model refused structured output: "ptool:structured", and the model's id
// when it has one (llm.ModelIDOf), so that one model of a server that
// serves several (a proxy) is remembered, not all of them.
func structuredMemoryName(m llm.Model) string {
	if id := llm.ModelIDOf(m); id != "" {
		return "ptool:structured:" + id
	}
	return "ptool:structured"
}

func newFn(name, doc string, in, out json.RawMessage, c config) (*fn, error) {
	if err := resolveConfig(&c); err != nil {
		return nil, err
	}
	if c.maxAttempts <= 0 {
		c.maxAttempts = DefaultMaxAttempts
	}
	if c.mode == "" {
		c.mode = ModeAuto
	}
	switch c.mode {
	case ModeAuto, ModeStructured, ModeProtocol:
	default:
		return nil, errors.New("mode must be auto, structured or protocol, not " + string(c.mode))
	}
	if c.memory == nil {
		c.memory = &llm.NativeTools{}
	}
	s, err := newSpec(name, doc, in, out, c.rawExamples, c.template)
	if err != nil {
		return nil, err
	}
	f := &fn{spec: s, cfg: c, stored: &stored{}}
	f.envelope = json.RawMessage(`{"type":"object","properties":{"answer":` + string(out) +
		`,"cannot_answer":{"type":"string","description":"why the input does not let you answer; only when you cannot"}},"additionalProperties":false}`)
	rf, _ := json.Marshal(map[string]any{"type": "json_schema", "json_schema": map[string]any{
		"name": strings.ReplaceAll(name, ".", "_"), "schema": f.envelope, "strict": false}})
	f.responseFormat = map[string]json.RawMessage{"response_format": rf}
	f.answerTool = []ptk.ToolInfo{{Name: "answer", Description: "Give the output of " + name + ".", Parameters: f.envelope}}
	return f, nil
}

// styleFor says how model m is asked for its answer.
func (f *fn) styleFor(m llm.Model) style {
	if f.cfg.mode == ModeProtocol || f.cfg.mode == ModeAuto && f.cfg.memory.Rejected(m, structuredMemoryName(m)) {
		return styleProtocol
	}
	if _, ok := llm.As[*openai.Client](m); ok {
		return styleJSON
	}
	if _, ok := llm.As[*anthropic.Client](m); ok {
		return styleTool
	}
	if _, ok := llm.As[*gemini.Client](m); ok {
		return styleJSON // responseJsonSchema
	}
	return styleProtocol
}

func modeOf(st style) Mode {
	if st == styleProtocol {
		return ModeProtocol
	}
	return ModeStructured
}

// call makes one ptool call: raw is the input as JSON, in the caller's
// value (for a custom template), out where the answer is decoded.
func (f *fn) call(ctx context.Context, raw []byte, in any, out any) (*Record, error) {
	return f.callWith(ctx, raw, in, out, nil)
}

// callWith is call that, with partial set, streams the model's answers
// and gives it the output of each attempt as it is read (see CallStream).
func (f *fn) callWith(ctx context.Context, raw []byte, in any, out any, partial func(attempt int, js []byte)) (*Record, error) {
	rec := &Record{PTool: f.spec.Name, Input: raw, Source: SourceModel, Start: time.Now()}
	var err error
	if f.cfg.checkInput {
		if verr := f.spec.in.Validate(raw); verr != nil {
			err = fmt.Errorf("%s: invalid input: %w", f.spec.Name, verr)
		}
	}
	if err == nil {
		err = f.ask(ctx, rec, raw, in, out, partial)
	}
	f.finish(rec, err)
	return rec, err
}

// finish completes a record and gives it to the observer.
func (f *fn) finish(rec *Record, err error) {
	rec.Latency = time.Since(rec.Start)
	if err != nil {
		rec.Err = err.Error()
		rec.Output = nil
	}
	if f.cfg.observer != nil {
		f.cfg.observer(rec)
	}
}

func (f *fn) ask(ctx context.Context, rec *Record, raw []byte, in any, out any, partial func(attempt int, js []byte)) error {
	m := f.cfg.model
	if m == nil {
		return errors.New(f.spec.Name + ": no model (WithModel)")
	}
	rec.Provider = llm.ProviderOf(m)
	st := f.styleFor(m)
	spec, err := f.promptSpec(ctx, raw)
	if err != nil {
		return err
	}
	msgs, err := spec.messages(st, raw, in)
	if err != nil {
		return err
	}
	refused := false
	for len(rec.Attempts) < f.cfg.maxAttempts {
		if f.cfg.budget > 0 && rec.Cost >= f.cfg.budget {
			return &AttemptsError{PTool: f.spec.Name, Attempts: rec.Attempts, Budget: true}
		}
		req := llm.Request{Messages: msgs, Temperature: f.cfg.temperature, MaxTokens: f.cfg.maxTokens}
		t := turn.Turn{Model: m, NoCalls: true, Stream: f.cfg.stream}
		switch st {
		case styleJSON: // OpenAI reads the one, Gemini the other
			req.Extra, req.ResponseSchema = f.responseFormat, f.envelope
		case styleTool:
			req.Tools, req.ToolChoice = f.answerTool, "answer"
			t.NoCalls, t.Mode = false, turn.Native
		}
		var emit func(turn.Event)
		if partial != nil && f.spec.streamable() {
			t.Stream = true
			pr := &partialReader{spec: f.spec, style: st}
			attempt := len(rec.Attempts) + 1
			emit = func(e turn.Event) {
				var piece string
				switch {
				case e.Kind == turn.EventText && pr.style != styleTool:
					piece = e.Text
				case (e.Kind == turn.EventCallStart || e.Kind == turn.EventCallDelta) && pr.style == styleTool && e.Index == 0:
					piece = e.Text
				}
				if js := pr.feed(piece); js != nil {
					partial(attempt, js)
				}
			}
		}
		start := time.Now()
		reply, err := t.Ask(ctx, req, emit)
		if err != nil {
			if st != styleProtocol && f.cfg.mode == ModeAuto && ctx.Err() == nil &&
				(errors.Is(err, llm.ErrBadRequest) || errors.Is(err, llm.ErrToolsUnsupported)) {
				// the model refused structured output: ask it again in
				// text, and, if that request is taken, remember not to
				// ask it so next time (a request refused for another
				// reason is refused in text too)
				refused = true
				st = styleProtocol
				if msgs, err = spec.messages(st, raw, in); err != nil {
					return err
				}
				continue
			}
			return err
		}
		if refused {
			f.cfg.memory.Reject(m, structuredMemoryName(m))
			refused = false
		}
		a := Attempt{Mode: modeOf(st), Raw: reply.Raw, Usage: reply.Usage, Cost: reply.Cost, Latency: time.Since(start)}
		if a.Cost == 0 {
			if p, ok := llm.PriceOf(m); ok {
				a.Cost = p.Cost(reply.Usage)
			}
		}
		rec.Mode, rec.Model = a.Mode, reply.Model
		rec.Usage = rec.Usage.Add(a.Usage)
		rec.Cost += a.Cost
		var ans answer
		enveloped := true
		switch {
		case st == styleProtocol:
			ans = f.spec.readText(reply.Raw)
		case st == styleTool && len(reply.Made) > 0:
			a.Raw = string(reply.Made[0].Args)
			ans, _ = f.spec.readStructured(a.Raw) // the server made the call it was asked for
		case st == styleTool:
			// the server ignored the forced call: the answer may be in the text
			if ans, enveloped = f.spec.readStructured(reply.Raw); ans.problems != nil {
				ans.problems = []string{`no call of the function "answer"`}
			}
		default:
			ans, enveloped = f.spec.readStructured(reply.Raw)
		}
		a.Repairs = ans.repairs
		if ans.abstained {
			rec.Attempts = append(rec.Attempts, a)
			rec.Abstained = ans.reason
			return &AbstainedError{PTool: f.spec.Name, Reason: ans.reason}
		}
		if ans.problems == nil {
			reflect.ValueOf(out).Elem().SetZero() // nothing left from an earlier attempt
			if err := json.Unmarshal(ans.json, out); err != nil {
				ans.problems = []string{"the output does not fit its Go type: " + err.Error()}
			}
		}
		var v verdict
		if ans.problems == nil && len(f.cfg.checks) > 0 {
			v = f.runChecks(ctx, &checkArgs{in: in, out: out, inJSON: raw, outJSON: ans.json})
			if v.stop != nil {
				a.Problems = []string{"check: " + v.stop.Error()}
				rec.Attempts = append(rec.Attempts, a)
				return v.stop
			}
		}
		if ans.problems == nil && v.problems == nil && v.hints == nil {
			rec.Attempts = append(rec.Attempts, a)
			rec.Output = ans.json
			return nil
		}
		a.Problems = ans.problems
		for _, p := range v.problems {
			a.Problems = append(a.Problems, "check: "+p)
		}
		for _, h := range v.hints {
			a.Problems = append(a.Problems, "try again: "+h)
		}
		rec.Attempts = append(rec.Attempts, a)
		if !enveloped && f.cfg.mode == ModeAuto {
			// the server took the request for structured output and
			// ignored it: ask again in the protocol, which any model can
			// follow, and remember the model for the next calls
			f.cfg.memory.Reject(m, structuredMemoryName(m))
			st = styleProtocol
			if msgs, err = spec.messages(st, raw, in); err != nil {
				return err
			}
			reply.Made = nil // answered in text, as the protocol asks
		}
		msgs = append(msgs[:len(msgs):len(msgs)], f.feedback(st, reply, ans.problems, v)...)
	}
	return &AttemptsError{PTool: f.spec.Name, Attempts: rec.Attempts}
}

// feedback is what the model is told of an answer that does not fit: its
// reply, then what was wrong (problems with the schema, the checks'
// problems and hints) and how to answer again.
func (f *fn) feedback(st style, reply *turn.Reply, problems []string, v verdict) []ptk.Message {
	var b strings.Builder
	list := func(head string, items []string) {
		if len(items) == 0 {
			return
		}
		b.WriteString(head)
		for _, p := range items {
			b.WriteString("- ")
			b.WriteString(p)
			b.WriteByte('\n')
		}
	}
	list("Your answer does not fit the output's schema:\n", problems)
	list("Your answer does not pass the function's checks:\n", v.problems)
	list("Try again:\n", v.hints)
	b.WriteString("Answer again with the whole output, corrected. ")
	b.WriteString(instructions(st))
	if st == styleTool && len(reply.Made) > 0 {
		c := reply.Made[0]
		return []ptk.Message{
			{Role: ptk.RoleAssistant, Content: reply.Text, Calls: []ptk.Call{c}},
			{Role: ptk.RoleTool, CallID: c.ID, Tool: c.Tool, Content: b.String(), IsError: true},
		}
	}
	return []ptk.Message{
		{Role: ptk.RoleAssistant, Content: reply.Raw},
		{Role: ptk.RoleUser, Content: b.String()},
	}
}
