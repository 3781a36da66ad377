package fs

import (
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// errStop ends a walk early without error.
var errStop = errors.New("stop")

// A walker visits a directory tree of the workspace in path order, leaving
// out what the ignore rules hide and the temporary files of writes. It never
// follows a symbolic link to a directory, so a walk ends even on a tree with
// link loops, and never opens a directory that has become something else.
type walker struct {
	ctx      context.Context
	root     *os.Root
	ig       *ignorer
	maxDepth int // levels below the start to visit; 0 for no limit
	seen     int // entries visited, to check ctx now and then
	hidden   int // entries the ignore rules left out
}

// walk calls visit for each entry below dir, depth levels below the start.
// Entries come sorted by their full path, so a directory's contents come
// after a sibling file whose name extends the directory's ("a.go" before
// "a/b.go"). An error from visit, errStop included, ends the walk.
// Directories that cannot be read are skipped.
func (w *walker) walk(dir string, depth int, visit func(p string, d iofs.DirEntry) error) error {
	entries, err := readDir(w.root, dir)
	if errors.Is(err, os.ErrClosed) {
		return ErrClosed
	}
	entries = slices.DeleteFunc(entries, func(d iofs.DirEntry) bool { return isTemp(d.Name()) })
	slices.SortFunc(entries, func(a, b iofs.DirEntry) int { return strings.Compare(pathKey(a), pathKey(b)) })
	for _, d := range entries {
		if w.seen++; w.seen%64 == 0 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		p := path.Join(dir, d.Name())
		if w.ig.ignored(p, d.IsDir()) {
			w.hidden++
			continue
		}
		if err := visit(p, d); err != nil {
			return err
		}
		if d.IsDir() && (w.maxDepth == 0 || depth+1 < w.maxDepth) {
			if err := w.walk(p, depth+1, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

// pathKey is what an entry sorts by: a directory's name as the prefix of its
// contents' paths.
func pathKey(d iofs.DirEntry) string {
	if d.IsDir() {
		return d.Name() + "/"
	}
	return d.Name()
}

// Files returns the workspace's files as its tools see them, ignored files
// and .git left out, in path order: at most limit of them (0: no limit),
// and whether there were more. A front end completes paths from it.
func (w *Workspace) Files(ctx context.Context, limit int) (files []string, more bool, err error) {
	if w.closed.Load() {
		return nil, false, ErrClosed
	}
	wk := walker{ctx: ctx, root: w.root, ig: newIgnorer(w.root, ".", true)}
	err = wk.walk(".", 0, func(p string, d iofs.DirEntry) error {
		if d.IsDir() || slices.ContainsFunc(strings.Split(p, "/"), isGit) {
			return nil
		}
		if limit > 0 && len(files) == limit {
			more = true
			return errStop
		}
		files = append(files, p)
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return files, more, err
}
