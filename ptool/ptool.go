package ptool

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/catalog"
	"github.com/ptkit/ptk/tool"
)

// Mode says how a model's answer is asked for and read.
type Mode string

// The modes.
const (
	// ModeAuto uses structured output where the model's provider has it
	// (OpenAI's Chat Completions, Anthropic, Gemini), and the protocol
	// otherwise, or once the model refused structured output or answered
	// without the object it asks for (remembered in the ptool's memory, see
	// WithMemory).
	ModeAuto Mode = "auto"
	// ModeStructured asks the provider for JSON that fits the schema:
	// OpenAI's response_format json_schema (llm/openai, so also Ollama,
	// vLLM...), Gemini's responseJsonSchema, a forced tool call on
	// Anthropic; other models are asked as with ModeProtocol.
	ModeStructured Mode = "structured"
	// ModeProtocol asks any model to write the answer between <answer>
	// tags, and reads it leniently.
	ModeProtocol Mode = "protocol"
)

// DefaultMaxAttempts is how many model calls a ptool call makes at most
// when WithMaxAttempts does not say.
const DefaultMaxAttempts = 3

// Option configures a ptool.
type Option func(*config)

type config struct {
	model       llm.Model
	modelName   string
	examples    [][2]any
	rawExamples []Example
	template    string
	maxAttempts int
	temperature *float64
	maxTokens   int
	budget      float64
	mode        Mode
	stream      bool
	memory      *llm.NativeTools
	observer    func(*Record)
	outEnum     []string
	// checkInput checks each call's input against the input schema.
	checkInput bool
	checks     []checker
	language   Language
	store      ExampleStore
	storedN    int
}

// WithModel sets the model that answers.
func WithModel(m llm.Model) Option { return func(c *config) { c.model = m } }

// WithModelName sets the model that answers by its name in ptk's built-in
// catalog (llm/catalog), resolved when the ptool is made.
func WithModelName(name string) Option { return func(c *config) { c.modelName = name } }

// WithExample adds an example shown to the model: in must be a value of the
// ptool's input type and out of its output type (New panics otherwise).
func WithExample(in, out any) Option {
	return func(c *config) { c.examples = append(c.examples, [2]any{in, out}) }
}

// WithTemplate replaces the default prompt with a text/template, executed
// for each call as the one message the model is given. Its data has Name,
// Doc, Signature, OutputType, OutputFields, Examples (Input and Output as
// JSON text), Input (the call's input value, so {{.Input.Text}} reads a
// field), InputJSON, and Instructions: how to write the answer so that it
// can be read, which the template should include.
func WithTemplate(text string) Option { return func(c *config) { c.template = text } }

// WithMaxAttempts sets how many model calls one call may make: the first
// answer and the retries of answers that do not fit (default
// DefaultMaxAttempts).
func WithMaxAttempts(n int) Option { return func(c *config) { c.maxAttempts = n } }

// WithTemperature sets the sampling temperature.
func WithTemperature(t float64) Option { return func(c *config) { c.temperature = &t } }

// WithMaxTokens caps the tokens the model writes per attempt.
func WithMaxTokens(n int) Option { return func(c *config) { c.maxTokens = n } }

// WithBudget caps what one call may cost, in US dollars (the model's price,
// see llm.Priced and llm/catalog): no attempt is made once the call's cost
// has reached it, and the call fails with an error matching ErrBudget.
func WithBudget(dollars float64) Option { return func(c *config) { c.budget = dollars } }

// WithMode sets how answers are asked for and read (default ModeAuto).
func WithMode(m Mode) Option { return func(c *config) { c.mode = m } }

// WithStream asks the model to stream its answers, when it can.
func WithStream(on bool) Option { return func(c *config) { c.stream = on } }

// WithMemory sets the memory of models that refused structured output, for
// ModeAuto: share one between ptools (and with an agent) so that each
// model is refused once. By default each ptool has its own. A refusal is
// remembered under the name "ptool:structured:" and the model's id
// (llm.ModelIDOf; "ptool:structured" for a model without one), apart from
// the model names an agent remembers refusals of native tools under; a
// model that says it
// takes no native tools (llm.ToolSupporter, as the catalog's "ptk" models
// do) is asked in text from its first call.
func WithMemory(m *llm.NativeTools) Option { return func(c *config) { c.memory = m } }

