package distill

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
)

// The model is asked through two ptools: one describes the patterns in the
// training examples, the other writes the code. Their docs, and the
// feedback on a rejected candidate, are the templates in prompts/.

//go:embed prompts/*.tmpl
var promptFiles embed.FS

var prompts = template.Must(template.New("").Funcs(template.FuncMap{"join": strings.Join}).ParseFS(promptFiles, "prompts/*.tmpl"))

func render(name string, data any) string {
	var b bytes.Buffer
	if err := prompts.ExecuteTemplate(&b, name, data); err != nil {
		panic(err) // the templates are ptk's own, tested
	}
	return strings.TrimSpace(b.String())
}

type patternsIn struct {
	Signature string `json:"signature" jsonschema:"the function's signature"`
	Doc       string `json:"doc" jsonschema:"what the function does"`
	Examples  string `json:"examples" jsonschema:"numbered input and output pairs it answered, one a line"`
}

// Pattern is a rule the model saw in the training examples.
type Pattern struct {
	Rule string `json:"rule" jsonschema:"the rule in a sentence: which inputs, which output (or: only a model can decide)"`
	// Examples are the numbers of the training examples that follow it,
	// from 1, as they were shown.
	Examples []int `json:"examples" jsonschema:"the numbers of the examples that follow the rule, at least one"`
}

type patternsOut struct {
	Patterns []Pattern `json:"patterns" jsonschema:"the patterns, each with its examples"`
}

type codeIn struct {
	Signature string `json:"signature" jsonschema:"the function's signature"`
	Doc       string `json:"doc" jsonschema:"what the function does"`
	Types     string `json:"types" jsonschema:"the Go types In and Out, already declared in the package"`
	Examples  string `json:"examples" jsonschema:"numbered input and output pairs it answered, one a line"`
	Patterns  string `json:"patterns" jsonschema:"the patterns seen in the examples"`
	Feedback  string `json:"feedback,omitempty" jsonschema:"what was wrong with the previous code"`
}

// Candidate is a model's code and its tests.
type Candidate struct {
	Code string `json:"code" jsonschema:"a whole Go file of package distilled declaring func Distilled(ctx context.Context, in In) (Out, error)"`
	Test string `json:"test" jsonschema:"a whole Go test file of package distilled: a table test of Distilled built from the examples"`
}

type generator struct {
	patternsFn *ptool.PTool[patternsIn, patternsOut]
	codeFn     *ptool.PTool[codeIn, Candidate]
	t          Target
	types      string
	shown      []Example // the training examples shown, numbered from 1
	examples   string
	// calls are the model calls of the two ptools, until taken.
	calls callLog
}

func newGenerator(m llm.Model, t Target, types string, train []Example, max int) *generator {
	shown := train[:min(max, len(train))]
	var b strings.Builder
	for i, e := range shown {
		line, _ := json.Marshal(e)
		fmt.Fprintf(&b, "%d. %s\n", i+1, line)
	}
	// one memory for both: a server that ignores response_format, found
	// out by the first, is asked in the protocol at once by the second
	g := &generator{t: t, types: types, shown: shown, examples: b.String()}
	opts := []ptool.Option{ptool.WithModel(m), ptool.WithMaxAttempts(2), ptool.WithMemory(&llm.NativeTools{}), ptool.WithObserver(g.calls.observe)}
	g.patternsFn = ptool.New[patternsIn, patternsOut]("describe_patterns", render("patterns.tmpl", nil), opts...)
	g.codeFn = ptool.New[codeIn, Candidate]("write_distilled_code", render("code.tmpl", map[string]any{"Allowed": Allowed}), opts...)
	return g
}

func (g *generator) doc() string {
	if g.t.Doc == "" {
		return g.t.Name
	}
	return g.t.Doc
}

// patterns asks for the patterns and keeps those that name examples shown;
// it fails when none does.
func (g *generator) patterns(ctx context.Context) ([]Pattern, error) {
	out, err := g.patternsFn.Call(ctx, patternsIn{Signature: g.t.Signature, Doc: g.doc(), Examples: g.examples})
	if err != nil {
		return nil, err
	}
	var kept []Pattern
	for _, p := range out.Patterns {
		var ex []int
		for _, n := range p.Examples {
			if n >= 1 && n <= len(g.shown) && !slices.Contains(ex, n) {
				ex = append(ex, n)
			}
		}
		if strings.TrimSpace(p.Rule) != "" && len(ex) > 0 {
			kept = append(kept, Pattern{Rule: strings.TrimSpace(p.Rule), Examples: ex})
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("the model described %d pattern(s), none with a rule and the number of an example shown (1 to %d)", len(out.Patterns), len(g.shown))
	}
	return kept, nil
}

// patternText is the patterns as the code prompt shows them.
func patternText(ps []Pattern) string {
	var b strings.Builder
	for i, p := range ps {
		nums := make([]string, len(p.Examples))
		for j, n := range p.Examples {
			nums[j] = fmt.Sprint(n)
		}
		fmt.Fprintf(&b, "%d. %s (examples %s)\n", i+1, p.Rule, strings.Join(nums, ", "))
	}
	return b.String()
}

func (g *generator) code(ctx context.Context, patterns []Pattern, feedback string) (Candidate, error) {
	return g.codeFn.Call(ctx, codeIn{Signature: g.t.Signature, Doc: g.doc(), Types: g.types,
		Examples: g.examples, Patterns: patternText(patterns), Feedback: feedback})
}
