package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/turn"
)

// Mode says how a question is asked.
type Mode string

// The modes.
const (
	// ModePTK teaches the model the text protocol, with one of Prompts.
	ModePTK Mode = "ptk"
	// ModeNative gives the functions as the provider's native tools.
	ModeNative Mode = "native"
	// ModeAuto asks natively, and in the text protocol when the provider
	// rejects tools (remembered for the questions that follow).
	ModeAuto Mode = "auto"
)

// Prompts are the text protocol's prompt variants, by name: "ptk" (ptk's
// own protocol, <PTK_CALL>), "hermes" (Hermes/Qwen-style <tool_call>) and
// "pythonic" (a Python list of calls, as BFCL asks in its prompting mode).
// The parser reads any of them, whichever the model writes.
var Prompts = map[string]protocol.Formatter{
	"ptk":      protocol.PTK{},
	"hermes":   Hermes{},
	"pythonic": Pythonic{},
}

// Options configure a Run.
type Options struct {
	// Model answers the questions; ModelName is sent as the request's model.
	Model     llm.Model
	ModelName string
	// Modes to ask each question in (default ptk and native).
	Modes []Mode
	// Prompts are the names of the prompt variants (Prompts) to ask in ptk
	// mode, and in auto mode when it falls back (default "ptk").
	Prompts []string
	// Concurrency is how many questions are asked at once (default 4).
	Concurrency int
	// Temperature and MaxTokens go in every request (nil and 0: the
	// provider's defaults).
	Temperature *float64
	MaxTokens   int
	// Timeout bounds each question's model call (0: none).
	Timeout time.Duration
	// Stream asks the model to stream its answers.
	Stream bool
	// Previous are results of an earlier run: a question already answered
	// in a mode and prompt (without an error) is not asked again, and its
	// result is returned as it was.
	Previous []Result
	// OnResult, when set, is called after each question, one call at a
	// time, with how many of all the questions are done.
	OnResult func(r Result, done, total int)
	// NativeTools remembers the models that rejected native tools in auto
	// mode; nil remembers for this run only.
	NativeTools *llm.NativeTools
}

// Result is one question asked in one mode, and its verdicts.
type Result struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Mode     Mode   `json:"mode"`
	// Prompt is the prompt variant of a question asked in the text
	// protocol; empty in native mode.
	Prompt string `json:"prompt,omitempty"`
	// Used is the mode the question was really asked in (auto: native or
	// ptk).
	Used Mode `json:"used"`
	// Verdict scores the calls as ptk reads them, Strict as BFCL does (see
	// the package documentation); Correct is Verdict.Correct.
	Correct bool    `json:"correct"`
	Verdict Verdict `json:"verdict"`
	Strict  Verdict `json:"strict"`
	// Calls are the calls ptk read, in order.
	Calls []CallRecord `json:"calls"`
	// Text is the reply as the model wrote it.
	Text string `json:"text"`
	// NotParsed counts the calls the model tried to write that could not
	// be read; Invalid names the schema rules the calls it read broke
	// (unknown_tool, missing_argument, wrong_type, invalid_argument), and
	// repetition_loop for a reply none of whose calls runs;
	// Refusal reports a prose answer without a call to a question that
	// needed one.
	NotParsed int      `json:"not_parsed"`
	Invalid   []string `json:"invalid,omitempty"`
	Refusal   bool     `json:"refusal"`
	// LatencyMS is how long the model took to answer.
	LatencyMS int64     `json:"latency_ms"`
	Usage     ptk.Usage `json:"usage"`
	Cost      float64   `json:"cost"`
	// Error is the provider's failure, when the question got no answer
	// (then it is not scored).
	Error string `json:"error,omitempty"`
}

// CallRecord is a call as ptk read it.
type CallRecord struct {
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Repairs []string        `json:"repairs,omitempty"`
	// Error is why the call cannot run (its code and message), if it cannot.
	Error string `json:"error,omitempty"`
}

// Key identifies a question asked in a mode and a prompt variant.
func (r Result) Key() string { return r.ID + "\x00" + string(r.Mode) + "\x00" + r.Prompt }

type job struct {
	q      *Question
	mode   Mode
	prompt string
}

