// Package schema is ptk's one model of a tool's JSON Schema, from the
// definition a program declares to the prompt a model reads and the check
// its calls pass: [Normalize] turns the schema dialects found in the wild
// (BFCL's "dict" and "float", Java's "long", "optional": true) into JSON
// Schema with one alias table; [Compile] reads a schema once into a
// [Schema] that coerces arguments ([Schema.Coerce], each repair recorded),
// checks them ([Schema.Check], each problem described with its JSON Pointer,
// [Schema.Validate] for JSON arguments) and renders it as prompt text
// ([WriteToolDef], [ExampleCall]). $ref is resolved by one resolver
// everywhere, so what a model is shown is what its calls are checked against.
//
// It builds on the lenient JSON layer and the santhosh-tekuri/jsonschema
// validator, and imports nothing above it.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ptkit/ptk/lenient"
)

// Issue names a kind of coercion or problem. Its values are the parser's
// diagnostic kinds of the same name.
type Issue string

// The issues.
const (
	// A required argument is missing.
	MissingArgument Issue = "missing_argument"
	// An argument has the wrong type and could not be coerced.
	WrongType Issue = "wrong_type"
	// An argument breaks another rule of the schema (enum, range, pattern...).
	InvalidArgument Issue = "invalid_argument"
	// An argument the schema does not declare was dropped.
	UnexpectedArgument Issue = "unexpected_argument"
	// An argument was converted to the type its schema asks for.
	Coerced Issue = "coerced"
)

// Schema is a tool's parameters, normalized and compiled once. It does not
// change after Compile, so any number of goroutines may share one. A nil
// *Schema stands for a tool without declared parameters: it accepts
// anything.
type Schema struct {
	root     *lenient.Node // normalized, in source order
	sch      *sch          // for coercion and the quick check
	compiled *jsonschema.Schema
	passed   passedArgs
}

// passedArgs remembers the last few argument texts known to satisfy a
// schema, by a 128-bit keyed hash, so a call checked by the parser is not
// validated again by the tool it runs (see [Schema.Passed]) and the parser
// copies nothing to remember it. The hash is seeded at random per process,
// so model output cannot aim for a collision; one by chance has a
// probability of about 2^-128.
type passedArgs struct {
	mu   sync.Mutex
	sums [passedMax][2]uint64
	n    int // how many sums are set, at most passedMax
	next int
}

const passedMax = 16

var passedSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func passedSum(args []byte) [2]uint64 {
	return [2]uint64{maphash.Bytes(passedSeeds[0], args), maphash.Bytes(passedSeeds[1], args)}
}

func (p *passedArgs) has(args []byte) bool {
	sum := passedSum(args)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, x := range p.sums[:p.n] {
		if x == sum {
			return true
		}
	}
	return false
}

func (p *passedArgs) add(args []byte) {
	sum := passedSum(args)
	p.mu.Lock()
	p.sums[p.next] = sum
	p.next = (p.next + 1) % passedMax
	p.n = min(p.n+1, passedMax)
	p.mu.Unlock()
}

// compiled caches schemas by their text: compiling costs far more than a
// model call's parsing, and programs (a gateway, an agent run after run)
// declare the same tools again and again.
var compiled struct {
	sync.Mutex
	m     map[string]*Schema
	bytes int // the text of the schemas in m
}

// compiledMax and compiledMaxBytes bound the cache; when it is full it
// starts again. A schema longer than compiledMaxSchema is compiled each
// time and never kept: the schemas come from outside (a gateway's clients,
// MCP servers), and a few thousand different large ones would otherwise be
// held for good, several times their size each.
const (
	compiledMax       = 1024
	compiledMaxBytes  = 16 << 20
	compiledMaxSchema = 64 << 10
)

// Compile reads a tool's parameters. Empty parameters or null give a nil
// Schema and no error; an error says why the parameters cannot be used.
func Compile(raw json.RawMessage) (*Schema, error) {
	compiled.Lock()
	s, ok := compiled.m[string(raw)] // no copy of raw for the look-up
	compiled.Unlock()
	if ok {
		return s, nil
	}
	s, err := compileUncached(raw)
	if err != nil || len(raw) > compiledMaxSchema {
		return s, err
	}
	key := string(raw)
	compiled.Lock()
	if compiled.m == nil || len(compiled.m) >= compiledMax || compiled.bytes+len(key) > compiledMaxBytes {
		compiled.m, compiled.bytes = make(map[string]*Schema), 0
	}
	compiled.m[key] = s
	compiled.bytes += len(key)
	compiled.Unlock()
	return s, nil
}

