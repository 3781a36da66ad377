package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/tool"
)

// Limits on what one call reads and returns.
const (
	maxReadLines   = 2000     // lines read_file shows by default
	maxLineBytes   = 2000     // read_file cuts longer lines
	maxOutput      = 50 << 10 // bytes of text any tool returns
	maxListEntries = 1000     // entries list_dir shows
	maxGlobResults = 500      // paths glob shows
	maxGrepMatches = 200      // lines grep shows
	maxGrepLine    = 500      // grep cuts longer lines around the match
	maxGrepFile    = 64 << 20 // grep skips larger files
	maxIgnoreFile  = 1 << 20  // bytes read of an ignore file
	maxWrite       = 10 << 20 // bytes write_file writes and edit_file edits
	maxPath        = 4096     // bytes in a path to write (PATH_MAX on Linux)
	maxDiffLines   = 200      // lines of diff edit_file shows
)

// ErrClosed is the error a tool returns when its [Workspace] is closed.
var ErrClosed = errors.New("fs: workspace is closed")

// A Workspace is a directory tree that the tools read and write, opened as an
// [os.Root] so that no path, ".." or symbolic link leads out of it. A
// Workspace is safe for concurrent use; its writes run one at a time.
type Workspace struct {
	root   *os.Root
	dirs   []string // the workspace's absolute path, and its real path if that differs
	tools  []ptk.Tool
	edits  []ptk.Tool
	lock   chan struct{} // holds a token while a write or Close runs
	closed atomic.Bool

	cleaned map[dirID]time.Time // when a write last removed stale temporary files in a directory; under lock

	editor Editor // reads and writes files' text instead of the disk, when set

	protectedDirs []string   // WithProtected's folders, absolute
	protected     [][]string // those inside the workspace, as path components relative to it
}

// New opens the directory workspace for the tools, as an [os.Root]. Close
// the Workspace when it is no longer used.
func New(workspace string, opts ...Option) (*Workspace, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("fs: %w", err)
	}
	// "abs/." fails on anything but a directory without opening it: the
	// open of a FIFO would block.
	root, err := os.OpenRoot(abs + string(filepath.Separator) + ".")
	if err != nil {
		return nil, fmt.Errorf("fs: open workspace: %w", err)
	}
	w := &Workspace{root: root, dirs: []string{abs}, lock: make(chan struct{}, 1), cleaned: map[dirID]time.Time{}}
	for _, o := range opts {
		o(w)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		w.dirs = append(w.dirs, real)
	}
	w.protected = w.inside(w.protectedDirs)
	ro := []tool.Option{tool.ReadOnly(), tool.Cacheable()}
	w.tools = []ptk.Tool{
		w.guard(tool.New(readFileName, readFileDescription, results(w.readFile), ro...)),
		w.guard(tool.New(listDirName, listDirDescription, results(w.listDir), ro...)),
		w.guard(tool.New(globName, globDescription, results(w.glob), ro...)),
		w.guard(tool.New(grepName, grepDescription, results(w.grep), ro...)),
	}
	w.edits = []ptk.Tool{
		previewing(w.guard(tool.New(writeFileName, writeFileDescription, results(locked(w, w.writeFile)),
			tool.WithSubject(func(a writeArgs) tool.Subject { return tool.Subject{Path: a.Path} }))), w, w.previewWrite),
		previewing(w.guard(tool.New(editFileName, editFileDescription, results(locked(w, w.editFile)),
			tool.WithSubject(func(a editArgs) tool.Subject { return tool.Subject{Path: a.Path} }))), w, w.previewEdit),
	}
	return w, nil
}

// Close closes the workspace, after a write in progress ends; its tools then
// fail with [ErrClosed].
func (w *Workspace) Close() error {
	w.lock <- struct{}{}
	defer func() { <-w.lock }()
	if w.closed.Swap(true) {
		return nil
	}
	return w.root.Close()
}

// Tools returns the read-only tools, in order: read_file, list_dir, glob and
// grep. All are read-only and cacheable.
func (w *Workspace) Tools() []ptk.Tool { return slices.Clone(w.tools) }

// EditTools returns the tools that change files, in order: write_file and
// edit_file. They are neither read-only nor cacheable, so an agent asks
// approval before it runs them.
func (w *Workspace) EditTools() []ptk.Tool { return slices.Clone(w.edits) }

// Tool returns the tool with the given name, read-only or not.
func (w *Workspace) Tool(name string) (ptk.Tool, bool) {
	for _, t := range slices.Concat(w.tools, w.edits) {
		if t.Info().Name == name {
			return t, true
		}
	}
	return nil, false
}

// A failure is a problem the model can correct; the tool returns it as an
// error result.
type failure string

func (f failure) Error() string { return string(f) }

func failf(format string, args ...any) error { return failure(fmt.Sprintf(format, args...)) }

// guarded is a tool of a Workspace: a call fails with [ErrClosed] once the
// workspace is closed, and with the context's error once it has ended,
// before its arguments are looked at. It wraps the tool made by [tool.New],
// which [tool.As] and [tool.SubjectOf] find through Unwrap.
type guarded struct {
	t ptk.Tool
	w *Workspace
}

