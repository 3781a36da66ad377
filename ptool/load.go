package ptool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"github.com/ptkit/ptk/llm"
)

// Dynamic is a declarative ptool: its input is a JSON object and its output
// any JSON value, both checked against the schemas its Def declares.
type Dynamic = PTool[map[string]any, any]

// Def is a ptool declared in a file, for users who do not write Go. Its
// JSON form is the ptools file's entries:
//
//	{"ptools": [{"name": "classify_sentiment", "doc": "Classify the tone.",
//	  "input": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
//	  "output": {"type": "string", "enum": ["positive", "negative", "neutral"]},
//	  "model": "gpt-4o-mini", "examples": [{"input": {"text": "Awful."}, "output": "negative"}]}]}
type Def struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
	// Input is the JSON Schema of the input, an object; Output the output's.
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
	// Model names the model in the catalog (llm/catalog); empty leaves it
	// to the caller (WithModel).
	Model string `json:"model,omitempty"`
	// Mode, MaxAttempts, Temperature and Template are the options of the
	// same names; zero values leave the defaults.
	Mode        Mode     `json:"mode,omitempty"`
	MaxAttempts int      `json:"max_attempts,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	Template    string   `json:"template,omitempty"`
	// Examples are input and output pairs shown to the model.
	Examples []Example `json:"examples,omitempty"`
	// Checks are what an answer must also satisfy, beyond its schema: one
	// that fails is fed back to the model, which is asked again.
	Checks []CheckDef `json:"checks,omitempty"`
}

// File is a ptools file.
type File struct {
	PTools []Def `json:"ptools"`
}

// ReadDefs reads a ptools file (JSON) and checks that its names are
// unique; Def.New makes each one a ptool.
func ReadDefs(file string) ([]Def, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var f File
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	seen := map[string]bool{}
	for i, def := range f.PTools {
		if seen[def.Name] {
			return nil, fmt.Errorf("%s: ptool %d: the name %q is declared twice", file, i+1, def.Name)
		}
		seen[def.Name] = true
	}
	return f.PTools, nil
}

// Load reads a ptools file and makes its ptools, in file order. Each uses
// its Def's model from ptk's built-in catalog unless opts give one
// (WithModel); opts apply to every ptool, after what the file says.
func Load(file string, opts ...Option) ([]*Dynamic, error) {
	defs, err := ReadDefs(file)
	if err != nil {
		return nil, err
	}
	out := make([]*Dynamic, 0, len(defs))
	for _, d := range defs {
		p, err := d.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// LoadRegistry reads a ptools file into a new registry: each ptool is
// answered by the model that model returns for the name its Def gives (""
// when it names none), with opts after what the file says.
func LoadRegistry(file string, model func(name string) (llm.Model, error), opts ...Option) (*Registry, error) {
	defs, err := ReadDefs(file)
	if err != nil {
		return nil, err
	}
	reg := NewRegistry()
	for _, d := range defs {
		o := opts
		if model != nil {
			m, err := model(d.Model)
			if err != nil {
				return nil, fmt.Errorf("%s: ptool %q: %w", file, d.Name, err)
			}
			o = append([]Option{WithModel(m)}, opts...)
		}
		p, err := d.New(o...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if err := reg.Register(p); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return reg, nil
}

// New makes the ptool d declares, with opts applied after what d says. Its
// calls check their input against d.Input before the model is asked.
func (d Def) New(opts ...Option) (*Dynamic, error) {
	var c config
	if d.Model != "" {
		c.modelName = d.Model
	}
	c.mode, c.maxAttempts, c.temperature, c.template = d.Mode, d.MaxAttempts, d.Temperature, d.Template
	c.rawExamples = append(c.rawExamples, d.Examples...)
	for _, o := range opts {
		o(&c)
	}
	if c.model != nil {
		c.modelName = ""
	}
	for _, e := range c.examples {
		ri, err := encodeInput(e[0])
		if err != nil {
			return nil, err
		}
		ro, err := encodeInput(e[1])
		if err != nil {
			return nil, err
		}
		c.rawExamples = append(c.rawExamples, Example{Input: ri, Output: ro})
	}
	if len(d.Input) == 0 {
		d.Input = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if len(d.Output) == 0 {
		return nil, fmt.Errorf("ptool %q: no output schema", d.Name)
	}
	c.checkInput = true
	if err := checkTypes(c.checks, reflect.TypeFor[map[string]any](), reflect.TypeFor[any]()); err != nil {
		return nil, fmt.Errorf("ptool %q: %w", d.Name, err)
	}
	for i, cd := range d.Checks {
		ck, err := cd.compile(c.language)
		if err != nil {
			return nil, fmt.Errorf("ptool %q: check %d: %w", d.Name, i+1, err)
		}
		c.checks = append(c.checks, ck)
	}
	f, err := newFn(d.Name, d.Doc, d.Input, d.Output, c)
	if err != nil {
		return nil, fmt.Errorf("ptool %q: %w", d.Name, err)
	}
	return &Dynamic{fn: f}, nil
}

// CallJSON calls a ptool with its input as JSON and returns the output as
// JSON, with the call's record.
func (p *PTool[In, Out]) CallJSON(ctx context.Context, input json.RawMessage) (json.RawMessage, *Record, error) {
	var in In
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, nil, fmt.Errorf("%s: the input: %w", p.fn.spec.Name, err)
	}
	_, rec, err := p.CallRecord(ctx, in)
	if err != nil {
		return nil, rec, err
	}
	return rec.Output, rec, nil
}