// Run asks the model every question in every mode (and, in the text
// protocol, every prompt variant), at most Concurrency at once, and scores
// the answers. The results are in the order of questions, then modes, then
// prompts. A question the provider failed to answer has Error set; Run
// returns an error only for a bad configuration or when ctx ends (with the
// results so far).
func Run(ctx context.Context, questions []*Question, opts Options) ([]Result, error) {
	if opts.Model == nil {
		return nil, errors.New("eval: no model")
	}
	modes := opts.Modes
	if len(modes) == 0 {
		modes = []Mode{ModePTK, ModeNative}
	}
	prompts := opts.Prompts
	if len(prompts) == 0 {
		prompts = []string{"ptk"}
	}
	for _, p := range prompts {
		if _, ok := Prompts[p]; !ok {
			return nil, fmt.Errorf("eval: unknown prompt %q: use %s", p, strings.Join(promptNames(), ", "))
		}
	}
	for _, m := range modes {
		if m != ModePTK && m != ModeNative && m != ModeAuto {
			return nil, fmt.Errorf("eval: unknown mode %q: use ptk, native or auto", m)
		}
	}
	if opts.NativeTools == nil {
		opts.NativeTools = &llm.NativeTools{}
	}
	var jobs []job
	for _, q := range questions {
		for _, m := range modes {
			if m == ModeNative {
				jobs = append(jobs, job{q, m, ""})
				continue
			}
			for _, p := range prompts {
				jobs = append(jobs, job{q, m, p})
			}
		}
	}
	prev := map[string]Result{}
	for _, r := range opts.Previous {
		if r.Error == "" {
			prev[r.Key()] = r
		}
	}
	results := make([]Result, len(jobs))
	var todo []int
	for i, j := range jobs {
		if r, ok := prev[Result{ID: j.q.ID, Mode: j.mode, Prompt: j.prompt}.Key()]; ok {
			results[i] = r
			continue
		}
		todo = append(todo, i)
	}
	n := max(opts.Concurrency, 1)
	if opts.Concurrency == 0 {
		n = 4
	}
	var (
		mu   sync.Mutex
		done = len(jobs) - len(todo)
		wg   sync.WaitGroup
		next = make(chan int)
	)
	for range min(n, len(todo)) {
		wg.Go(func() {
			for i := range next {
				r := ask(ctx, jobs[i], &opts)
				mu.Lock()
				results[i] = r
				done++
				if opts.OnResult != nil {
					opts.OnResult(r, done, len(jobs))
				}
				mu.Unlock()
			}
		})
	}
feed:
	for _, i := range todo {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		var out []Result
		for _, r := range results {
			if r.ID != "" {
				out = append(out, r)
			}
		}
		return out, err
	}
	return results, nil
}

func promptNames() []string {
	var names []string
	for n := range Prompts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ask asks one question in one mode and scores the answer.
func ask(ctx context.Context, j job, o *Options) Result {
	used := j.mode
	if used == ModeAuto {
		used = ModeNative
		if o.NativeTools.Rejected(o.Model, o.ModelName) {
			used = ModePTK
		}
	}
	for {
		r, err := askIn(ctx, j, used, o)
		if err != nil && j.mode == ModeAuto && used == ModeNative && ctx.Err() == nil && errors.Is(err, llm.ErrToolsUnsupported) {
			o.NativeTools.Reject(o.Model, o.ModelName)
			used = ModePTK
			continue
		}
		if err != nil {
			r.Error = err.Error()
		}
		return r
	}
}

func askIn(ctx context.Context, j job, used Mode, o *Options) (Result, error) {
	q := j.q
	r := Result{ID: q.ID, Category: q.Category, Mode: j.mode, Prompt: j.prompt, Used: used, Calls: []CallRecord{}}
	native := used == ModeNative
	tools, names := Tools(q, native)
	parser, err := protocol.NewParser(tools)
	if err != nil {
		return r, fmt.Errorf("the question's tools cannot be used: %w", err)
	}
	tmode, f := turn.PTK, Prompts[j.prompt]
	if native {
		tmode, f = turn.Native, nil
	}
	var instructions []string
	for _, m := range q.Messages {
		if m.Role == ptk.RoleSystem {
			instructions = append(instructions, m.Content)
		}
	}
	h := turn.NewHistory(tmode, f, strings.Join(instructions, "\n\n"), tools)
	h.Append(q.Messages...)
	req := llm.Request{Model: o.ModelName, Messages: h.Rendered(), Temperature: o.Temperature, MaxTokens: o.MaxTokens}
	if native {
		req.Tools = tools
	}
	t := turn.Turn{Model: o.Model, Parser: parser, Mode: tmode, Stream: o.Stream}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	start := time.Now()
	rep, err := t.Ask(ctx, req, nil)
	r.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		return r, err
	}
	r.Text, r.Usage, r.Cost = rep.Raw, rep.Usage, rep.Cost
	if r.Cost == 0 {
		if p, ok := llm.PriceOf(o.Model); ok {
			r.Cost = p.Cost(rep.Usage)
		}
	}
	score(&r, q, rep, parser, tools, names, native)
	return r, nil
}

