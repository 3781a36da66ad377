package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// buffers is an Editor in memory: the user's unsaved buffers, over the disk.
type buffers struct {
	mu     sync.Mutex
	disk   string // the workspace, to read what has no buffer
	open   map[string]string
	asked  []string // every path the tools asked for, read or written
	broken bool
}

func (b *buffers) ReadTextFile(_ context.Context, path string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, path)
	if b.broken {
		return "", errors.New("the editor is gone")
	}
	if text, ok := b.open[path]; ok {
		return text, nil
	}
	data, err := os.ReadFile(path)
	return string(data), err
}

func (b *buffers) WriteTextFile(_ context.Context, path, content string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, path)
	if b.broken {
		return errors.New("the editor is gone")
	}
	b.open[path] = content
	return nil
}

func TestEditor(t *testing.T) {
	dir := fixture(t)
	ed := &buffers{disk: dir, open: map[string]string{
		// The user changed main.go in the editor and has not saved it.
		filepath.Join(dir, "main.go"): "package main\n\nfunc main() {\n\tunsaved()\n}\n",
	}}
	w, err := New(dir, WithEditor(ed))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	disk := func(name string) string {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		return string(data)
	}
	onDisk := disk("main.go")

	res := run(t, w, "read_file", args{"path": "main.go"})
	if res.IsError || !strings.Contains(res.Content, "4\t\tunsaved()") {
		t.Errorf("read_file does not see the unsaved buffer:\n%s", res.Content)
	}
	res = run(t, w, "edit_file", args{"path": "main.go", "old_string": "unsaved()", "new_string": "saved()"})
	if res.IsError || !strings.Contains(res.Content, "-\tunsaved()\n+\tsaved()") {
		t.Errorf("edit_file of the buffer:\n%s", res.Content)
	}
	if got := ed.open[filepath.Join(dir, "main.go")]; got != "package main\n\nfunc main() {\n\tsaved()\n}\n" {
		t.Errorf("the buffer after edit_file = %q", got)
	}
	res = run(t, w, "write_file", args{"path": "notes/new.md", "content": "# new\n"})
	if res.IsError || ed.open[filepath.Join(dir, "notes/new.md")] != "# new\n" {
		t.Errorf("write_file through the editor: %s; buffers %v", res.Content, ed.open)
	}
	res = run(t, w, "write_file", args{"path": "README.md", "content": "# demo\n"})
	if res.IsError || !strings.Contains(res.Content, "was 3 lines") {
		t.Errorf("write_file over a file: %s", res.Content)
	}
	if disk("main.go") != onDisk || disk("README.md") != "# demo\n\nA small service.\n" || fileThere(filepath.Join(dir, "notes/new.md")) {
		t.Errorf("the disk changed: main.go %q, README.md %q", disk("main.go"), disk("README.md"))
	}
	// A binary buffer is refused as a binary file is.
	ed.open[filepath.Join(dir, "go.mod")] = "module x\x00"
	if res := run(t, w, "read_file", args{"path": "go.mod"}); !res.IsError || !strings.Contains(res.Content, "binary") {
		t.Errorf("a binary buffer: %+v", res)
	}

	// What the workspace refuses never reaches the editor.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret\n"), 0o644)
	symlink(t, outside, filepath.Join(dir, "out.txt"))
	asked := len(ed.asked)
	for _, c := range []struct{ tool, path string }{
		{"read_file", "../secret.txt"},
		{"read_file", outside},
		{"read_file", "out.txt"}, // a link that leads out
		{"edit_file", "out.txt"},
		{"write_file", "out.txt"},
		{"write_file", ".git/hooks/pre-commit"},
		{"write_file", "linkdir/../../escape.txt"},
		{"edit_file", ".git/config"},
		{"read_file", "internal"},
	} {
		a := args{"path": c.path, "content": "x", "old_string": "a", "new_string": "b"}
		if c.tool == "read_file" {
			a = args{"path": c.path}
		}
		if res := run(t, w, c.tool, a); !res.IsError {
			t.Errorf("%s %s: not refused: %s", c.tool, c.path, res.Content)
		}
	}
	if len(ed.asked) != asked {
		t.Errorf("the editor was asked for %v", ed.asked[asked:])
	}

	// An editor that fails is an error result the model reads.
	ed.broken = true
	if res := run(t, w, "read_file", args{"path": "go.mod"}); !res.IsError || !strings.Contains(res.Content, "the editor could not read go.mod: the editor is gone") {
		t.Errorf("a failing editor: %+v", res)
	}
	if res := run(t, w, "write_file", args{"path": "go.mod", "content": "x"}); !res.IsError || !strings.Contains(res.Content, "could not") {
		t.Errorf("a failing editor: %+v", res)
	}
}

func fileThere(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestText(t *testing.T) {
	dir := fixture(t)
	w := open(t, dir)
	ctx := context.Background()
	if got, err := w.Text(ctx, "go.mod"); err != nil || got != "module example.com/demo\n\ngo 1.26\n" {
		t.Errorf("Text(go.mod) = %q, %v", got, err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret\n"), 0o644)
	symlink(t, outside, filepath.Join(dir, "out.txt"))
	for _, p := range []string{"../x", outside, "out.txt", "internal", "assets/logo.png", "nope"} {
		if got, err := w.Text(ctx, p); err == nil {
			t.Errorf("Text(%q) = %q", p, got)
		}
	}
	ed := &buffers{open: map[string]string{filepath.Join(dir, "go.mod"): "module unsaved\n"}}
	we, err := New(dir, WithEditor(ed))
	if err != nil {
		t.Fatal(err)
	}
	defer we.Close()
	if got, err := we.Text(ctx, "go.mod"); err != nil || got != "module unsaved\n" {
		t.Errorf("Text through the editor = %q, %v", got, err)
	}
}
