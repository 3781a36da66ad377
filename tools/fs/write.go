package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/aymanbagabas/go-udiff"
)

// The write_file tool's name and description; its parameters are writeArgs's
// fields.
const (
	writeFileName        = "write_file"
	writeFileDescription = `Create a file in the workspace, or replace all of an existing file's content. ` +
		`Missing parent directories are created. The file is written whole or not at all (to a temporary file, then renamed over the old one), ` +
		`and an existing file keeps its permissions. To change part of a file, use edit_file instead: it needs only the part that changes. ` +
		`content is written exactly as given, at most 10 MB; end a text file with a newline. ` +
		`A symbolic link is not replaced (write its target instead), and nothing is written inside a .git directory. ` +
		`The path is relative to the workspace root.`
)

type writeArgs struct {
	Path    string `json:"path" jsonschema:"The file to write, relative to the workspace root."`
	Content string `json:"content" jsonschema:"The file's whole new content."`
}

func (w *Workspace) writeFile(ctx context.Context, a writeArgs) (string, error) {
	if len(a.Content) > maxWrite {
		return "", failf("content is %d bytes; write_file writes at most 10 MB", len(a.Content))
	}
	d, err := w.target(a.Path, "write_file", true)
	if err != nil {
		return "", err
	}
	defer d.Close()
	perm, was := iofs.FileMode(0o644), ""
	if d.fi != nil {
		perm = d.fi.Mode().Perm()
		n, err := d.countLines()
		if w.editor != nil {
			var text string
			if text, err = w.editorRead(ctx, d.p); err == nil {
				n = lines(text)
			}
		}
		if err == nil {
			was = "; was " + count(n, "line", "lines")
		}
	}
	if err := w.store(ctx, d, []byte(a.Content), perm, d.fi != nil); err != nil {
		return "", err
	}
	p := d.p
	size := fmt.Sprintf("%s, %s", count(lines(a.Content), "line", "lines"), count(len(a.Content), "byte", "bytes"))
	if d.fi == nil {
		return fmt.Sprintf("Created %s (%s)", printable(p), size), nil
	}
	return fmt.Sprintf("Replaced %s (%s%s)", printable(p), size, was), nil
}

// previewWrite is the diff a write_file call would make, without writing
// and without making a directory: the file's text as it is now against
// content, or all of content for a new file.
func (w *Workspace) previewWrite(ctx context.Context, a writeArgs) (string, error) {
	if len(a.Content) > maxWrite {
		return "", failf("content is %d bytes; write_file writes at most 10 MB", len(a.Content))
	}
	d, err := w.target(a.Path, "write_file", false)
	if err != nil {
		return "", err
	}
	defer d.Close()
	from, old := "/dev/null", ""
	if d.fi != nil {
		data, err := w.readDest(ctx, d)
		if err != nil {
			return "", err
		}
		if len(data) > maxWrite || bytes.IndexByte(data, 0) >= 0 {
			return fmt.Sprintf("replaces %s, a binary or large file of %s, with %s", printable(d.p),
				count(int(d.fi.Size()), "byte", "bytes"), count(lines(a.Content), "line", "lines")), nil
		}
		from, old = "a/"+d.p, string(data)
	}
	if d.fi != nil && old == a.Content {
		return fmt.Sprintf("no change: %s already holds this content", printable(d.p)), nil
	}
	return cutDiff(udiff.Unified(from, "b/"+d.p, old, a.Content)), nil
}

// cutDiff cuts a diff at maxDiffLines lines, and says so.
func cutDiff(d string) string {
	ls := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	if len(ls) > maxDiffLines {
		ls = append(ls[:maxDiffLines], fmt.Sprintf("(diff cut at %d lines)", maxDiffLines))
	}
	return strings.Join(ls, "\n")
}

// A dest is a file a tool is about to write: its path, and a handle on the
// directory that holds it, resolved once. Everything the write does (look
// at what is there, read it, make the temporary file, rename it over the
// target) goes through that handle, so the directory that was checked is
// the directory written, wherever the path's links point by then.
type dest struct {
	p    string        // the path, relative to the workspace root
	dir  *os.Root      // the directory that holds it; nil if it does not exist
	base string        // its name in dir
	fi   iofs.FileInfo // what is there now (a regular file), nil for nothing
}

// Close closes the directory handle.
func (d *dest) Close() {
	if d.dir != nil {
		d.dir.Close()
	}
}