// WithObserver registers f to be given the Record of every call, when it
// ends, in the calling goroutine. f must not keep the record's slices to
// change them.
func WithObserver(f func(*Record)) Option { return func(c *config) { c.observer = f } }

// WithOutputEnum limits a string output to values: the enum tag of a
// struct field, for an output that is a bare string.
func WithOutputEnum(values ...string) Option { return func(c *config) { c.outEnum = values } }

// PTool is a typed function a model executes: Call formats a prompt from an
// In, asks the model, and reads its answer back into an Out. It does not
// change after New, and is safe for concurrent calls.
type PTool[In, Out any] struct {
	fn *fn
}

// New returns the ptool name, whose doc comment doc is the heart of its
// prompt. Its input and output schemas are derived from In and Out by
// tool.SchemaOf: In must be a struct; Out may be a struct, a slice, a map, a
// string (WithOutputEnum lists its values), a number or a bool.
//
// New panics on a mistake in the program, like regexp.MustCompile: an
// invalid name, a type without a JSON Schema, an example of the wrong type
// or that does not fit the schema, a template that does not parse, a
// WithCheck of other types, or a WithModelName the catalog does not have.
func New[In, Out any](name, doc string, opts ...Option) *PTool[In, Out] {
	var c config
	for _, o := range opts {
		o(&c)
	}
	must := func(err error) {
		if err != nil {
			panic(fmt.Sprintf("ptool.New(%q): %v", name, err))
		}
	}
	it := reflect.TypeFor[In]()
	for it.Kind() == reflect.Pointer {
		it = it.Elem()
	}
	if it.Kind() != reflect.Struct {
		must(fmt.Errorf("the input type %s is not a struct", it))
	}
	in, err := tool.SchemaOf(reflect.TypeFor[In]())
	must(err)
	out, err := tool.SchemaOf(reflect.TypeFor[Out]())
	must(err)
	if len(c.outEnum) > 0 {
		out, err = withEnum(out, c.outEnum)
		must(err)
	}
	for i, e := range c.examples {
		ein, ok1 := e[0].(In)
		eout, ok2 := e[1].(Out)
		if !ok1 || !ok2 {
			must(fmt.Errorf("example %d is a (%T, %T), not a (%s, %s)", i+1, e[0], e[1], reflect.TypeFor[In](), reflect.TypeFor[Out]()))
		}
		ri, err := encodeInput(ein)
		must(err)
		ro, err := encodeInput(eout)
		must(err)
		c.rawExamples = append(c.rawExamples, Example{Input: ri, Output: ro})
	}
	must(checkTypes(c.checks, reflect.TypeFor[In](), reflect.TypeFor[Out]()))
	f, err := newFn(name, doc, in, out, c)
	must(err)
	return &PTool[In, Out]{fn: f}
}

// withEnum adds an enum to a string schema.
func withEnum(out json.RawMessage, values []string) (json.RawMessage, error) {
	var s map[string]any
	if err := json.Unmarshal(out, &s); err != nil || s["type"] != "string" {
		return nil, fmt.Errorf("WithOutputEnum for an output that is not a string")
	}
	s["enum"] = values
	return json.Marshal(s)
}

// Spec returns what the ptool is: name, doc, schemas, signature, prompt.
func (p *PTool[In, Out]) Spec() *Spec { return p.fn.spec }

// Call asks the model for the output of in. The error is the model's
// (llm.Error, the context's), or matches ErrAbstained, ErrAttempts or
// ErrBudget.
func (p *PTool[In, Out]) Call(ctx context.Context, in In) (Out, error) {
	out, _, err := p.CallRecord(ctx, in)
	return out, err
}

// CallRecord is Call that also returns the call's Record, which the
// observer (WithObserver) is given too.
func (p *PTool[In, Out]) CallRecord(ctx context.Context, in In) (Out, *Record, error) {
	var out Out
	raw, err := encodeInput(in)
	if err != nil {
		return out, nil, err
	}
	rec, err := p.fn.call(ctx, raw, in, &out)
	return out, rec, err
}

// resolveConfig resolves a model named in the catalog.
func resolveConfig(c *config) error {
	if c.model == nil && c.modelName != "" {
		m, err := catalog.Default().Resolve(c.modelName, catalog.Options{})
		if err != nil {
			return err
		}
		c.model = m
	}
	return nil
}
