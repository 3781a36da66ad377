package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/protocol"
)

func newParseCmd() *cobra.Command {
	var toolsFile string
	var chunk int
	var asJSON, think bool
	cmd := &cobra.Command{
		Use:   "parse [--tools FILE] [--chunk N] [--json] [--think] [FILE]",
		Short: "Read a model's reply and print the tool calls in it",
		Long: `parse reads a model's reply (FILE, or standard input) and prints what it
means: the calls, the text for the user, and diagnostics (repairs, invalid or
cut-off calls). With --tools, calls are validated against the tools' JSON
Schemas, and bare JSON counts as a call only when it names one of them.

--chunk N feeds the streaming parser N bytes at a time; the result is the
same as for the whole reply. --think says the reply starts inside a
reasoning block, as with models whose chat template opens <think> itself.

With --json the output is one JSON object:
  {"calls":[{"id":"…","tool":"…","args":{…},"repairs":["…"]}],"text":"…",
   "diagnostics":[{"kind":"…","message":"…","offset":N}]}`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("parse takes at most one FILE, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if chunk < 0 {
				return usagef("--chunk must be 0 (whole) or a positive number of bytes, got %d", chunk)
			}
			tools, err := loadTools(toolsFile)
			if err != nil {
				return err
			}
			var opts []protocol.Option
			if think {
				opts = append(opts, protocol.StartInThink())
			}
			p, err := protocol.NewParser(tools, opts...)
			if err != nil {
				return usagef("--tools %s: %v", toolsFile, err)
			}
			in := cmd.InOrStdin()
			if len(args) == 1 && args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return usageError{err}
				}
				defer f.Close()
				in = f
			}
			data, err := io.ReadAll(in)
			if err != nil {
				return fmt.Errorf("reading the reply: %w", err)
			}
			var res protocol.Parsed
			if chunk == 0 {
				res = p.Parse(string(data))
			} else {
				s := p.NewStream(nil)
				for i := 0; i < len(data); i += chunk {
					s.Write(data[i:min(i+chunk, len(data))])
				}
				res = s.Finish()
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			writeHuman(cmd.OutOrStdout(), res)
			return nil
		},
	}
	cmd.Flags().StringVar(&toolsFile, "tools", "", "JSON file of tool definitions")
	cmd.Flags().IntVar(&chunk, "chunk", 0, "feed the streaming parser N bytes at a time")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the parse as JSON")
	cmd.Flags().BoolVar(&think, "think", false, "the reply starts inside a reasoning block (templates that open <think> themselves)")
	return cmd
}

func loadTools(file string) ([]ptk.ToolInfo, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usageError{err}
	}
	tools, err := protocol.ParseToolDefs(data)
	if err != nil {
		return nil, usagef("--tools %s: %v", file, err)
	}
	return tools, nil
}

type jsonCall struct {
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Repairs []string        `json:"repairs"`
}

type jsonDiag struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Offset  int    `json:"offset"`
}

type jsonParse struct {
	Calls       []jsonCall `json:"calls"`
	Text        string     `json:"text"`
	Diagnostics []jsonDiag `json:"diagnostics"`
}

func writeJSON(w io.Writer, res protocol.Parsed) error {
	out := jsonParse{Calls: []jsonCall{}, Text: res.Text, Diagnostics: []jsonDiag{}}
	for _, c := range res.Calls {
		rep := c.Repairs
		if rep == nil {
			rep = []string{}
		}
		out.Calls = append(out.Calls, jsonCall{ID: c.ID, Tool: c.Tool, Args: c.Args, Repairs: rep})
	}
	for _, d := range res.Diagnostics {
		out.Diagnostics = append(out.Diagnostics, jsonDiag{Kind: string(d.Kind), Message: d.Message, Offset: d.Offset})
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func writeHuman(w io.Writer, res protocol.Parsed) {
	if res.Text != "" {
		fmt.Fprintln(w, res.Text)
	}
	for _, a := range res.Attempts {
		status := "ok"
		if a.Err != nil {
			status = string(a.Err.Code)
		}
		fmt.Fprintf(w, "call %s %s %s [%s]\n", a.Call.ID, a.Call.Tool, a.Call.Args, status)
		for _, r := range a.Call.Repairs {
			fmt.Fprintf(w, "  repaired: %s\n", r)
		}
		if a.Err != nil {
			fmt.Fprintf(w, "  error: %s\n", a.Err.Message)
		}
	}
	for _, d := range res.Diagnostics {
		if d.CallID != "" {
			continue
		}
		fmt.Fprintf(w, "%s at byte %d: %s\n", d.Kind, d.Offset, strings.TrimSpace(d.Message))
	}
}