func (g guarded) Info() ptk.ToolInfo           { return g.t.Info() }
func (g guarded) Unwrap() ptk.Tool             { return g.t }
func (w *Workspace) guard(t ptk.Tool) ptk.Tool { return guarded{t, w} }

func (g guarded) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	if g.w.closed.Load() {
		return ptk.Result{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return ptk.Result{}, err
	}
	return g.t.Run(ctx, args)
}

// previewed is an edit tool of a Workspace: it says, before a call runs,
// what the call would change (tool.Previewer), worked out from the file as
// it is, as the call would.
type previewed struct {
	guarded
	preview func(context.Context, json.RawMessage) (string, error)
}

var _ tool.Previewer = previewed{}

func (p previewed) Preview(ctx context.Context, args json.RawMessage) (string, error) {
	return p.preview(ctx, args)
}

// previewing makes t, a guarded tool of w, a previewed one: preview reads
// the call's arguments as A.
func previewing[A any](t ptk.Tool, w *Workspace, preview func(context.Context, A) (string, error)) ptk.Tool {
	return previewed{t.(guarded), func(ctx context.Context, raw json.RawMessage) (string, error) {
		if w.closed.Load() {
			return "", ErrClosed
		}
		var a A
		if err := json.Unmarshal(raw, &a); err != nil {
			return "", fmt.Errorf("the arguments are not an object of the tool's parameters: %w", err)
		}
		return preview(ctx, a)
	}}
}

// results turns a tool's function into one for [tool.New]: its text is the
// result, a [failure] an error result, and any other error ends the run.
func results[A any](run func(context.Context, A) (string, error)) func(context.Context, A) (ptk.Result, error) {
	return func(ctx context.Context, a A) (ptk.Result, error) {
		out, err := run(ctx, a)
		var f failure
		switch {
		case err == nil:
			return ptk.Result{Content: out}, nil
		case errors.As(err, &f):
			return ptk.Result{Content: string(f), IsError: true}, nil
		case errors.Is(err, os.ErrClosed):
			return ptk.Result{}, ErrClosed
		}
		return ptk.Result{}, err
	}
}

// locked makes a function that changes files run one call at a time, so
// that two edits of one file do not lose one another, and never while Close
// runs. A call waiting for its turn gives up when its context ends; nothing
// done while the lock is held blocks (files are opened without blocking), so
// the turn always comes.
func locked[A any](w *Workspace, run func(context.Context, A) (string, error)) func(context.Context, A) (string, error) {
	return func(ctx context.Context, a A) (string, error) {
		select {
		case w.lock <- struct{}{}:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		defer func() { <-w.lock }()
		if w.closed.Load() {
			return "", ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return run(ctx, a)
	}
}

// resolve turns a path from the model into a clean slash path relative to the
// workspace root ("." for the root). It only checks the path's form, to give
// a clear message; the os.Root enforces confinement on every access.
func (w *Workspace) resolve(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", failure("path contains a NUL byte")
	}
	if p == "" {
		return ".", nil
	}
	rel := filepath.Clean(p)
	if filepath.IsAbs(rel) {
		abs := rel
		for _, dir := range w.dirs {
			if r, err := filepath.Rel(dir, abs); err == nil && filepath.IsLocal(r) {
				rel = r
				break
			}
		}
		if rel == abs {
			return "", failf("path escapes the workspace: %s is outside %s", short(p), w.dirs[0])
		}
	}
	if !filepath.IsLocal(rel) {
		return "", failf("path escapes the workspace: %s", short(p))
	}
	return filepath.ToSlash(rel), nil
}

// stat resolves a path from the model and stats what it names, through the
// root.
func (w *Workspace) stat(path string) (string, iofs.FileInfo, error) {
	p, err := w.resolve(path)
	if err != nil {
		return "", nil, err
	}
	fi, err := w.root.Stat(p)
	if err != nil {
		return "", nil, accessError(p, err)
	}
	return p, fi, nil
}

// accessError describes for the model why p could not be opened.
func accessError(p string, err error) error {
	p = short(p)
	switch {
	case errors.Is(err, os.ErrClosed):
		return ErrClosed
	case errors.Is(err, iofs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return failf("no such file or directory: %s", p)
	case errors.Is(err, iofs.ErrPermission):
		return failf("permission denied: %s", p)
	case errors.Is(err, syscall.ELOOP):
		return failf("too many levels of symbolic links: %s", p)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return failf("file name too long: %s", p)
	}
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		// os.Root's error for a path that leads out of it is not exported.
		if strings.Contains(pe.Err.Error(), "escapes") {
			return failf("path escapes the workspace: %s (a symbolic link on the way leads outside it)", p)
		}
		err = pe.Err
	}
	return failf("cannot open %s: %v", p, err)
}

// short returns a path as it may be quoted in a message: long paths are cut.
func short(p string) string {
	if len(p) <= 200 {
		return p
	}
	return strings.ToValidUTF8(p[:200], "") + "…"
}

// printable returns a name as it may be shown on one line of output.
func printable(name string) string {
	if strings.ContainsFunc(name, unicode.IsControl) || !utf8.ValidString(name) {
		return strconv.Quote(name)
	}
	return name
}

// count says "1 entry" or "2 entries".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
