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
	"strings"
	"syscall"

	"github.com/ptkit/ptk"
)

var writeFileInfo = ptk.ToolInfo{
	Name: "write_file",
	Description: `Create a file in the workspace, or replace all of an existing file's content. ` +
		`Missing parent directories are created. The file is written whole or not at all (to a temporary file, then renamed over the old one), ` +
		`and an existing file keeps its permissions. To change part of a file, use edit_file instead: it needs only the part that changes. ` +
		`content is written exactly as given, at most 10 MB; end a text file with a newline. ` +
		`A symbolic link is not replaced (write its target instead), and nothing is written inside a .git directory. ` +
		`The path is relative to the workspace root.`,
	Parameters: []byte(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file to write, relative to the workspace root."},
    "content": {"type": "string", "description": "The file's whole new content."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`),
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (w *Workspace) writeFile(ctx context.Context, a writeArgs) (string, error) {
	if len(a.Content) > maxWrite {
		return "", failf("content is %d bytes; write_file writes at most 10 MB", len(a.Content))
	}
	p, fi, err := w.target(a.Path, "write_file")
	if err != nil {
		return "", err
	}
	perm, was := iofs.FileMode(0o644), ""
	if fi != nil {
		perm = fi.Mode().Perm()
		if n, err := w.countLines(p, fi); err == nil {
			was = "; was " + count(n, "line", "lines")
		}
	}
	if dir := path.Dir(p); dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return "", writeError(dir, err)
		}
	}
	if err := w.replace(ctx, p, []byte(a.Content), perm, fi != nil); err != nil {
		return "", err
	}
	size := fmt.Sprintf("%s, %s", count(lines(a.Content), "line", "lines"), count(len(a.Content), "byte", "bytes"))
	if fi == nil {
		return fmt.Sprintf("Created %s (%s)", printable(p), size), nil
	}
	return fmt.Sprintf("Replaced %s (%s%s)", printable(p), size, was), nil
}

// target resolves a path the model wants tool to write and checks that it
// may: it is not the root, not inside .git, and names a regular file or
// nothing. It returns the path and what is there now, nil for nothing.
func (w *Workspace) target(name, tool string) (string, iofs.FileInfo, error) {
	if name == "" {
		return "", nil, failure("path is required")
	}
	p, err := w.resolve(name)
	if err != nil {
		return "", nil, err
	}
	if p == "." || strings.HasSuffix(name, "/") {
		return "", nil, failf("%s names a directory; name a file", short(name))
	}
	if len(p) >= maxPath {
		return "", nil, failf("path is too long: %d bytes, the limit is %d", len(p), maxPath-1)
	}
	if w.inGit(p) {
		return "", nil, failf("refusing to write %s: it is inside a .git directory, where hooks and config run code outside any control; use git to change the repository", short(p))
	}
	fi, err := w.root.Lstat(p)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return p, nil, nil
	case err != nil:
		return "", nil, writeError(p, err)
	case fi.Mode()&iofs.ModeSymlink != 0:
		to, _ := w.root.Readlink(p)
		return "", nil, failf("%s is a symbolic link to %s; %s does not replace links: write the link's target instead", short(p), printable(short(to)), tool)
	case fi.IsDir():
		return "", nil, failf("%s is a directory; name a file", short(p))
	case !fi.Mode().IsRegular():
		return "", nil, notRegular(p, fi)
	}
	return p, fi, nil
}

// inGit reports whether p, or where the symbolic links on its way lead, is
// inside a directory named .git, in any case. Links are read through the
// root; those the root would refuse to follow are left to it.
func (w *Workspace) inGit(p string) bool {
	var done []string
	todo := strings.Split(p, "/")
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			if len(done) > 0 {
				done = done[:len(done)-1]
			}
			continue
		case strings.EqualFold(c, ".git"):
			return true
		}
		done = append(done, c)
		if len(todo) == 0 {
			break // a link at the end is refused, not followed
		}
		q := path.Join(done...)
		fi, err := w.root.Lstat(q)
		if err != nil || fi.Mode()&iofs.ModeSymlink == 0 {
			continue
		}
		to, err := w.root.Readlink(q)
		if links++; err != nil || links > 40 || path.IsAbs(to) {
			continue
		}
		done = done[:len(done)-1]
		todo = append(strings.Split(to, "/"), todo...)
	}
	return false
}

// countLines counts the lines of the regular file p, which fi describes.
func (w *Workspace) countLines(p string, fi iofs.FileInfo) (int, error) {
	f, err := w.openSame(p, fi)
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
			return 0, failf("reading %s: %v", short(p), err)
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// openSame opens the file p for reading and checks that it is still the file
// fi describes, not something put in its place since; it never blocks on a
// FIFO put there.
func (w *Workspace) openSame(p string, fi iofs.FileInfo) (*os.File, error) {
	f, now, err := openRegular(w.root, p)
	switch {
	case errors.Is(err, errNotRegular):
		return nil, notRegular(p, nil)
	case err != nil:
		return nil, accessError(p, err)
	case !os.SameFile(fi, now):
		f.Close()
		return nil, failf("%s changed while it was being read; try again", short(p))
	}
	return f, nil
}

// replace writes data to the file p, atomically: to a new temporary file in
// the same directory, which is then renamed over p, so that p is never seen
// half-written and a symbolic link put at p is replaced, not followed. On a
// failure the temporary file is removed. The new file has the permission
// bits perm, exactly if exact is set, else less the umask.
func (w *Workspace) replace(ctx context.Context, p string, data []byte, perm iofs.FileMode, exact bool) (err error) {
	dir, base := path.Split(p)
	if len(base) > 100 {
		base = base[:100] // leave room for the suffix within NAME_MAX
	}
	var f *os.File
	var tmp string
	for range 10 {
		tmp = fmt.Sprintf("%s.%s.ptk-tmp-%08x", dir, base, rand.Uint32())
		f, err = w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, iofs.ErrExist) {
			break
		}
	}
	if err != nil {
		return writeError(p, err)
	}
	defer func() {
		if err != nil {
			w.root.Remove(tmp)
		}
	}()
	if err = writeSync(f, data, perm, exact); err != nil {
		return writeError(p, err)
	}
	if err = ctx.Err(); err != nil {
		return err
	}
	if err = w.root.Rename(tmp, p); err != nil {
		return writeError(p, err)
	}
	// Make the rename itself durable; a failure here loses nothing yet.
	if d, err := w.root.OpenFile(path.Clean(dir), openDirFlags, 0); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
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
