package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptkit/ptk/internal/markdown"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated parts of docs/")

// repoRoot is the repository, from cmd/ptk.
var repoRoot = filepath.Join("..", "..")

// commandLine is a `ptk …` command written in the documentation.
type commandLine struct {
	where string   // file:line
	text  string   // as written
	args  []string // the words after ptk
	// mention is a code span in prose: it names a command and its flags
	// (`ptk run --conversation`) without being a whole command line.
	mention bool
}

// shellFences are the info strings of blocks that hold command lines.
// (A diagram or a program's output goes in a text block.)
var shellFences = []string{"", "sh", "bash", "shell", "console"}

// docCommands extracts every ptk command line from the Markdown files
// under the repository: in shell blocks, the lines (and the parts of a
// pipeline) that run ptk — as ptk, or go run ./cmd/ptk — after any VAR=value
// words; and code spans that start with "ptk ".
func docCommands(t *testing.T) []commandLine {
	t.Helper()
	files, err := markdown.Files(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	var out []commandLine
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, f)
		doc := markdown.Parse(string(data))
		for _, fence := range doc.Fences {
			if !slices.Contains(shellFences, fence.Info) {
				continue
			}
			for _, line := range joinContinued(fence.Lines) {
				for _, args := range ptkInvocations(line.text) {
					out = append(out, commandLine{fmt.Sprintf("%s:%d", rel, fence.Line+1+line.n), line.text, args, false})
				}
			}
		}
		for _, s := range doc.Spans {
			if strings.HasPrefix(s.Text, "ptk ") {
				for _, args := range ptkInvocations(s.Text) {
					out = append(out, commandLine{fmt.Sprintf("%s:%d", rel, s.Line), s.Text, args, true})
				}
			}
		}
	}
	return out
}

type numbered struct {
	n    int // index of the first line in the block
	text string
}