// blocking are the diagnostics that keep a call from running.
var blocking = []protocol.DiagKind{protocol.DiagUnknownTool, protocol.DiagMissingArgument, protocol.DiagWrongType, protocol.DiagInvalidArgument, protocol.DiagRepetitionLoop}

// looped reports a call of a reply the parser judged a repetition loop
// (protocol.DiagRepetitionLoop): none of its calls runs, so none is scored,
// and the reply counts as one without a call.
func looped(a protocol.Attempt) bool { return a.Err != nil && a.Err.Code == ptk.DuplicateToolCall }

// score fills in r's calls and verdicts from the reply.
func score(r *Result, q *Question, rep *turn.Reply, parser *protocol.Parser, tools []ptk.ToolInfo, names map[string]string, native bool) {
	original := func(name string) string {
		if o, ok := names[name]; ok {
			return o
		}
		return name
	}
	var calls []Call
	var diags []protocol.Diagnostic
	decodeFailed := false
	for i, a := range rep.Attempts {
		if a.Err != nil && a.Err.Code == ptk.ParseError {
			r.NotParsed++
			continue
		}
		if looped(a) {
			continue // ptk runs none of a repetition loop's calls
		}
		rec := CallRecord{Tool: original(a.Call.Tool), Args: a.Call.Args, Repairs: a.Call.Repairs}
		if len(rec.Args) == 0 {
			rec.Args = json.RawMessage("{}")
		}
		if a.Err != nil {
			rec.Error = string(a.Err.Code) + ": " + a.Err.Message
		}
		r.Calls = append(r.Calls, rec)
		args, ok := decodeArgs(rec.Args)
		if !ok {
			decodeFailed = true
		}
		c := Call{Name: rec.Tool, Args: args}
		declaredNumbers(q, c)
		calls = append(calls, c)
		if rep.Native && a.Err != nil {
			_, d := parser.Check(rep.Made[i])
			diags = append(diags, d...)
		}
	}
	if !rep.Native {
		if turn.CutOff(rep.FinishReason) {
			diags = parser.ParseCut(rep.Raw).Diagnostics
		} else {
			diags = parser.Parse(rep.Raw).Diagnostics
		}
	}
	for _, d := range diags {
		if slices.Contains(blocking, d.Kind) && !slices.Contains(r.Invalid, string(d.Kind)) {
			r.Invalid = append(r.Invalid, string(d.Kind))
		}
	}
	if decodeFailed {
		r.Verdict = decoderFailed(q)
	} else {
		r.Verdict = Check(q, calls)
	}
	r.Correct = r.Verdict.Correct
	r.Refusal = len(calls) == 0 && r.NotParsed == 0 && !strings.Contains(q.Category, "irrelevance") && strings.TrimSpace(rep.Text) != ""
	r.Strict = strictVerdict(q, rep, tools, original, native)
}