// target resolves a path the model wants tool to write and checks that it
// may: it is not the root, not inside .git, and names a regular file or
// nothing. With create, missing parent directories are made.
func (w *Workspace) target(name, tool string, create bool) (*dest, error) {
	if name == "" {
		return nil, failure("path is required")
	}
	p, err := w.resolve(name)
	if err != nil {
		return nil, err
	}
	if p == "." || strings.HasSuffix(name, "/") {
		return nil, failf("%s names a directory; name a file", short(name))
	}
	if len(p) >= maxPath {
		return nil, failf("path is too long: %d bytes, the limit is %d", len(p), maxPath-1)
	}
	if slices.ContainsFunc(strings.Split(p, "/"), isGit) {
		return nil, gitRefusal(p)
	}
	if w.protectedIn(strings.Split(p, "/")) {
		return nil, protectedRefusal(p)
	}
	parent, base := path.Split(p)
	dir, err := w.openDir(p, parent, create)
	switch {
	case errors.Is(err, errNoDir):
		return &dest{p: p, base: base}, nil
	case err != nil:
		return nil, err
	}
	d := &dest{p: p, dir: dir, base: base}
	fi, err := dir.Lstat(base)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return d, nil
	case err != nil:
		d.Close()
		return nil, writeError(p, err)
	case fi.Mode()&iofs.ModeSymlink != 0:
		to, _ := dir.Readlink(base)
		d.Close()
		return nil, failf("%s is a symbolic link to %s; %s does not replace links: write the link's target instead", short(p), printable(short(to)), tool)
	case fi.IsDir():
		d.Close()
		return nil, failf("%s is a directory; name a file", short(p))
	case !fi.Mode().IsRegular():
		d.Close()
		return nil, notRegular(p, fi)
	}
	d.fi = fi
	return d, nil
}

// isGit reports whether a path component names a .git directory, in any
// case.
func isGit(c string) bool { return strings.EqualFold(c, ".git") }

// gitRefusal is the failure for a write of p inside a .git directory.
func gitRefusal(p string) error {
	return failf("refusing to write %s: it is inside a .git directory, where hooks and config run code outside any control; use git to change the repository", short(p))
}

// errNoDir is the error of openDir, without create, for a directory on the
// way that does not exist.
var errNoDir = errors.New("a directory on the way does not exist")

// maxLinks bounds the symbolic links followed on one path, as Linux does.
const maxLinks = 40

// openDir opens the directory dir of the workspace, for a write of p, and
// returns a handle on it. It follows the path one component at a time,
// through handles, and reads symbolic links itself: each step opens one name
// in the directory opened before and checks, by identity, that the handle it
// got is that name's directory, not where a link put in its place since
// leads. A component named .git, in the path or in a link's target, is
// refused, and so is a link that leads out of the workspace; so no race with
// the path's links can make the handle a directory inside .git or outside
// the workspace. With create, missing directories are made, each through the
// handle of the directory checked before it.
func (w *Workspace) openDir(p, dir string, create bool) (_ *os.Root, err error) {
	top, err := w.root.OpenRoot(".")
	if err != nil {
		return nil, accessError(p, err)
	}
	stack := []*os.Root{top} // the directories on the way, the root first
	var real []string        // their names, the path they make from the root
	defer func() {
		for i, r := range stack {
			if err != nil || i < len(stack)-1 {
				r.Close()
			}
		}
	}()
	escapes := failf("path escapes the workspace: %s (a symbolic link on the way leads outside it)", short(p))
	todo := strings.Split(dir, "/")
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			if len(stack) == 1 {
				return nil, escapes
			}
			stack[len(stack)-1].Close()
			stack = stack[:len(stack)-1]
			real = real[:len(real)-1]
			continue
		case isGit(c):
			return nil, gitRefusal(p)
		}
		// The path of the directories opened, through links too, is
		// checked before c is opened or made.
		if w.protectedIn(append(real, c)) {
			return nil, protectedRefusal(p)
		}
		next, link, err := w.step(p, stack[len(stack)-1], c, create)
		switch {
		case err != nil:
			return nil, err
		case next != nil:
			stack = append(stack, next)
			real = append(real, c)
			continue
		}
		if links++; links > maxLinks {
			return nil, failf("too many levels of symbolic links: %s", short(p))
		}
		if path.IsAbs(link) {
			return nil, escapes
		}
		todo = append(strings.Split(link, "/"), todo...)
	}
	return stack[len(stack)-1], nil
}

// step opens the directory named c in the directory top, for a write of p:
// it returns a handle on it, or the target of the symbolic link c is. With
// create, c is made if it is missing.
func (w *Workspace) step(p string, top *os.Root, c string, create bool) (*os.Root, string, error) {
	for range 3 {
		fi, err := top.Lstat(c)
		if errors.Is(err, iofs.ErrNotExist) {
			if !create {
				return nil, "", errNoDir
			}
			if err := top.Mkdir(c, 0o755); err != nil && !errors.Is(err, iofs.ErrExist) {
				return nil, "", writeError(p, err)
			}
			continue
		}
		switch {
		case err != nil:
			return nil, "", writeError(p, err)
		case fi.Mode()&iofs.ModeSymlink != 0:
			to, err := top.Readlink(c)
			if err != nil {
				return nil, "", writeError(p, err)
			}
			return nil, to, nil
		case !fi.IsDir():
			return nil, "", writeError(p, syscall.ENOTDIR)
		}
		// "c/." opens c as a directory (O_DIRECTORY: never a FIFO), then
		// itself as the handle. If c has become a link since, the handle
		// is not the directory Lstat sees, and the step is taken again.
		next, err := top.OpenRoot(c + "/.")
		if err != nil {
			if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, iofs.ErrNotExist) {
				continue
			}
			return nil, "", writeError(p, err)
		}
		got, err1 := next.Stat(".")
		now, err2 := top.Lstat(c)
		if err1 == nil && err2 == nil && now.IsDir() && os.SameFile(got, now) {
			return next, "", nil
		}
		next.Close()
	}
	return nil, "", failf("%s changed while it was being written; try again", short(p))
}

