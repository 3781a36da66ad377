package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// Every file the tools read is opened without blocking and checked on the
// opened descriptor: open(2) of a FIFO blocks until the other end opens it,
// deaf to any context, and a regular file can be swapped for a FIFO between
// a check by name and the open. With O_NONBLOCK the open returns at once
// (a socket fails with ENXIO), fstat says what was opened, and anything but
// a regular file or a directory is refused before a byte is read.
const (
	openFileFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	openDirFlags  = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_DIRECTORY
)

// errNotRegular is the error of openRegular for what is not a regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens the regular file name under r for reading. It never
// blocks on a FIFO or a device, and fails with errNotRegular for anything but
// a regular file; it returns what fstat says of the file it opened.
func openRegular(r *os.Root, name string) (*os.File, iofs.FileInfo, error) {
	f, err := r.OpenFile(name, openFileFlags, 0)
	switch {
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ENODEV), errors.Is(err, syscall.EOPNOTSUPP):
		return nil, nil, errNotRegular // a socket, or a device with no driver
	case err != nil:
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, nil, syscall.EISDIR
		}
		return nil, nil, errNotRegular
	}
	return f, fi, nil
}

// readDir returns the entries of the directory name under r, sorted by
// name, as [iofs.ReadDir] does. Opening with O_DIRECTORY fails on anything
// else without opening it.
func readDir(r *os.Root, name string) ([]iofs.DirEntry, error) {
	f, err := r.OpenFile(name, openDirFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b iofs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// kind names what a non-regular file is, for messages.
func kind(m iofs.FileMode) string {
	switch {
	case m&iofs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&iofs.ModeSocket != 0:
		return "a socket"
	case m&iofs.ModeCharDevice != 0:
		return "a character device"
	case m&iofs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// notRegular is the failure for the special file p, which fi describes
// (nil if unknown).
func notRegular(p string, fi iofs.FileInfo) error {
	what := "not a regular file"
	if fi != nil {
		what = kind(fi.Mode())
	}
	if what != "not a regular file" {
		what = "not a regular file but " + what
	}
	return failf("%s is %s; the file tools read and write regular files only", short(p), what)
}

// Temporary files of an atomic write are named ".NAME.ptk-tmp-XXXXXXXX" in
// the target's directory. Listings and searches never show them, and a write
// removes those left in its directory by a process that died mid-write.
var tempName = regexp.MustCompile(`^\..*\.ptk-tmp-[0-9a-f]{8}$`)

// isTemp reports whether name is the name of a temporary file of a write.
func isTemp(name string) bool { return tempName.MatchString(name) }

// tempFor returns a temporary name for a write of base, with n as suffix.
func tempFor(base string, n uint32) string {
	if len(base) > 100 {
		base = base[:100] // leave room for the suffix within NAME_MAX
	}
	return fmt.Sprintf(".%s.ptk-tmp-%08x", base, n)
}
