package distill

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
)

// The model is asked through two ptools: one describes the patterns in the
// examples, the other writes the code.

type patternsIn struct {
	Signature string `json:"signature" jsonschema:"the function's signature"`
	Doc       string `json:"doc" jsonschema:"what the function does"`
	Examples  string `json:"examples" jsonschema:"input and output pairs it answered, one JSON object a line"`
}

type codeIn struct {
	Signature string `json:"signature" jsonschema:"the function's signature"`
	Doc       string `json:"doc" jsonschema:"what the function does"`
	Types     string `json:"types" jsonschema:"the Go types In and Out, already declared in the package"`
	Examples  string `json:"examples" jsonschema:"input and output pairs it answered, one JSON object a line"`
	Patterns  string `json:"patterns" jsonschema:"the patterns seen in the examples"`
	Feedback  string `json:"feedback,omitempty" jsonschema:"what was wrong with the previous code"`
}

// Candidate is a model's code and its tests.
type Candidate struct {
	Code string `json:"code" jsonschema:"a whole Go file of package distilled declaring func Distilled(ctx context.Context, in In) (Out, error)"`
	Test string `json:"test" jsonschema:"a whole Go test file of package distilled: a table test of Distilled built from the examples"`
}

const patternsDoc = `Study the examples of a function that a language model answers, and describe
the patterns you see: which inputs map to which outputs, by what rule, and
which inputs no simple rule decides. Be precise: the description is used to
write plain code that answers the clear cases.`

const codeDoc = `Write plain Go code that answers as the function does, for the inputs whose
answer follows a clear rule. The code is a whole Go file of package
distilled, which imports what it needs (the standard library and
"github.com/ptkit/ptk/ptool" only) and declares

	func Distilled(ctx context.Context, in In) (Out, error)

The types In and Out are already declared in the package: do not declare
them again. Whenever the code is not sure of the answer it returns
ptool.ErrFallback, and a model answers instead: a fallback costs a model
call, a wrong answer is a bug. The code must not use the network, files,
processes or randomness, and must return promptly.

Also write a test file of package distilled: a table test of Distilled
built from the examples, where an example whose answer the code leaves to
the model expects ptool.ErrFallback.`

type generator struct {
	patternsFn *ptool.PTool[patternsIn, string]
	codeFn     *ptool.PTool[codeIn, Candidate]
	t          Target
	types      string
	examples   string
}

func newGenerator(m llm.Model, t Target, types string, train []Example, max int) *generator {
	var b strings.Builder
	for i, e := range train {
		if i == max {
			break
		}
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	opts := []ptool.Option{ptool.WithModel(m), ptool.WithMaxAttempts(2)}
	return &generator{
		patternsFn: ptool.New[patternsIn, string]("describe_patterns", patternsDoc, opts...),
		codeFn:     ptool.New[codeIn, Candidate]("write_distilled_code", codeDoc, opts...),
		t:          t, types: types, examples: b.String(),
	}
}

func (g *generator) doc() string {
	if g.t.Doc == "" {
		return g.t.Name
	}
	return g.t.Doc
}

func (g *generator) patterns(ctx context.Context) (string, error) {
	return g.patternsFn.Call(ctx, patternsIn{Signature: g.t.Signature, Doc: g.doc(), Examples: g.examples})
}

func (g *generator) code(ctx context.Context, patterns, feedback string) (Candidate, error) {
	return g.codeFn.Call(ctx, codeIn{Signature: g.t.Signature, Doc: g.doc(), Types: g.types,
		Examples: g.examples, Patterns: patterns, Feedback: feedback})
}
