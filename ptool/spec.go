package ptool

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/lenient"
	"github.com/ptkit/ptk/schema"
)

// Example is an input and the output the function should give for it,
// shown to the model.
type Example = ptk.Example

// Spec is what a ptool is: its name, doc, input and output schemas and
// examples, and the prompt made of them. It does not change after the
// ptool is made, and is shared by its calls: read it, never change it.
type Spec struct {
	// Name is the function's name, as a model or a registry knows it.
	Name string
	// Doc says what the function does: the heart of its prompt.
	Doc string
	// Input and Output are the JSON Schemas of the input (an object) and of
	// the output (any type).
	Input, Output json.RawMessage
	// Examples are shown to the model, in order.
	Examples []Example

	sig          string
	in, out      *schema.Schema
	outNode      *lenient.Node
	outputType   string
	outputFields string
	textOut      bool // the output may be a string: bare text reads as one
	// system holds the system prompt for each style of answer.
	system map[style]string
	// custom, when set, renders the whole prompt per call.
	custom *template.Template
}

// style is how the model is asked to give its answer.
type style string

const (
	styleProtocol style = "protocol" // <answer>JSON</answer> in text
	styleJSON     style = "json"     // {"answer": …} as the whole reply
	styleTool     style = "tool"     // a forced call of the tool "answer"
)

//go:embed system.tmpl
var systemTmpl string

var systemTemplate = template.Must(template.New("system").Parse(systemTmpl))

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)

