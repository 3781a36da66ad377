package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// The grep tool's name and description; its parameters are grepArgs's
// fields.
const (
	grepName        = "grep"
	grepDescription = `Search the contents of files for a regular expression, line by line. ` +
		`The syntax is Go's RE2: no backreferences or lookaround; (?i) makes it case-insensitive; escape literal characters like \. \( \[. ` +
		`Each matching line is printed as "file:line: text", file relative to the workspace root, sorted by file and then line; long lines are cut around the match. ` +
		`path is a file or a directory to search (default: the workspace root). ` +
		`include keeps only files whose name or relative path matches a glob, e.g. "*.go", "**/*.ts" or "src/**/*.go". ` +
		`Binary files, and files ignored by .gitignore or .ptkignore, .git and node_modules, are skipped unless path names them. ` +
		`At most 200 matching lines are shown; if there are more, narrow the pattern or the path.`
)

type grepArgs struct {
	Pattern string `json:"pattern" jsonschema:"The regular expression (Go RE2 syntax)."`
	Path    string `json:"path,omitempty" jsonschema:"A file or directory to search, relative to the workspace root. Default \".\", the root."`
	Include string `json:"include,omitempty" jsonschema:"Only search files whose name or relative path matches this glob, e.g. \"*.go\"."`
}

func (w *Workspace) grep(ctx context.Context, a grepArgs) (string, error) {
	if a.Pattern == "" {
		return "", failure("pattern is required")
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return "", failf("invalid regexp: %v", err)
	}
	if a.Include != "" && !doublestar.ValidatePattern(a.Include) {
		return "", failf("invalid include glob: %s", a.Include)
	}
	if a.Include != "" {
		if err := checkGlob(a.Include); err != nil {
			return "", failf("include: %v", err)
		}
	}
	p, fi, err := w.stat(a.Path)
	if err != nil {
		return "", err
	}
	g := grepper{ctx: ctx, w: w, re: re, lit: requiredLiteral(a.Pattern)}
	hidden := 0
	switch {
	case fi.Mode().IsRegular():
		err = g.file(p)
		switch {
		case g.binary > 0:
			return "", failf("%s is a binary file", p)
		case g.special > 0:
			return "", notRegular(p, nil)
		}
	case fi.IsDir():
		wk := walker{ctx: ctx, root: w.root, ig: newIgnorer(w.root, p, true)}
		err = wk.walk(p, 0, func(q string, d iofs.DirEntry) error {
			if !d.Type().IsRegular() || a.Include != "" && !included(a.Include, relTo(p, q), q) {
				return nil
			}
			return g.file(q)
		})
		hidden = wk.hidden
	default:
		return "", notRegular(p, fi)
	}
	if err != nil && err != errStop {
		return "", err
	}

	out := &g.out
	if g.matches == 0 {
		fmt.Fprintf(out, "No matches for %s in %s (%s searched).", a.Pattern, p, count(g.files, "file", "files"))
		if hidden > 0 {
			out.WriteString(" Ignored files were skipped; name an ignored directory in path to search it.")
		}
		out.WriteString("\n")
	}
	if g.more {
		fmt.Fprintf(out, "(stopped after %d matches; there are more: narrow the pattern or the path)\n", g.matches)
	}
	if g.big > 0 {
		fmt.Fprintf(out, "(%d files larger than %d MB were not searched)\n", g.big, maxGrepFile>>20)
	}
	return strings.TrimSuffix(out.String(), "\n"), nil
}

// included reports whether the include glob matches a file, by its name if
// the glob has no "/", else by its path relative to the search directory or
// to the workspace root.
func included(glob, rel, p string) bool {
	if !strings.Contains(glob, "/") {
		return doublestar.MatchUnvalidated(glob, path.Base(p))
	}
	return doublestar.MatchUnvalidated(glob, rel) || doublestar.MatchUnvalidated(glob, p)
}

// A grepper searches files one at a time and collects the matching lines.
type grepper struct {
	ctx context.Context
	w   *Workspace
	re  *regexp.Regexp
	lit []byte       // a literal every match contains, if known
	buf bytes.Buffer // the file being searched
	out strings.Builder

	matches, files, binary, big, special int
	more                                 bool // stopped at the cap
}

// file searches the file p. It returns errStop when the output is full. A
// file with a NUL byte anywhere is binary, and is skipped; so is anything
// that is no longer a regular file when it is opened.
func (g *grepper) file(p string) error {
	if err := g.ctx.Err(); err != nil {
		return err
	}
	f, fi, err := openRegular(g.w.root, p)
	switch {
	case errors.Is(err, os.ErrClosed):
		return ErrClosed
	case errors.Is(err, errNotRegular):
		g.special++
		return nil
	case err != nil:
		return nil // gone or unreadable since it was listed
	}
	defer f.Close()
	if fi.Size() > maxGrepFile {
		g.big++
		return nil
	}
	g.buf.Reset()
	if _, err := g.buf.ReadFrom(io.LimitReader(f, maxGrepFile)); err != nil {
		return nil
	}
	data := g.buf.Bytes()
	g.files++
	if bytes.IndexByte(data, 0) >= 0 {
		g.binary++
		return nil
	}
	for n, next := 1, len(data)-checkEvery; len(data) > 0; n++ {
		if len(data) < next {
			next = len(data) - checkEvery
			if err := g.ctx.Err(); err != nil {
				return err
			}
		}
		if len(g.lit) > 0 {
			// Only lines that hold the literal can match: skip to the next.
			i := bytes.Index(data, g.lit)
			if i < 0 {
				return nil
			}
			start := bytes.LastIndexByte(data[:i], '\n') + 1
			n += bytes.Count(data[:start], newline)
			data = data[start:]
		}
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !g.re.Match(line) {
			continue
		}
		if g.matches == maxGrepMatches || g.out.Len() >= maxOutput {
			g.more = true
			return errStop
		}
		g.matches++
		fmt.Fprintf(&g.out, "%s:%d: %s\n", printable(p), n, g.excerpt(line))
	}
	return nil
}

var newline = []byte("\n")

// requiredLiteral returns a string that every match of expr contains: the
// longest case-sensitive literal of its top-level concatenation, or nil.
func requiredLiteral(expr string) []byte {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	var lit []rune
	for _, s := range subs {
		for s.Op == syntax.OpCapture {
			s = s.Sub[0]
		}
		if s.Op == syntax.OpLiteral && s.Flags&syntax.FoldCase == 0 && len(s.Rune) > len(lit) {
			lit = s.Rune
		}
	}
	if lit == nil {
		return nil
	}
	return []byte(string(lit))
}

// excerpt returns a matching line as text, cut around its first match if it
// is long.
func (g *grepper) excerpt(line []byte) string {
	if len(line) <= maxGrepLine {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	start := max(g.re.FindIndex(line)[0]-maxGrepLine/4, 0)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start--
	}
	end := min(start+maxGrepLine, len(line))
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	s := strings.ToValidUTF8(string(line[start:end]), "\uFFFD")
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}
