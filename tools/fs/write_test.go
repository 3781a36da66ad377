package fs

import (
	"context"
	"encoding/json"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// read returns the content of the file name under dir.
func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTemp fails the test if a temporary file of replace is left under dir.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".ptk-tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func TestWriteFile(t *testing.T) {
	dir := fixture(t)
	if err := os.Chmod(filepath.Join(dir, "go.mod"), 0o600); err != nil {
		t.Fatal(err)
	}
	symlink(t, ".git", filepath.Join(dir, "gitlink"))
	w := open(t, dir)
	runCases(t, w, "write_file", []toolCase{
		{name: "nested", args: args{"path": "docs/deep/er/x.md", "content": "# x\n\ntext\n"},
			want: "Created docs/deep/er/x.md (3 lines, 10 bytes)"},
		{name: "replace", args: args{"path": "go.mod", "content": "module example.com/demo\n\ngo 1.26\n\nrequire x v1\n"},
			want: "Replaced go.mod (5 lines, 47 bytes; was 3 lines)"},
		{name: "no final newline", args: args{"path": "one.txt", "content": "one"},
			want: "Created one.txt (1 line, 3 bytes)"},
		{name: "empty", args: args{"path": "empty.txt", "content": ""},
			want: "Replaced empty.txt (0 lines, 0 bytes; was 0 lines)"},
		{name: "absolute inside", args: args{"path": filepath.Join(dir, "abs.txt"), "content": "a\n"},
			want: "Created abs.txt (1 line, 2 bytes)"},
		{name: "through a link to a directory", args: args{"path": "linkdir/new.go", "content": "package internal\n"},
			want: "Created linkdir/new.go (1 line, 17 bytes)"},
		{name: "not git", args: args{"path": ".github/workflows/ci.yml", "content": "on: push\n"},
			want: "Created .github/workflows/ci.yml (1 line, 9 bytes)"},
		{name: "symbolic link", args: args{"path": "link.go", "content": "x"}, wantErr: true,
			want: "link.go is a symbolic link to main.go; write_file does not replace links: write the link's target instead"},
		{name: "directory", args: args{"path": "internal", "content": "x"}, wantErr: true,
			want: "internal is a directory; name a file"},
		{name: "trailing slash", args: args{"path": "newdir/", "content": "x"}, wantErr: true,
			want: "newdir/ names a directory; name a file"},
		{name: "root", args: args{"path": ".", "content": "x"}, wantErr: true, want: ". names a directory; name a file"},
		{name: "under a file", args: args{"path": "go.mod/x", "content": "x"}, wantErr: true,
			want: "cannot write go.mod/x: a part of its path is a file, not a directory"},
		{name: "no path", args: args{"path": "", "content": "x"}, wantErr: true, want: "path is required"},
		{name: "missing path", args: args{"content": "x"}, wantErr: true, want: `invalid arguments: missing required argument "path" (at /path)`},
		{name: "too big", args: args{"path": "big.bin", "content": strings.Repeat("x", maxWrite+1)}, wantErr: true,
			want: "content is 10485761 bytes; write_file writes at most 10 MB"},
	})
	for name, want := range map[string]string{
		"docs/deep/er/x.md":        "# x\n\ntext\n",
		"go.mod":                   "module example.com/demo\n\ngo 1.26\n\nrequire x v1\n",
		"one.txt":                  "one",
		"empty.txt":                "",
		"internal/new.go":          "package internal\n",
		".github/workflows/ci.yml": "on: push\n",
		"main.go":                  "package main\n\nimport \"example.com/demo/internal/server\"\n\nfunc main() {\n\tserver.Run()\n}\n",
	} {
		if got := read(t, dir, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]iofs.FileMode{"go.mod": 0o600, "one.txt": 0o644, "docs/deep": 0o755 | iofs.ModeDir} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		// New files and directories are made less the umask, go.mod kept exactly.
		if got := fi.Mode(); got != want && (name == "go.mod" || got&^0o022 != want&^0o022) {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode(), want)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link.go")); err != nil || fi.Mode()&iofs.ModeSymlink == 0 {
		t.Errorf("link.go is no longer a link: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "big.bin")); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("big.bin: %v, want no file", err)
	}
	noTemp(t, dir)
}

func TestWriteGit(t *testing.T) {
	dir := fixture(t)
	symlink(t, ".git", filepath.Join(dir, "gitlink"))
	symlink(t, "../.git/hooks", filepath.Join(dir, "docs", "hooks"))
	w := open(t, dir)
	for _, p := range []string{".git/hooks/pre-commit", ".git/config", ".GIT/config", "sub/.git/hooks/x", ".Git",
		"gitlink/hooks/pre-commit", "docs/hooks/post-checkout", "docs/../.git/HEAD", filepath.Join(dir, ".git/config")} {
		for tool, a := range map[string]args{
			"write_file": {"path": p, "content": "#!/bin/sh\n"},
			"edit_file":  {"path": p, "old_string": "[core]", "new_string": "[x]"},
		} {
			res := run(t, w, tool, a)
			if !res.IsError || !strings.Contains(res.Content, "inside a .git directory") {
				t.Errorf("%s(%s) = %q, want a refusal", tool, p, res.Content)
			}
		}
	}
	if got := read(t, dir, ".git/config"); got != "[core]\n" {
		t.Errorf(".git/config = %q", got)
	}
	for _, p := range []string{".git/hooks", "sub/.git", ".Git"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("%s was created", p)
		}
	}
}

// TestReplaceFails provokes failures after the temporary file is made: the
// target stays as it was and no temporary file is left.
func TestReplaceFails(t *testing.T) {
	dir := fixture(t)
	w := open(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := w.target("go.mod", "write_file", false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := w.replace(ctx, d, []byte("new"), 0o644, true); !errors.Is(err, context.Canceled) {
		t.Errorf("replace with a canceled context: %v", err)
	}
	var f failure
	// target refuses a directory: make the dest by hand to see replace fail.
	internal := &dest{p: "internal", dir: d.dir, base: "internal"}
	if err := w.replace(context.Background(), internal, []byte("new"), 0o644, false); !errors.As(err, &f) || !strings.Contains(string(f), "internal") {
		t.Errorf("replace of a directory: %v", err)
	}
	if got := read(t, dir, "go.mod"); got != "module example.com/demo\n\ngo 1.26\n" {
		t.Errorf("go.mod = %q", got)
	}
	if fi, err := os.Stat(filepath.Join(dir, "internal", "server")); err != nil || !fi.IsDir() {
		t.Errorf("internal/server: %v", err)
	}
	res := run(t, w, "write_file", args{"path": "README.md/x", "content": "x"})
	if !res.IsError {
		t.Errorf("write under a file: %s", res.Content)
	}
	noTemp(t, dir)
}

func TestEditToolsCanceled(t *testing.T) {
	w := open(t, fixture(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tl := range w.EditTools() {
		_, err := tl.Run(ctx, json.RawMessage(`{"path": "go.mod", "content": "x", "old_string": "go", "new_string": "Go"}`))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v, want context.Canceled", tl.Info().Name, err)
		}
	}
}
