package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/ptool/celcheck"
)

type ptoolFlags struct {
	file, input string
	asJSON      bool
	models      modelFlags
	trace       traceFlags
}

func newPtoolCmd() *cobra.Command {
	var f ptoolFlags
	cmd := &cobra.Command{
		Use:   "ptool",
		Short: "List and call the typed functions a ptools file declares",
		Long: `A ptool is a typed function a model executes: a name, a doc that serves as its
prompt, and JSON Schemas for its input and its output. A ptools file declares
them:

  {"ptools": [{"name": "classify_sentiment",
    "doc": "Classify the emotional tone of a product review.",
    "input": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "output": {"type": "string", "enum": ["positive", "negative", "neutral"]},
    "model": "gpt-4o-mini",
    "examples": [{"input": {"text": "Broke after a day."}, "output": "negative"}]}]}

'ptk ptool list' prints their signatures; 'ptk ptool call NAME --input JSON'
asks the model and prints the answer, checked against the output schema.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.file, "ptools", "ptools.json", "the ptools file")
	pf.BoolVar(&f.asJSON, "json", false, "print JSON: the list's specs, or the call's whole record")

	list := &cobra.Command{
		Use:   "list",
		Short: "Print the signature and doc of each ptool of the file",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return ptoolList(cmd, f) },
	}
	call := &cobra.Command{
		Use:   "call NAME --input JSON",
		Short: "Call a ptool of the file and print its answer",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return ptoolCall(cmd, f, args[0]) },
	}
	fl := call.Flags()
	fl.StringVar(&f.input, "input", "", "the input, a JSON object; - reads it from stdin")
	f.models.add(fl)
	addTraceFlags(fl, &f.trace, false)
	cmd.AddCommand(list, call, newPtoolEvalCmd(&f))
	return cmd
}

func ptoolList(cmd *cobra.Command, f ptoolFlags) error {
	defs, err := ptool.ReadDefs(f.file)
	if err != nil {
		return usageError{err}
	}
	var specs []*ptool.Spec
	for _, d := range defs {
		p, err := d.New(ptool.WithModel(noModel{}), withCEL)
		if err != nil {
			return usageError{fmt.Errorf("%s: %w", f.file, err)}
		}
		specs = append(specs, p.Spec())
	}
	out := cmd.OutOrStdout()
	if f.asJSON {
		type item struct {
			Name      string          `json:"name"`
			Signature string          `json:"signature"`
			Doc       string          `json:"doc"`
			Model     string          `json:"model,omitempty"`
			Input     json.RawMessage `json:"input"`
			Output    json.RawMessage `json:"output"`
		}
		items := make([]item, len(specs))
		for i, s := range specs {
			items[i] = item{s.Name, s.Signature(), s.Doc, defs[i].Model, s.Input, s.Output}
		}
		e := json.NewEncoder(out)
		e.SetEscapeHTML(false)
		e.SetIndent("", "  ")
		return e.Encode(items)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for i, s := range specs {
		model := defs[i].Model
		if model == "" {
			model = "-"
		}
		fmt.Fprintf(w, "%s\t%s\n", s.Signature(), model)
		for line := range strings.SplitSeq(s.Doc, "\n") {
			fmt.Fprintf(w, "    %s\t\n", line)
		}
	}
	return w.Flush()
}

// withCEL gives the checks of ptools files CEL for their expressions.
var withCEL = ptool.WithLanguage(celcheck.Language{})

// noModel stands in for a model where none is asked: listing ptools.
type noModel struct{}

func (noModel) Generate(context.Context, llm.Request) (*llm.Response, error) {
	return nil, errors.New("no model")
}

func ptoolCall(cmd *cobra.Command, f ptoolFlags, name string) error {
	defs, err := ptool.ReadDefs(f.file)
	if err != nil {
		return usageError{err}
	}
	var def *ptool.Def
	var names []string
	for i := range defs {
		names = append(names, defs[i].Name)
		if defs[i].Name == name {
			def = &defs[i]
		}
	}
	if def == nil {
		return usagef("%s declares no ptool %q (it has: %s)", f.file, name, strings.Join(names, ", "))
	}
	input := []byte(f.input)
	if f.input == "-" {
		var b bytes.Buffer
		if _, err := b.ReadFrom(cmd.InOrStdin()); err != nil {
			return err
		}
		input = b.Bytes()
	}
	if !json.Valid(input) {
		return usagef("--input must be a JSON object, as %s's input schema says", name)
	}
	models, err := f.models.open(cmd)
	if err != nil {
		return err
	}
	defer models.close()
	m, err := models.resolve(def.Model)
	if err != nil {
		return err
	}
	record, stopRecording, err := ptoolRecorder(cmd, f.trace)
	if err != nil {
		return err
	}
	defer stopRecording()
	opts := append([]ptool.Option{ptool.WithModel(m), record, withCEL}, f.models.ptoolOptions()...)
	p, err := def.New(opts...)
	if err != nil {
		return usageError{err}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	out, rec, err := p.CallJSON(ctx, input)
	if f.asJSON && rec != nil {
		e := json.NewEncoder(cmd.OutOrStdout())
		e.SetEscapeHTML(false)
		e.SetIndent("", "  ")
		if eerr := e.Encode(rec); eerr != nil {
			return eerr
		}
		return err
	}
	if rec != nil {
		for i, a := range rec.Attempts {
			for _, p := range a.Problems {
				fmt.Fprintf(cmd.ErrOrStderr(), "attempt %d: %s\n", i+1, p)
			}
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d attempt(s), %s mode, %d+%d tokens, $%.6f, %s\n", name, len(rec.Attempts), rec.Mode,
			rec.Usage.PromptTokens, rec.Usage.CompletionTokens, rec.Cost, rec.Latency.Round(1e6))
	}
	if err != nil {
		return err
	}
	var s string
	if json.Unmarshal(out, &s) == nil {
		fmt.Fprintln(cmd.OutOrStdout(), s)
		return nil
	}
	var b bytes.Buffer
	if json.Indent(&b, out, "", "  ") != nil {
		b.Reset()
		b.Write(out)
	}
	fmt.Fprintln(cmd.OutOrStdout(), b.String())
	return nil
}