// countLines counts the lines of the file d names, which d.fi describes.
func (d *dest) countLines() (int, error) {
	f, err := d.open()
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, last, buf := 0, byte('\n'), make([]byte, 64<<10)
	for {
		k, err := f.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, failf("reading %s: %v", short(d.p), err)
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// open opens the file d names for reading and checks that it is still the
// file d.fi describes, not something put in its place since.
func (d *dest) open() (*os.File, error) {
	f, now, err := openRegular(d.dir, d.base)
	switch {
	case errors.Is(err, errNotRegular):
		return nil, notRegular(d.p, nil)
	case err != nil:
		return nil, accessError(d.p, err)
	case !os.SameFile(d.fi, now):
		f.Close()
		return nil, failf("%s changed while it was being read; try again", short(d.p))
	}
	return f, nil
}

// staleTemp is the age after which a temporary file of a write is taken for
// one left by a process that died mid-write: a write of 10 MB takes seconds,
// and the agent's tool timeouts are minutes.
const staleTemp = 15 * time.Minute

// replace writes data to the file d names, atomically: to a new temporary
// file in the same directory, which is then renamed over it, so that the
// file is never seen half-written and a symbolic link put in its place is
// replaced, not followed. On a failure the temporary file is removed. The
// new file has the permission bits perm, exactly if exact is set, else less
// the umask. Stale temporary files in the directory are removed first.
func (w *Workspace) replace(ctx context.Context, d *dest, data []byte, perm iofs.FileMode, exact bool) (err error) {
	w.removeStale(d.dir)
	var f *os.File
	var tmp string
	for range 10 {
		tmp = tempFor(d.base, rand.Uint32())
		f, err = d.dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, iofs.ErrExist) {
			break
		}
	}
	if err != nil {
		return writeError(d.p, err)
	}
	defer func() {
		if err != nil {
			d.dir.Remove(tmp)
		}
	}()
	if err = writeSync(f, data, perm, exact); err != nil {
		return writeError(d.p, err)
	}
	if err = ctx.Err(); err != nil {
		return err
	}
	if err = d.dir.Rename(tmp, d.base); err != nil {
		return writeError(d.p, err)
	}
	// Make the rename itself durable; a failure here loses nothing yet.
	if f, err := d.dir.OpenFile(".", openDirFlags, 0); err == nil {
		f.Sync()
		f.Close()
	}
	return nil
}

// A dirID identifies a directory.
type dirID struct{ dev, ino uint64 }

// removeStale removes, at most once a minute for each directory, the
// temporary files older than staleTemp from the directory dir. It runs under
// the write lock.
func (w *Workspace) removeStale(dir *os.Root) {
	fi, err := dir.Stat(".")
	if err != nil {
		return
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id := dirID{uint64(st.Dev), uint64(st.Ino)}
		if t, ok := w.cleaned[id]; ok && time.Since(t) < time.Minute {
			return
		}
		if len(w.cleaned) > 1000 {
			clear(w.cleaned)
		}
		w.cleaned[id] = time.Now()
	}
	f, err := dir.OpenFile(".", openDirFlags, 0)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, name := range names {
		if !isTemp(name) {
			continue
		}
		if fi, err := dir.Lstat(name); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleTemp {
			dir.Remove(name)
		}
	}
}

// writeSync writes data to f, sets its permission bits if exact, flushes it
// to the disk and closes it.
func writeSync(f *os.File, data []byte, perm iofs.FileMode, exact bool) error {
	_, err := f.Write(data)
	if err == nil && exact {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeError describes for the model why p could not be written.
func writeError(p string, err error) error {
	var pe *iofs.PathError
	switch {
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EEXIST):
		return failf("cannot write %s: a part of its path is a file, not a directory", short(p))
	case errors.Is(err, syscall.EISDIR):
		return failf("cannot write %s: it is a directory", short(p))
	case errors.Is(err, os.ErrClosed), errors.Is(err, iofs.ErrNotExist), errors.Is(err, iofs.ErrPermission),
		errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.ENAMETOOLONG):
		return accessError(p, err)
	case errors.As(err, &pe):
		if strings.Contains(pe.Err.Error(), "escapes") {
			return accessError(p, err)
		}
		err = pe.Err
	}
	return failf("cannot write %s: %v", short(p), err)
}

// lines counts the lines of s; a last line needs no newline.
func lines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}