// newSpec compiles the schemas and renders the prompt's static parts once.
func newSpec(name, doc string, in, out json.RawMessage, examples []Example, custom string) (*Spec, error) {
	if !nameRE.MatchString(name) {
		return nil, fmt.Errorf("the name %q is not a function name (letters, digits, _ . -, at most 64)", name)
	}
	s := &Spec{Name: name, Doc: strings.TrimSpace(doc), Input: in, Output: out, Examples: examples}
	var err error
	if s.in, err = schema.Compile(in); err != nil {
		return nil, fmt.Errorf("the input schema: %w", err)
	}
	if s.out, err = schema.Compile(out); err != nil {
		return nil, fmt.Errorf("the output schema: %w", err)
	}
	inNode, _, err := lenient.Parse(in)
	if err != nil || inNode.Kind != lenient.Object {
		return nil, fmt.Errorf("the input schema is not a JSON object")
	}
	if s.outNode, _, err = lenient.Parse(out); err != nil || s.outNode.Kind != lenient.Object {
		return nil, fmt.Errorf("the output schema is not a JSON object")
	}
	s.sig = signature(name, inNode, s.outNode)
	var b strings.Builder
	typeText(&b, s.outNode, 0)
	s.outputType = b.String()
	s.textOut = s.outputType == "string" || strings.HasPrefix(s.outputType, `"`)
	if props := s.outNode.Get("properties"); props != nil && props.Kind == lenient.Object && len(props.Keys) > 0 {
		var f strings.Builder
		schema.WriteToolDef(&f, ptk.ToolInfo{Name: name, Parameters: out})
		_, fields, _ := strings.Cut(f.String(), "\n")
		s.outputFields = strings.TrimSpace(fields)
	}
	if t := s.outNode.Get("description"); t != nil && t.Kind == lenient.String && s.outputFields == "" {
		s.outputType += " (" + t.Str + ")"
	}
	s.Examples = make([]Example, len(examples))
	for i, e := range examples {
		var bi, bo bytes.Buffer
		if json.Compact(&bi, e.Input) != nil || json.Compact(&bo, e.Output) != nil {
			return nil, fmt.Errorf("example %d is not JSON", i+1)
		}
		e = Example{Input: bi.Bytes(), Output: bo.Bytes()}
		s.Examples[i] = e
		if err := s.in.Validate(e.Input); err != nil {
			return nil, fmt.Errorf("example %d: the input: %w", i+1, err)
		}
		if err := s.out.Validate(e.Output); err != nil {
			return nil, fmt.Errorf("example %d: the output: %w", i+1, err)
		}
	}
	if custom != "" {
		if s.custom, err = template.New(name).Parse(custom); err != nil {
			return nil, fmt.Errorf("the prompt template: %w", err)
		}
	}
	s.system = map[style]string{}
	for _, st := range []style{styleProtocol, styleJSON, styleTool} {
		if s.system[st], err = s.renderSystem(st); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// promptData is what the system prompt's template is given.
type promptData struct {
	Name, Doc, Signature     string
	OutputType, OutputFields string
	Examples                 []exampleText
	Style                    style
}

type exampleText struct{ Input, Output string }

func (s *Spec) data(st style) promptData {
	d := promptData{Name: s.Name, Doc: s.Doc, Signature: s.sig, OutputType: s.outputType, OutputFields: s.outputFields, Style: st}
	for _, e := range s.Examples {
		out := string(e.Output)
		switch st {
		case styleProtocol:
			out = "<answer>" + out + "</answer>"
		case styleJSON, styleTool:
			out = `{"answer": ` + out + `}`
		}
		d.Examples = append(d.Examples, exampleText{Input: string(e.Input), Output: out})
	}
	return d
}

func (s *Spec) renderSystem(st style) (string, error) {
	var b strings.Builder
	if err := systemTemplate.Execute(&b, s.data(st)); err != nil {
		return "", fmt.Errorf("the prompt: %w", err)
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}

// Signature returns the function's signature as a model reads it:
// classify_sentiment(text string) -> {sentiment: "positive"|"negative", confidence: number}.
// An optional input or field is marked with ?.
func (s *Spec) Signature() string { return s.sig }

// Prompt returns the whole prompt a model is given for the input in (a
// value of the ptool's input type, or its JSON as a json.RawMessage), in
// protocol mode: the system prompt, a blank line, then the user's message.
// It is the seed design's format_prompt.
func (s *Spec) Prompt(in any) (string, error) {
	raw, err := encodeInput(in)
	if err != nil {
		return "", err
	}
	msgs, err := s.messages(styleProtocol, raw, in)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(m.Content)
	}
	return b.String(), nil
}

// messages returns the request's messages for an input: the system prompt
// rendered once, and the input as the user's message; or, with a custom
// template, the template's text as the one message.
func (s *Spec) messages(st style, raw []byte, in any) ([]ptk.Message, error) {
	if s.custom != nil {
		var b strings.Builder
		if err := s.custom.Execute(&b, customData{promptData: s.data(st), Input: in, InputJSON: string(raw), Instructions: instructions(st)}); err != nil {
			return nil, fmt.Errorf("%s: the prompt template: %w", s.Name, err)
		}
		return []ptk.Message{{Role: ptk.RoleUser, Content: b.String()}}, nil
	}
	user := make([]byte, 0, len("Input: ")+len(raw))
	user = append(user, "Input: "...)
	user = append(user, raw...)
	return []ptk.Message{
		{Role: ptk.RoleSystem, Content: s.system[st]},
		{Role: ptk.RoleUser, Content: string(user)},
	}, nil
}

// customData is what a custom prompt template is given: the system prompt's
// data, the input as the caller's value (Input) and as JSON, and the
// instructions on how to answer, which the template should include.
type customData struct {
	promptData
	Input        any
	InputJSON    string
	Instructions string
}

func instructions(st style) string {
	var b strings.Builder
	_ = systemTemplate.ExecuteTemplate(&b, "instructions", promptData{Style: st})
	return strings.TrimSpace(b.String())
}

// encodeInput writes an input as compact JSON without HTML escaping.
func encodeInput(in any) ([]byte, error) {
	if raw, ok := in.(json.RawMessage); ok {
		return raw, nil
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(in); err != nil {
		return nil, fmt.Errorf("encoding the input: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
