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
	if !doublestar.ValidatePattern(a.Pattern) {
		return "", failf("invalid glob pattern: %s", a.Pattern)
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
