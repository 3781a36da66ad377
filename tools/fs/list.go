package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"strings"
	"syscall"
)

// The list_dir tool's name and description; its parameters are listArgs's
// fields.
const (
	listDirName        = "list_dir"
	listDirDescription = `List a directory of the workspace, one entry per line, sorted by name. ` +
		`Directories end with "/"; symbolic links are shown as "name@ -> target", named pipes as "name|" and sockets as "name=". ` +
		`Entries ignored by .gitignore or .ptkignore files, and .git and node_modules, are left out and counted at the end; ` +
		`name an ignored directory in path to list it anyway. At most 1000 entries are shown. ` +
		`The path is relative to the workspace root, which is the default.`
)

type listArgs struct {
	Path string `json:"path,omitempty" jsonschema:"The directory, relative to the workspace root. Default \".\", the root."`
}

func (w *Workspace) listDir(ctx context.Context, a listArgs) (string, error) {
	p, err := w.dir(a.Path)
	if err != nil {
		return "", err
	}
	entries, err := readDir(w.root, p)
	if err != nil && len(entries) == 0 {
		if errors.Is(err, syscall.ENOTDIR) {
			return "", failf("%s is a file, not a directory; use read_file to read it", p)
		}
		return "", accessError(p, err)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	ig := newIgnorer(w.root, p, true)
	var b strings.Builder
	shown, hidden := 0, 0
	for _, d := range entries {
		if isTemp(d.Name()) {
			continue // a write in progress, or left by one that died
		}
		q := path.Join(p, d.Name())
		if ig.ignored(q, d.IsDir()) {
			hidden++
			continue
		}
		if shown++; shown > maxListEntries {
			continue
		}
		b.WriteString(printable(d.Name()))
		switch {
		case d.IsDir():
			b.WriteString("/")
		case d.Type()&iofs.ModeSymlink != 0:
			b.WriteString("@")
			if target, err := w.root.Readlink(q); err == nil {
				b.WriteString(" -> " + printable(target))
			}
		case d.Type()&iofs.ModeNamedPipe != 0:
			b.WriteString("|")
		case d.Type()&iofs.ModeSocket != 0:
			b.WriteString("=")
		}
		b.WriteString("\n")
	}
	if shown == 0 && hidden == 0 {
		b.WriteString("(empty directory)\n")
	}
	if more := shown - maxListEntries; more > 0 {
		fmt.Fprintf(&b, "(%s not shown)\n", count(more, "more entry", "more entries"))
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "(%s hidden by ignore rules)\n", count(hidden, "entry", "entries"))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
