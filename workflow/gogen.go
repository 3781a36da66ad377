package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/format"
	"strconv"
	"strings"

	"github.com/ptkit/ptk/ptool"
)

// Call calls the ptool called name in reg with input (a value that
// marshals to the input object) and returns its output as JSON: what a
// program written from a trace (GoProgram) calls for each step.
func Call(ctx context.Context, reg *ptool.Registry, name string, input any) (json.RawMessage, error) {
	if _, ok := reg.Lookup(name); !ok {
		return nil, fmt.Errorf("no ptool %q is registered", name)
	}
	b, err := json.Marshal(input)
	if err != nil {
		return nil, err
	}
	s := Step{PTool: name, Input: b}
	RunStep(ctx, reg, &s)
	if s.Status != StatusCompleted {
		return nil, fmt.Errorf("%s: %s", name, s.Error)
	}
	return s.Result, nil
}

// At returns the value at path (a JSON Pointer) in a step's output, as
// JSON: a reference, resolved in a program written by GoProgram.
func At(output json.RawMessage, path string) (json.RawMessage, error) {
	v, err := decodeValue(output)
	if err != nil {
		return nil, err
	}
	x, err := pointerGet(v, path)
	if err != nil {
		return nil, fmt.Errorf("the output has no %s: %v", path, err)
	}
	return json.Marshal(x)
}

// GoProgram renders t as a Go program (package main) that calls its steps'
// ptools by name through a registry, in order, each reference resolved
// from the output of the step it names, and prints the last output. The
// ptools come from a ptools file (ptool.LoadRegistry) named by the
// program's argument; each is answered by the model its definition names,
// or the one -model (PTK_MODEL) names, at the server -base-url
// (PTK_BASE_URL) names with the key -api-key (PTK_API_KEY) gives, resolved
// as ptk resolves --model (catalog.Choose, with -models (PTK_MODELS) laid
// over ptk's catalog).
func GoProgram(t *Trace) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Command %s runs the workflow of trace %s.\n//\n", "main", t.ID)
	for line := range strings.SplitSeq(t.Goal, "\n") {
		fmt.Fprintf(&b, "// Goal: %s\n", line)
	}
	b.WriteString(`//
// Usage: program [-model NAME] [-base-url URL] [-api-key KEY] [-models FILE] PTOOLS.json
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/catalog"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/ptool/celcheck"
	"github.com/ptkit/ptk/workflow"
)

func main() {
	model := flag.String("model", os.Getenv("PTK_MODEL"), "the model every ptool asks: a name in ptk's model catalog, else a model of the server at -base-url; several, comma-separated, are a fallback (env PTK_MODEL; default each ptool's own, then the catalog's default)")
	baseURL := flag.String("base-url", os.Getenv("PTK_BASE_URL"), "an OpenAI-compatible server, in place of the catalog's (env PTK_BASE_URL)")
	apiKey := flag.String("api-key", os.Getenv("PTK_API_KEY"), "an API key, in place of the provider's variable (env PTK_API_KEY)")
	models := flag.String("models", os.Getenv("PTK_MODELS"), "a model catalog file laid over ptk's (env PTK_MODELS)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s [flags] PTOOLS.json\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	cat := catalog.Default()
	var err error
	if *models != "" {
		var over *catalog.Catalog
		if over, err = catalog.Load(*models); err == nil {
			cat = cat.Merge(over)
		}
	}
	var reg *ptool.Registry
	if err == nil {
		reg, err = ptool.LoadRegistry(flag.Arg(0), func(name string) (llm.Model, error) {
			return cat.Choose(cmp.Or(*model, name, cat.DefaultModel), catalog.Options{BaseURL: *baseURL, APIKey: *apiKey})
		}, ptool.WithLanguage(celcheck.Language{}))
	}
	if err == nil {
		var out json.RawMessage
		if out, err = run(context.Background(), reg); err == nil {
			fmt.Println(string(out))
			return
		}
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func run(ctx context.Context, reg *ptool.Registry) (json.RawMessage, error) {
`)
	used := map[int]bool{}
	for i := range t.Steps {
		args, _ := decodeArgs(t.Steps[i].Args)
		walkRefs(args, "", func(r refAt) { used[t.Index(r.Step)] = true }, func(string, string) {})
	}
	var last string
	for i := range t.Steps {
		st := &t.Steps[i]
		id := t.StepID(i)
		v := goIdent(id, i)
		args, err := decodeArgs(st.Args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		if st.Goal != "" {
			fmt.Fprintf(&b, "\t// %s: %s\n", id, strings.Join(strings.Fields(st.Goal), " "))
		}
		// references first, each its own variable
		n := 0
		var refErr error
		lit, _ := substitute(args, func(r Reference) (any, error) {
			j := t.Index(r.Step)
			if j < 0 || j >= i {
				refErr = fmt.Errorf("%s refers to %s, which does not come before it", id, r.Step)
				return nil, nil
			}
			name := fmt.Sprintf("%s_%d", v, n)
			n++
			src := goIdent(t.StepID(j), j)
			if r.Path == "" {
				fmt.Fprintf(&b, "\t%s := %s\n", name, src)
			} else {
				fmt.Fprintf(&b, "\t%s, err := workflow.At(%s, %s)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"%s: %%w\", err)\n\t}\n", name, src, strconv.Quote(r.Path), id)
			}
			return goCode(name), nil
		})
		if refErr != nil {
			return nil, refErr
		}
		call := fmt.Sprintf("workflow.Call(ctx, reg, %s, %s)", strconv.Quote(st.PTool), goValue(lit))
		if !used[i] && i < len(t.Steps)-1 {
			fmt.Fprintf(&b, "\tif _, err := %s; err != nil {\n\t\treturn nil, err\n\t}\n", call)
			continue
		}
		fmt.Fprintf(&b, "\t%s, err := %s\n\tif err != nil {\n\t\treturn nil, err\n\t}\n", v, call)
		last = v
	}
	if last == "" {
		b.WriteString("\treturn nil, nil\n}\n")
	} else {
		fmt.Fprintf(&b, "\treturn %s, nil\n}\n", last)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return b.Bytes(), fmt.Errorf("workflow: the program does not format: %w", err)
	}
	return src, nil
}

// goCode is Go source standing for a value in goValue.
type goCode string

func goIdent(id string, i int) string {
	var b strings.Builder
	for _, r := range id {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' && b.Len() > 0 {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "step" + strconv.Itoa(i)
	}
	return "s_" + b.String()
}

// goValue writes a decoded JSON value as a Go expression that marshals to
// it: maps and slices of any, json.RawMessage for literals.
func goValue(v any) string {
	switch x := v.(type) {
	case goCode:
		return string(x)
	case map[string]any:
		var b strings.Builder
		b.WriteString("map[string]any{")
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(k) + ": " + goValue(x[k]))
		}
		b.WriteString("}")
		return b.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = goValue(e)
		}
		return "[]any{" + strings.Join(parts, ", ") + "}"
	}
	raw, _ := json.Marshal(v)
	return "json.RawMessage(" + strconv.Quote(string(raw)) + ")"
}
