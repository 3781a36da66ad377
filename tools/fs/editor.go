package fs

import (
	"bytes"
	"context"
	"io"
	iofs "io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// An Editor holds the files a user is editing, and reads and writes their
// text for the tools: reading through it sees the changes the user has not
// saved, and writing through it changes the editor's buffers, which the user
// sees and can undo. ACP's fs/read_text_file and fs/write_text_file are one
// (package acp). Paths are absolute, inside the workspace.
type Editor interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// An Option configures a [Workspace].
type Option func(*Workspace)

// WithEditor makes read_file, edit_file and write_file read and write the
// text of files through e instead of the disk. Everything else stays as it
// is: a path is resolved and checked through the workspace's [os.Root]
// first (so no path that leads out of the workspace, into .git or through a
// symbolic link at its end ever reaches e), the sizes are bounded the same
// way, and list_dir, glob and grep look at the disk.
func WithEditor(e Editor) Option { return func(w *Workspace) { w.editor = e } }

// WithProtected makes the file tools refuse to write inside the folders
// dirs (absolute paths) that lie inside the workspace, whether or not they
// exist yet, by whatever path or symbolic link a call names them: ptk's
// own configuration (policy.json, mcp.json, models.json), its checkpoints'
// shadow repositories and its trace store, which a model must not change
// when the workspace holds them (ptk run in the home directory).
func WithProtected(dirs ...string) Option {
	return func(w *Workspace) { w.protectedDirs = append(w.protectedDirs, dirs...) }
}

// inside returns the folders of dirs that lie strictly inside the
// workspace, by their path or their real path, as path components relative
// to it. A folder that is the workspace or holds it is not protected: the
// user chose to work there.
func (w *Workspace) inside(dirs []string) [][]string {
	var out [][]string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		cands := []string{filepath.Clean(d)}
		if real, err := filepath.EvalSymlinks(d); err == nil && real != cands[0] {
			cands = append(cands, real)
		}
		for _, c := range cands {
			for _, ws := range w.dirs {
				rel, err := filepath.Rel(ws, c)
				if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
					continue
				}
				out = append(out, strings.Split(filepath.ToSlash(rel), "/"))
			}
		}
	}
	return out
}

// protectedIn reports whether the path of components comps, relative to
// the workspace, is one of the protected folders or inside one.
func (w *Workspace) protectedIn(comps []string) bool {
	for _, p := range w.protected {
		if len(comps) >= len(p) && slices.Equal(comps[:len(p)], p) {
			return true
		}
	}
	return false
}

// protectedRefusal is the failure for a write of p inside a folder of
// ptk's own.
func protectedRefusal(p string) error {
	return failf("refusing to write %s: it is inside ptk's own folder (its configuration, checkpoints or traces), which a model may not change", short(p))
}

// abs returns the absolute path of p, a clean slash path relative to the
// workspace root, for an Editor.
func (w *Workspace) abs(p string) string { return filepath.Join(w.dirs[0], filepath.FromSlash(p)) }

// editorRead reads the text of p through the editor.
func (w *Workspace) editorRead(ctx context.Context, p string) (string, error) {
	text, err := w.editor.ReadTextFile(ctx, w.abs(p))
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", failf("the editor could not read %s: %v", short(p), err)
	}
	return text, nil
}

// readDest reads the file d names, through the editor when there is one,
// else from the disk through d's directory handle: at most maxWrite+1 bytes.
func (w *Workspace) readDest(ctx context.Context, d *dest) ([]byte, error) {
	if w.editor != nil {
		text, err := w.editorRead(ctx, d.p)
		return []byte(text), err
	}
	f, err := d.open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxWrite+1))
	if err != nil {
		return nil, failf("reading %s: %v", short(d.p), err)
	}
	return data, nil
}

// store writes data as the whole content of the file d names: through the
// editor when there is one, else atomically on the disk (replace).
func (w *Workspace) store(ctx context.Context, d *dest, data []byte, perm iofs.FileMode, exact bool) error {
	if w.editor == nil {
		return w.replace(ctx, d, data, perm, exact)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := w.editor.WriteTextFile(ctx, w.abs(d.p), string(data)); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return failf("the editor could not write %s: %v", short(d.p), err)
	}
	return nil
}

// Text returns the whole text of a file of the workspace, for a front end
// to show (the two sides of an edit's diff, say): through the editor when
// there is one, else from the disk through the workspace's root, with the
// tools' checks. A directory, a file over 10 MB and a binary file are
// errors.
func (w *Workspace) Text(ctx context.Context, path string) (string, error) {
	if w.closed.Load() {
		return "", ErrClosed
	}
	p, fi, err := w.stat(path)
	switch {
	case err != nil:
		return "", err
	case fi.IsDir():
		return "", failf("%s is a directory", short(p))
	case fi.Size() > maxWrite:
		return "", failf("%s is over 10 MB", short(p))
	}
	var data []byte
	if w.editor != nil {
		text, err := w.editorRead(ctx, p)
		if err != nil {
			return "", err
		}
		data = []byte(text)
	} else {
		f, _, err := openRegular(w.root, p)
		if err != nil {
			return "", accessError(p, err)
		}
		defer f.Close()
		if data, err = io.ReadAll(io.LimitReader(f, maxWrite+1)); err != nil {
			return "", failf("reading %s: %v", short(p), err)
		}
	}
	if len(data) > maxWrite {
		return "", failf("%s is over 10 MB", short(p))
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", failf("%s is a binary file", short(p))
	}
	return string(data), nil
}
