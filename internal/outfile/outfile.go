// Package outfile writes the files a user names on ptk's command line
// (--report, --out, --output, --record) in a folder a model may have
// written to. A model with a write tool or bash can plant a symbolic link
// where such a file will go (report.json -> ~/.bashrc); a plain
// os.WriteFile would follow it and overwrite the link's target. Here:
//
//   - [WriteFile] and [Create] write a temporary file beside the path and
//     rename it over the path when the content is whole, so a link there is
//     replaced, never followed, and an interrupted write leaves the old
//     file as it was;
//   - [OpenAppend] refuses a symbolic link and anything but a regular file
//     (a FIFO would block the command for ever).
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotRegular is the error of [OpenAppend] for a path that is a symbolic
// link, a FIFO, a device or a folder.
var ErrNotRegular = errors.New("not a regular file")

// WriteFile writes data to path whole or not at all, as [Create] does.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// A File is a file being written at a path: its content goes to a
// temporary file beside the path, which [File.Commit] renames over it.
type File struct {
	*os.File
	path string
	perm fs.FileMode
	done bool
}

// Create starts a file at path. Write it, then [File.Commit]; [File.Close]
// without a commit removes what was written and leaves path as it was.
// The file gets perm, or the mode of the regular file already at path.
func Create(path string, perm fs.FileMode) (*File, error) {
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode().IsRegular():
			perm = fi.Mode().Perm()
		case fi.Mode()&fs.ModeSymlink != 0:
			// replaced by the rename, its target untouched
		default:
			return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	return &File{File: tmp, path: path, perm: perm}, nil
}

// Commit puts what was written at the path: synced, given its mode, then
// renamed over whatever was there.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: %w", f.path, os.ErrClosed)
	}
	f.done = true
	err := f.File.Chmod(f.perm)
	if err == nil {
		err = f.File.Sync()
	}
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.File.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.File.Name())
	}
	return err
}

// Close discards the file unless it was committed.
func (f *File) Close() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.File.Close()
	os.Remove(f.File.Name())
	return err
}

// OpenAppend opens path for appending, creating it (mode 0644) if there is
// nothing there. A symbolic link, a FIFO, a device or a folder at path is
// refused with [ErrNotRegular]: the link is not followed, even one swapped
// in after the check where the system can refuse it (O_NOFOLLOW).
func OpenAppend(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s); name the file itself", path, ErrNotRegular, fi.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|oNoFollow, 0o644)
	if err != nil {
		if isLoop(err) {
			return nil, fmt.Errorf("%s: %w (symbolic link); name the file itself", path, ErrNotRegular)
		}
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	return f, nil
}