// joinContinued joins lines ending in a backslash with the next.
func joinContinued(lines []string) []numbered {
	var out []numbered
	for i := 0; i < len(lines); i++ {
		start, text := i, lines[i]
		for strings.HasSuffix(strings.TrimRight(text, " "), `\`) && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(strings.TrimRight(text, " "), `\`) + " " + strings.TrimSpace(lines[i])
		}
		out = append(out, numbered{start, text})
	}
	return out
}

var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// ptkInvocations returns the arguments of each ptk a shell line runs.
func ptkInvocations(line string) [][]string {
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "$ "))
	words := shellWords(line)
	var out [][]string
	var seg []string
	flush := func() {
		for len(seg) > 0 && envAssign.MatchString(seg[0]) {
			seg = seg[1:]
		}
		switch {
		case len(seg) > 0 && seg[0] == "ptk":
			out = append(out, seg[1:])
		case len(seg) > 2 && seg[0] == "go" && seg[1] == "run" && (seg[2] == "./cmd/ptk" || strings.HasPrefix(seg[2], "github.com/ptkit/ptk/cmd/ptk")):
			out = append(out, seg[3:])
		}
		seg = nil
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "|" || w == "||" || w == "&&" || w == ";" || w == "&":
			flush()
		case w == "#" || strings.HasPrefix(w, "#"):
			i = len(words) // a comment
		case strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "&>"):
			if strings.TrimLeft(w, "<>&2") == "" {
				i++ // the redirection's file is the next word
			}
		default:
			seg = append(seg, w)
		}
	}
	flush()
	return out
}

// shellWords splits a line as a shell does, enough for documentation:
// quotes group, operators stand alone when written apart.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in := false // a word is being built
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// placeholder is a value written as a name: N, FILE, D, USD, URL…
var placeholder = regexp.MustCompile(`^[A-Z][A-Z0-9_.]*$|…|\.\.\.`)

// checkCommand parses args as ptk would, without running anything, and
// says what ptk would refuse: an unknown command or flag, a flag value of
// the wrong type, arguments the command does not take. A mention is
// checked for its command and flags only.
func checkCommand(args []string, mention bool) error {
	// Optional parts of a synopsis ([--json]) are checked as if given.
	var words []string
	for _, a := range args {
		a = strings.Trim(a, "[]")
		if a == "" || a == "flags" || a == "options" || a == "|" {
			continue
		}
		words = append(words, a)
	}
	root := newRoot(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	cmd, rest, err := root.Find(words)
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	if cmd == root && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return fmt.Errorf("unknown command %q", rest[0])
	}
	rest = fillPlaceholders(cmd, rest)
	if mention && len(rest) > 0 && strings.HasPrefix(rest[len(rest)-1], "--") && !strings.Contains(rest[len(rest)-1], "=") {
		if f := cmd.Flags().Lookup(strings.TrimPrefix(rest[len(rest)-1], "--")); f != nil && f.Value.Type() != "bool" {
			rest = append(rest, "1") // a flag named, its value left out
		}
	}
	if err := cmd.ParseFlags(rest); errors.Is(err, pflag.ErrHelp) {
		return nil // --help, as ptk run --help
	} else if err != nil {
		return err
	}
	if mention {
		return nil
	}
	positional := cmd.Flags().Args()
	if cmd.HasAvailableSubCommands() && len(positional) > 0 {
		return fmt.Errorf("%q is not a command of %q", positional[0], cmd.CommandPath())
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, positional); err != nil {
			return err
		}
	}
	return nil
}

// fillPlaceholders gives typed flags a value of their type where the line
// has a placeholder (--max-iterations N, --timeout D).
func fillPlaceholders(cmd *cobra.Command, args []string) []string {
	sample := map[string]string{"int": "1", "int64": "1", "float64": "0.5", "duration": "1s", "bool": "true", "uint": "1"}
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		f := cmd.Flags().Lookup(name)
		if f == nil {
			if f = cmd.InheritedFlags().Lookup(name); f == nil {
				continue
			}
		}
		s, typed := sample[f.Value.Type()]
		switch {
		case hasVal && typed && placeholder.MatchString(val):
			out[i] = "--" + name + "=" + s
		case !hasVal && f.Value.Type() != "bool" && i+1 < len(out):
			if typed && placeholder.MatchString(out[i+1]) {
				out[i+1] = s
			}
			i++
		}
	}
	return out
}

// TestDocsCommandLines: every ptk command line in the README and docs/ is
// one ptk accepts — its subcommands and flags exist, flag values have
// their type — checked with cobra's own parsing, nothing run.
func TestDocsCommandLines(t *testing.T) {
	lines := docCommands(t)
	if len(lines) < 50 {
		t.Fatalf("found only %d ptk command lines: is the extraction broken?", len(lines))
	}
	t.Logf("%d command lines that run ptk, in the README and docs/", len(lines))
	for _, l := range lines {
		if err := checkCommand(l.args, l.mention); err != nil {
			t.Errorf("%s: ptk %s\n\t%s\n\tptk refuses it: %v", l.where, strings.Join(l.args, " "), l.text, err)
		}
	}
}

// The checker refuses what ptk refuses.
func TestCheckCommand(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{`ptk run --model qwen3:8b "What does this repository do?"`, true},
		{`git diff | ptk run "Review this change"`, true},
		{`PTK_BASE_URL=http://localhost:8080/v1 ptk run --model any "List the Go files"`, true},
		{`echo '<tool_call>{}</tool_call>' | go run ./cmd/ptk parse --json`, true},
		{`ptk run [--max-iterations N] [--timeout D] [--json] PROMPT`, true},
		{`ptk traces list --kind agent --status error --since 1h   # a table`, true},
		{`ptk traces export > runs.jsonl`, true},
		{`ptk help environment`, true},
		{`ptk --version`, true},
		{`ptk completion bash --help`, true},
		{`ptk workflow run trace.json --modes ptk`, false},
		{`ptk run --no-such-flag x`, false},
		{`ptk runn x`, false},
		{`ptk traces lisst`, false},
		{`ptk run --max-iterations ten x`, false},
		{`ptk conversations show`, false},
	} {
		inv := ptkInvocations(tc.line)
		if len(inv) != 1 {
			t.Errorf("%s: %d invocations found", tc.line, len(inv))
			continue
		}
		if err := checkCommand(inv[0], false); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.line, err, tc.ok)
		}
	}
}

// TestREADMECommandsRunInCI: the README's blocks marked
// <!-- .ci/run runs this --> are run by .ci/run, word for word (ptk may be
// the built binary "$bin" or go run ./cmd/ptk there).
func TestREADMECommandsRunInCI(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	doc := markdown.Parse(string(readme))
	marked := 0
	for _, f := range doc.Fences {
		if !strings.Contains(doc.Comments[f.Line-1], ".ci/run runs this") {
			continue
		}
		marked++
		for _, line := range f.Lines {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			variants := []string{line}
			if rest, ok := strings.CutPrefix(line, "ptk "); ok {
				variants = append(variants, `"$bin" `+rest, "go run ./cmd/ptk "+rest)
			}
			if before, after, ok := strings.Cut(line, "| ptk "); ok {
				variants = append(variants, before+`| "$bin" `+after, before+"| go run ./cmd/ptk "+after)
			}
			found := false
			for _, v := range variants {
				found = found || bytes.Contains(ci, []byte(v))
			}
			if !found {
				t.Errorf("README.md:%d: .ci/run does not run %q", f.Line, line)
			}
		}
	}
	if marked < 2 {
		t.Errorf("%d blocks of the README are marked <!-- .ci/run runs this -->; the main command and the tests should be", marked)
	}
}
