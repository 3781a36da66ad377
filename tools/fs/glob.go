package fs

import (
	"context"
	"fmt"
	iofs "io/fs"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// The glob tool's name and description; its parameters are globArgs's
// fields.
const (
	globName        = "glob"
	globDescription = `Find files by a glob pattern on their paths, e.g. "**/*.go", "src/**/*_test.go" or "*.{json,yaml}". ` +
		`"*" matches within one path segment, "**" any number of directories, "?" one character, "[abc]" a class, "{a,b}" alternatives. ` +
		`The pattern is matched against paths relative to path (default: the workspace root). ` +
		`Returns file paths relative to the workspace root, one per line, sorted by path; at most 500. Directories are not listed (use list_dir). ` +
		`Files ignored by .gitignore or .ptkignore, and .git and node_modules, are skipped unless path or the pattern names them.`
)

type globArgs struct {
	Pattern string `json:"pattern" jsonschema:"The glob pattern, relative to path, e.g. \"**/*.go\"."`
	Path    string `json:"path,omitempty" jsonschema:"The directory to search, relative to the workspace root. Default \".\", the root."`
}

func (w *Workspace) glob(ctx context.Context, a globArgs) (string, error) {
	if a.Pattern == "" {
		return "", failure("pattern is required")
	}
	if err := checkGlob(a.Pattern); err != nil {
		return "", err
	}
	if path.IsAbs(a.Pattern) || slices.Contains(strings.Split(a.Pattern, "/"), "..") {
		return "", failure(`the pattern must be relative and may not contain ".."; set path to search elsewhere`)
	}
	dir, err := w.dir(a.Path)
	if err != nil {
		return "", err
	}
	base, rest := doublestar.SplitPattern(a.Pattern)
	start := path.Join(dir, base)
	none := fmt.Sprintf("No files match %s in %s.", a.Pattern, dir)
	if fi, err := w.root.Stat(start); err != nil || !fi.IsDir() {
		return none, nil
	}
	wk := walker{ctx: ctx, root: w.root, ig: newIgnorer(w.root, start, true)}
	if !strings.Contains(rest, "**") {
		wk.maxDepth = strings.Count(rest, "/") + 1
	}
	var b strings.Builder
	n, shown := 0, 0 // files matched, files shown
	err = wk.walk(start, 0, func(p string, d iofs.DirEntry) error {
		if d.IsDir() || !doublestar.MatchUnvalidated(a.Pattern, relTo(dir, p)) {
			return nil
		}
		if d.Type()&iofs.ModeSymlink != 0 {
			if fi, err := w.root.Stat(p); err == nil && fi.IsDir() {
				return nil // a link to a directory is no file
			}
		}
		if n++; shown < maxGlobResults && b.Len() < maxOutput {
			b.WriteString(printable(p) + "\n")
			shown++
		}
		return nil
	})
	switch {
	case err != nil:
		return "", err
	case n == 0 && wk.hidden > 0:
		return none + " Ignored files were skipped; name an ignored directory in path to search it.", nil
	case n == 0:
		return none, nil
	case n > shown:
		fmt.Fprintf(&b, "(%d more matches not shown; narrow the pattern or set path)\n", n-shown)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// dir resolves p, which must name a directory.
func (w *Workspace) dir(p string) (string, error) {
	p, fi, err := w.stat(p)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", failf("%s is a file, not a directory; use read_file to read it", p)
	}
	return p, nil
}

// relTo returns p, a path below dir, relative to dir.
func relTo(dir, p string) string {
	if dir == "." {
		return p
	}
	return p[len(dir)+1:]
}

// maxAlternatives bounds the paths a glob's {a,b} alternatives spell
// together ({a,b}{c,d} spells four). doublestar tries them one after
// another, so that {a,a}{a,a}… costs twice as much per group: 40 groups
// would take days for each path, on a goroutine no timeout stops.
const maxAlternatives = 1024

// checkGlob reports why the glob pattern p cannot be used: it is not
// valid, or its alternatives spell more than maxAlternatives patterns.
func checkGlob(p string) error {
	if !doublestar.ValidatePattern(p) {
		return failf("invalid glob pattern: %s", p)
	}
	if n, _ := alternatives(p, 0, false); n > maxAlternatives {
		return failf("the glob pattern's {a,b} alternatives spell more than %d patterns together; use fewer groups of alternatives", maxAlternatives)
	}
	return nil
}

// alternatives counts the patterns that the alternatives of p spell from
// i on, up to the "," or "}" that ends the alternative it is in (inGroup)
// or to the end, and returns the count (more than maxAlternatives when it
// is) and where it stopped. p is a valid pattern.
func alternatives(p string, i int, inGroup bool) (int, int) {
	n := 1
	for i < len(p) {
		switch p[i] {
		case '\\':
			i += 2
		case '[': // a class: its braces are characters
			j := i + 1
			if j < len(p) && (p[j] == '!' || p[j] == '^') {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case '{':
			sum := 0
			i++
			for {
				c, next := alternatives(p, i, true)
				sum = min(sum+c, maxAlternatives+1)
				i = next
				if i >= len(p) || p[i] == '}' {
					i++
					break
				}
				i++ // the ","
			}
			n = min(n*sum, maxAlternatives+1)
		case ',', '}':
			if inGroup {
				return n, i
			}
			i++
		default:
			i++
		}
	}
	return n, i
}