func compileUncached(raw json.RawMessage) (*Schema, error) {
	n, err := normalizedSchema(raw)
	if err != nil {
		return nil, errors.New("parameters: " + err.Error())
	}
	if n == nil {
		return nil, nil
	}
	s := &Schema{root: n, sch: compileSch(n)}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(lenient.AppendJSON(nil, n, raw)))
	if err != nil {
		return nil, errors.New("parameters: " + err.Error())
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const url = "ptk:///parameters.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, errors.New("parameters: " + err.Error())
	}
	v, err := c.Compile(url)
	if err != nil {
		return nil, errors.New("parameters are not a valid JSON Schema: " + err.Error())
	}
	s.compiled = v
	return s, nil
}

// noLoader refuses every schema outside the one compiled. The validator's
// own loader reads file:// URLs, so a $ref in a schema from outside (an MCP
// server's, a gateway client's) would read the files of the machine ptk
// runs on, report which exist, hang on a FIFO, and put a JSON file's values
// in the check of every call.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("a $ref outside the tool's own schema is not loaded (only #... references within it are)")
}

// Params lists the declared parameters, in schema order.
func (s *Schema) Params() []string {
	if s == nil {
		return nil
	}
	return schemaProps(s.root)
}

// Coerce converts the arguments to the types the schema asks for and drops
// the ones it does not declare, saying what it did. text marks values
// written as text (XML parameters, key=value pairs): those are read as the
// JSON they spell where that is what the schema wants, even with no schema.
func (s *Schema) Coerce(args *lenient.Node, text bool) (*lenient.Node, []Note) {
	c := coercer{text: text}
	switch {
	case s != nil && s.sch != nil:
		args = c.coerce(args, s.sch)
	case text:
		args = c.coerce(args, nil)
	}
	return args, c.notes
}

// Check validates the arguments against the schema and describes each
// problem; none means valid. Simple schemas are checked without the full
// validator.
func (s *Schema) Check(args *lenient.Node) []Note {
	if s == nil || s.compiled == nil || validSimple(args, s.sch, 0) {
		return nil
	}
	err := s.compiled.Validate(toAny(args, 0))
	if err == nil {
		return nil
	}
	var out []Note
	for _, leaf := range leaves(err) {
		k, ptr, msg := describe(leaf)
		out = append(out, Note{k, ptr, msg})
	}
	return out
}

// Passed records that the encoded arguments passed [Schema.Check] (as the
// parser records every call it found valid), so that [Schema.ValidateOnce]
// of the same bytes, by the tool the call is for, is a look-up instead of a
// second validation. Schemas are shared through Compile's cache, so the
// parser and a tool declared with the same parameters hold the same Schema.
func (s *Schema) Passed(args json.RawMessage) {
	if s != nil && s.compiled != nil {
		s.passed.add(args)
	}
}

// Summary lists the parameters with their types, for an error message:
// "city (string, required), unit (string)".
func (s *Schema) Summary() string {
	if s == nil {
		return "none"
	}
	return paramSummary(s.sch)
}

// Error reports arguments that do not satisfy a schema.
type Error struct {
	Problems []Note
}

func (e *Error) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Message
	}
	return strings.Join(Dedupe(msgs), "; ")
}

// Validate checks JSON arguments against the schema, as they are, without
// coercing them, always in full: an *Error lists the problems. Arguments that are not JSON
// are an error too.
func (s *Schema) Validate(args json.RawMessage) error {
	if s == nil {
		return nil
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return errors.New("arguments are not valid JSON: " + err.Error())
	}
	if dec.More() {
		return errors.New("arguments are not valid JSON: data after the value")
	}
	if s.compiled == nil {
		return nil
	}
	if err := s.compiled.Validate(v); err != nil {
		e := &Error{}
		for _, leaf := range leaves(err) {
			k, ptr, msg := describe(leaf)
			e.Problems = append(e.Problems, Note{k, ptr, msg})
		}
		return e
	}
	return nil
}

// ValidateOnce is Validate, except for arguments the parser already checked:
// the exact bytes of a call it recorded with [Schema.Passed] are valid
// without a second validation. A tool runs its calls' arguments through it.
func (s *Schema) ValidateOnce(args json.RawMessage) error {
	if s != nil && s.compiled != nil && s.passed.has(args) {
		return nil
	}
	return s.Validate(args)
}

// RequiresArguments reports whether the schema lists required arguments.
func (s *Schema) RequiresArguments() bool {
	if s == nil {
		return false
	}
	r := s.root.Get("required")
	return r != nil && len(r.Kids) > 0
}

// ParamTypes returns the JSON types the schema allows for the argument
// name, or nil when it does not say (or does not declare name).
func (s *Schema) ParamTypes(name string) []string {
	if s == nil || s.sch == nil {
		return nil
	}
	if p := s.sch.prop(name); p != nil {
		return p.types
	}
	return nil
}

// Quick reports whether args certainly satisfy the schema by the quick
// check alone, without the full validator; false means "ask Check".
func (s *Schema) Quick(args *lenient.Node) bool {
	return s == nil || s.compiled == nil || validSimple(args, s.sch, 0)
}