// declaredNumbers gives the numbers in c's arguments the kind the question
// declares: a whole number is a float where a float is declared (or a list
// of floats), and a float with nothing after its point is an integer where
// an integer is. A call ptk reads is JSON, which has one kind of number: 12
// and 12.0 are one value (an encoder writes float64(12) as 12, as Go's
// does, and JSON Schema's integer accepts 12.0), so the tool gets the kind
// it declared; BFCL's checker, reading Python, tells them apart (a list of
// floats holding 12 is a type error). The call as the model wrote it (the
// strict verdict) keeps the numbers as written.
func declaredNumbers(q *Question, c Call) {
	if c.Args == nil || Language(q.Category) != "python" {
		return
	}
	funcs := q.docs
	if len(funcs) != len(q.Functions) {
		funcs = funcDocs(q.Functions)
	}
	fd := findFunc(funcs, c.Name)
	if fd == nil {
		return
	}
	for i, name := range c.Args.Keys {
		prop, ok := fd.props.Get(name)
		if !ok {
			continue
		}
		typ, items := propType(prop)
		switch {
		case typ == "float" || typ == "integer":
			c.Args.Vals[i] = numberAs(c.Args.Vals[i], typ)
		case typ == "array" || typ == "tuple":
			if l, ok := c.Args.Vals[i].([]any); ok && (items == "float" || items == "integer") {
				for j, v := range l {
					l[j] = numberAs(v, items)
				}
			}
		}
	}
}

// numberAs is v as the kind of number typ declares, when it is that
// number.
func numberAs(v any, typ string) any {
	switch n := v.(type) {
	case int64:
		if typ == "float" {
			return float64(n)
		}
	case float64:
		if typ == "integer" && n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n)
		}
	}
	return v
}

// decoderFailed is the verdict on output BFCL cannot decode: right only on
// an irrelevance question.
func decoderFailed(q *Question) Verdict {
	if strings.Contains(q.Category, "irrelevance") {
		return right
	}
	return wrong("ast_decoder:decoder_failed", "the calls cannot be decoded")
}

func decodeArgs(raw json.RawMessage) (*Dict, bool) {
	v, err := Decode(raw)
	if err != nil {
		return nil, false
	}
	d, ok := v.(*Dict)
	return d, ok
}

// strictVerdict scores the calls as the model wrote them: in native mode
// the provider's native calls, their arguments as strict JSON; in the text
// protocol the calls read without the tools' schemas (no coercion) and with
// the tool names as written.
func strictVerdict(q *Question, rep *turn.Reply, tools []ptk.ToolInfo, original func(string) string, native bool) Verdict {
	var calls []Call
	if native {
		if !rep.Native {
			return Check(q, nil)
		}
		for _, c := range rep.Made {
			raw := c.Args
			if len(strings.TrimSpace(string(raw))) == 0 {
				raw = json.RawMessage("{}")
			}
			args, ok := decodeArgs(raw)
			if !ok {
				return decoderFailed(q)
			}
			calls = append(calls, Call{Name: original(c.Tool), Args: args})
		}
		return Check(q, calls)
	}
	p, err := protocol.NewParser(bareTools(tools))
	if err != nil {
		return decoderFailed(q)
	}
	parse := p.Parse
	if turn.CutOff(rep.FinishReason) {
		parse = p.ParseCut
	}
	for _, a := range parse(rep.Raw).Attempts {
		if a.Err != nil && a.Err.Code == ptk.ParseError || looped(a) {
			continue
		}
		name := a.Call.Tool
		if a.Err != nil && a.Err.Tool != "" {
			name = a.Err.Tool
		}
		for _, rp := range a.Call.Repairs {
			if w, ok := writtenName(rp); ok {
				name = w
			}
		}
		raw := a.Call.Args
		if len(raw) == 0 {
			raw = json.RawMessage("{}")
		}
		args, ok := decodeArgs(raw)
		if !ok {
			return decoderFailed(q)
		}
		calls = append(calls, Call{Name: original(name), Args: args})
	}
	return Check(q, calls)
}

// writtenName is the name the model wrote, from the parser's repair
// `tool name "X" read as "Y"`.
func writtenName(repair string) (string, bool) {
	rest, ok := strings.CutPrefix(repair, "tool name ")
	if !ok {
		return "", false
	}
	name, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", false
	}
	s, err := strconv.Unquote(name)
	return s, err == nil
}

// bareTools are tools with their names only: a parser of them reads calls
// without checking or coercing their arguments.
func bareTools(tools []ptk.ToolInfo) []ptk.ToolInfo {
	out := make([]ptk.ToolInfo, len(tools))
	for i, t := range tools {
		out[i] = ptk.ToolInfo{Name: t.Name}
	}
	return out
}
